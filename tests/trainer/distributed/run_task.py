"""Test helper process: starts one task's server from a cluster given as JSON and serves until killed.

Usage: python run_task.py CLUSTER_JSON JOB TASK   (prints "READY <target>" once serving).
Exits when stdin closes, so a test that dies never leaves it behind. RUN_TASK_LOG_LEVEL=DEBUG (a
`logging` level name) prints the runtime's log records to stderr.
"""
import json
import os
import sys
import threading

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def main():
    cluster, job, task = json.loads(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    if os.environ.get("RUN_TASK_LOG_LEVEL"):
        import logging

        logging.basicConfig(level=os.environ["RUN_TASK_LOG_LEVEL"], format="%(levelname)s %(name)s: %(message)s")
    import tensorfleet as tf
    import dist_test_ops  # noqa: F401  (test-only ops, on PYTHONPATH from conftest)

    server = tf.train.Server(tf.train.ClusterSpec(cluster), job_name=job, task_index=task)

    def watch_stdin():
        sys.stdin.read()
        server.stop()

    threading.Thread(target=watch_stdin, daemon=True).start()
    print("READY", server.target, flush=True)
    server.join()


if __name__ == "__main__":
    main()
