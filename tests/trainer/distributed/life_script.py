"""Test helper: a small TF1 between-graph script for the end-of-job tests (only the import changed).

Usage: python life_script.py CLUSTER_JSON JOB INDEX [MODE]

The model: a 4-weight regression under `replica_device_setter`; the chief is worker 0. Every task prints
`UP job index` once its server runs, `SESSION` once its session is made, `FINAL g` at the end.

ps modes: "" `server.join()` (prints `PS-FINALLY` from its `finally`, `FELL THROUGH` and exits 7 if join()
returned); `done_queue`: instead of join(), the TF1 "done queue" idiom: dequeue one token per worker in a
session of its own (`PS WAITING` once it is made), then exit 0 (`PS END`).
chief/worker modes (a Supervisor session and a raw loop to STEPS global steps, default 20, unless said):
  ""              the end of the loop ends the script
  crash           raises RuntimeError right after its session is made
  until_released  trains until `sv.should_stop()` (the chief's release told it), then 20 more steps
  raise_exit1, builtin_exit1, quit1, sys_exit1, raise_exit0, sys_exit0
                  after the loop: `raise SystemExit(1)`, `exit(1)`, `quit(1)`, `sys.exit(1)`, ...
  caught_exit1    after the loop `sys.exit(1)` is caught, and the script ends normally (status 0)
  mts, mts_raise1, mts_raise_str, mts_error_caught
                  a `with MonitoredTrainingSession(...)` block with a StopAtStepHook; in it, at step 5:
                  `raise SystemExit(1)`, `raise SystemExit("giving up")`, or a ValueError caught outside the
                  block (then the script ends normally)
  done_queue, done_queue_die, done_queue_big
                  after the loop, enqueue this worker's token on the ps's done queue (`_die`: `os._exit(9)`
                  before it; `_big`: the same step then makes 64 MB on the ps and fetches it)
With GO_FILE set, the chief waits (at most 60 s) for that file to exist before its loop ends.
"""
import json
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import tensorfleet as tf  # noqa: E402

spec = json.loads(sys.argv[1])
job, idx = sys.argv[2], int(sys.argv[3])
mode = sys.argv[4] if len(sys.argv) > 4 else ""
cluster = tf.train.ClusterSpec(spec)
server = tf.train.Server(cluster, job_name=job, task_index=idx)
print("UP", job, idx, flush=True)
workers = len(spec["worker"])
with tf.device("/job:ps/task:0"):
    done_q = tf.FIFOQueue(workers, tf.int32, shared_name="done_queue0")

if job == "ps" and mode == "done_queue":
    # its own task only: a session over every task would wait for a worker that already died (as in TF)
    sess = tf.Session(server.target, config=tf.ConfigProto(device_filters=["/job:ps"]))
    print("PS WAITING", flush=True)
    try:
        for i in range(workers):
            sess.run(done_q.dequeue())
            print("ps got done token", i, flush=True)
    finally:
        print("PS-FINALLY", flush=True)
    print("PS END", flush=True)
    sys.exit(0)
if job == "ps":
    try:
        server.join()
    finally:
        print("PS-FINALLY", flush=True)
    print("FELL THROUGH", flush=True)
    sys.exit(7)

is_chief = idx == 0
with tf.device(tf.train.replica_device_setter(worker_device="/job:worker/task:%d" % idx, cluster=cluster)):
    gs = tf.train.get_or_create_global_step()
    w = tf.Variable(tf.zeros([4, 1]), name="w")
    x = tf.placeholder(tf.float32, [None, 4])
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0))
    train = tf.train.GradientDescentOptimizer(0.01).minimize(loss, global_step=gs)
    init = tf.global_variables_initializer()
enqueue_done = done_q.enqueue(1)
with tf.device("/job:ps/task:0"), tf.control_dependencies([enqueue_done]):
    token_then_64mb = tf.fill([1 << 24], 1.0)   # made and sent back after the token is in: a slow reply
steps = int(os.environ.get("STEPS", "20"))
feed = {x: np.ones((2, 4), np.float32)}
config = tf.ConfigProto(device_filters=["/job:ps", "/job:worker/task:%d" % idx])


def wait_for_go():
    go = os.environ.get("GO_FILE")
    deadline = time.monotonic() + 60
    while is_chief and go and not os.path.exists(go) and time.monotonic() < deadline:
        time.sleep(0.05)


if mode.startswith("mts"):
    hooks = [tf.train.StopAtStepHook(last_step=steps)]
    try:
        with tf.train.MonitoredTrainingSession(master=server.target, is_chief=is_chief, hooks=hooks,
                                               config=config) as sess:
            print("SESSION", flush=True)
            while not sess.should_stop():
                _, g = sess.run([train, gs], feed)
                if g >= 5 and mode == "mts_raise1":
                    raise SystemExit(1)
                if g >= 5 and mode == "mts_raise_str":
                    raise SystemExit("giving up: bad data")   # a message: exit status 1
                if g >= 5 and mode == "mts_error_caught":
                    raise ValueError("bad batch")
    except ValueError as e:
        print("CAUGHT", e, flush=True)
    print("FINAL", flush=True)
else:
    sv = tf.train.Supervisor(is_chief=is_chief, init_op=init, global_step=gs, recovery_wait_secs=1)
    sess = sv.prepare_or_wait_for_session(server.target, config=config)
    print("SESSION", flush=True)
    if mode == "crash":
        raise RuntimeError("boom")
    if mode == "until_released":
        deadline = time.monotonic() + 90
        while not sv.should_stop() and time.monotonic() < deadline:
            sess.run(train, feed)
            time.sleep(0.02)
        print("TOLD", flush=True)
        for _ in range(20):   # its last steps, after the chief released the cluster
            sess.run(train, feed)
            time.sleep(0.05)
    else:
        while sess.run([train, gs], feed)[1] < steps:
            pass
        wait_for_go()
    print("FINAL", sess.run(gs), flush=True)
    if mode.startswith("done_queue"):
        if mode == "done_queue_die":
            os._exit(9)   # killed before it sent its token
        if mode == "done_queue_big":
            print("TOKEN SENT", float(sess.run(token_then_64mb).sum()), flush=True)
        else:
            sess.run(enqueue_done)
            print("TOKEN SENT", flush=True)
    if mode == "raise_exit1":
        raise SystemExit(1)
    if mode == "raise_exit0":
        raise SystemExit(0)
    if mode == "builtin_exit1":
        exit(1)  # noqa: PLR1722 - the builtin, on purpose
    if mode == "quit1":
        quit(1)  # noqa: PLR1722
    if mode == "sys_exit1":
        sys.exit(1)
    if mode == "sys_exit0":
        sys.exit(0)
    if mode == "caught_exit1":
        try:
            sys.exit(1)
        except SystemExit:
            print("CAUGHT exit", flush=True)
