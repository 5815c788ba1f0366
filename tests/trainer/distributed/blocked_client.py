"""Test helper process: a client whose dequeue blocks on a FIFOQueue (shared_name "q") that lives on the ps.

Usage: python blocked_client.py CLUSTER_JSON MODE [TIMEOUT_MS]
- MODE "worker": a worker task of the cluster (its own server; the step reaches the ps as RunGraph, as a
  SyncReplicasOptimizer worker's token dequeue does);
- MODE "remote": a plain client of the ps's master (`Session("grpc://ps")`: the step is a RunStep there);
- MODE "via-worker": a plain client of worker 0's master (a RunStep there, which runs a RunGraph on the ps).
It first runs one enqueue and one dequeue (the step's partitions get registered; the queue is empty again),
prints "BLOCKING" and runs the dequeue (with TIMEOUT_MS as `operation_timeout_in_ms` when given), then
prints "GOT <value>" or "ERROR <class>". Used by test_dead_client_cancel.py, which kills it (SIGKILL).
"""
import json
import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def main():
    cluster, mode = json.loads(sys.argv[1]), sys.argv[2]
    timeout_ms = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    import tensorfleet as tf

    with tf.device("/job:ps/task:0"):
        q = tf.FIFOQueue(10, tf.float32, shapes=[[]], shared_name="q", name="q")
        value = tf.placeholder(tf.float32, [])
        enqueue = q.enqueue(value)
        dequeue = q.dequeue()
    config = tf.ConfigProto(device_filters=["/job:ps"], operation_timeout_in_ms=timeout_ms)
    if mode == "worker":
        server = tf.train.Server(tf.train.ClusterSpec(cluster), job_name="worker", task_index=0)
        target = server.target
    else:
        target = "grpc://" + cluster["ps" if mode == "remote" else "worker"][0]
    with tf.Session(target, config=config) as sess:
        sess.run(enqueue, {value: -1.0})
        assert sess.run(dequeue) == -1.0
        print("BLOCKING", flush=True)
        try:
            print("GOT", sess.run(dequeue), flush=True)
        except tf.errors.OpError as e:
            print("ERROR", type(e).__name__, flush=True)


if __name__ == "__main__":
    main()
