"""Test helper process: a client that keeps running small steps on the ps until its stdin closes.

Usage: python stepping_client.py CLUSTER_JSON MODE [TASK]
- MODE "worker": worker task TASK of the cluster (its own server, whose master registers the step's
  partitions on the ps: RegisterGraph, then RunGraph calls);
- MODE "remote": a plain client of the ps's master (`Session("grpc://ps")`: a master session on the ps).
Two step signatures, each with a partition on the ps. Prints "STEPPING" after the first steps, then steps
every 10 ms; prints "ERROR <class>" and exits if a step fails. Used by test_dead_client_state.py.
"""
import json
import os
import sys
import threading

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def main():
    cluster, mode = json.loads(sys.argv[1]), sys.argv[2]
    import tensorfleet as tf

    x = tf.placeholder(tf.float32, [])
    with tf.device("/job:ps/task:0"):
        doubled = x * 2.0
        tripled = x * 3.0
    with tf.device(f"/job:worker/task:{sys.argv[3]}" if mode == "worker" else "/job:ps/task:0"):
        total = doubled + 1.0
    if mode == "worker":
        server = tf.train.Server(tf.train.ClusterSpec(cluster), job_name="worker", task_index=int(sys.argv[3]))
        target = server.target
    else:
        target = "grpc://" + cluster["ps"][0]
    done = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    own = [] if mode == "remote" else [f"/job:worker/task:{sys.argv[3]}"]
    config = tf.ConfigProto(device_filters=["/job:ps"] + own)
    with tf.Session(target, config=config) as sess:
        try:
            assert sess.run(total, {x: 1.0}) == 3.0 and sess.run(tripled, {x: 1.0}) == 3.0
            print("STEPPING", flush=True)
            while not done.wait(0.01):
                sess.run(total, {x: 1.0})
                sess.run(tripled, {x: 2.0})
        except tf.errors.OpError as e:
            print("ERROR", type(e).__name__, e.message, flush=True)


if __name__ == "__main__":
    main()
