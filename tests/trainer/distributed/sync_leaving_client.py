"""Test helper process: a non-chief worker's client, Supervisor style, that leaves a SyncReplicasOptimizer job.

Usage: python sync_leaving_client.py CLUSTER_JSON TASK WORKERS MODE
Builds worker TASK's graph of `sync_graph.py` (WORKERS replicas, all aggregated), opens its session through a
non-chief `tf.train.Supervisor` on that worker's master, prints "READY", then with MODE "exit" returns without
stopping the Supervisor (as TF's mnist_replica.py does), with "stop" calls `sv.stop()` first, with "closed"
closes the session first. Used by test_sync_replicas.py.
"""
import json
import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def main():
    import tensorfleet as tf
    from sync_graph import sync_graph

    spec = tf.train.ClusterSpec(json.loads(sys.argv[1]))
    task, workers, mode = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    m = sync_graph(spec, task, workers, workers)
    opt = m["opt"]
    sv = tf.train.Supervisor(graph=m["graph"], is_chief=False, local_init_op=opt.local_step_init_op,
                             ready_for_local_init_op=opt.ready_for_local_init_op, recovery_wait_secs=0.2)
    config = tf.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{task}"])
    sess = sv.prepare_or_wait_for_session("grpc://" + spec.job_tasks("worker")[task], config=config)
    print("READY", flush=True)
    if mode == "stop":
        sv.stop()
    elif mode == "closed":
        sess.close()


if __name__ == "__main__":
    main()
