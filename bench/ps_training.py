"""Parameter-server training rate: the 784-256-10 MLP, batch 100, 1 ps + 2 workers as processes on 127.0.0.1.

    python bench/ps_training.py [--seconds 8] [--rounds 2]

Every process runs with BLAS at one thread (OPENBLAS/OMP/MKL_NUM_THREADS=1; TensorFlow: one intra-op and
one inter-op thread). Each worker builds the model under `replica_device_setter` (variables on the ps),
trains through a plain `Session(server.target)` on synthetic batches (the chief initialises, the other
waits on `report_uninitialized_variables`), warms up, then both run for `--seconds` from the same GO and
count their steps. Printed, from one run, round by round:

- single: the same model in one process, local `Session` (tensorfleet), steps/s;
- tensorfleet async: worker-steps/s (both workers' steps / seconds) and the ratio to TensorFlow's;
- tensorflow async: the same scripts on TensorFlow's own PS runtime (`tf.compat.v1`), when `tensorflow` is
  importable (`pip install tensorflow-cpu`: the `[bench]` extra; never a test dependency);
- sync (2 replicas, `SyncReplicasOptimizer`): global steps/s, when `tensorfleet.train.SyncReplicasOptimizer`
  exists, else `sync: not available`.
The issue's target: tensorfleet at 1.5x TensorFlow's async (and sync) rate, same machine, same run.
"""
from __future__ import annotations

import os
import sys

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import socket  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _import(impl: str):
    if impl == "tf":
        import tensorflow as real_tf

        real_tf.compat.v1.disable_eager_execution()
        return real_tf.compat.v1
    import tensorfleet

    return tensorfleet


def _batches(n=8, seed=0):
    rng = np.random.RandomState(seed)
    xs = [rng.rand(100, 784).astype(np.float32) for _ in range(n)]
    ys = [np.eye(10, dtype=np.float32)[rng.randint(0, 10, 100)] for _ in range(n)]
    return list(zip(xs, ys))


def _model(tf, sync_replicas: int = 0, is_chief: bool = False):
    global_step = tf.train.get_or_create_global_step()
    x = tf.placeholder(tf.float32, [None, 784])
    y = tf.placeholder(tf.float32, [None, 10])
    w1 = tf.Variable(tf.truncated_normal([784, 256], stddev=1.0 / 28, seed=1))
    b1 = tf.Variable(tf.zeros([256]))
    w2 = tf.Variable(tf.truncated_normal([256, 10], stddev=1.0 / 16, seed=2))
    b2 = tf.Variable(tf.zeros([10]))
    logits = tf.matmul(tf.nn.relu(tf.matmul(x, w1) + b1), w2) + b2
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=logits))
    opt = tf.train.GradientDescentOptimizer(0.1)
    hooks = []
    if sync_replicas:
        opt = tf.train.SyncReplicasOptimizer(opt, replicas_to_aggregate=sync_replicas,
                                             total_num_replicas=sync_replicas)
        hooks.append(opt.make_session_run_hook(is_chief))
    return x, y, opt.minimize(loss, global_step=global_step), global_step, hooks


def _config(tf, device_filters=None):
    return tf.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1,
                          device_filters=device_filters or [])


def task_main(impl: str, cluster: dict, job: str, index: int, seconds: float, sync: int) -> None:
    """One task process: the ps serves; a worker warms up, waits for GO on stdin, trains, prints STEPS."""
    tf = _import(impl)
    spec = tf.train.ClusterSpec(cluster)
    server = tf.train.Server(spec, job_name=job, task_index=index, config=_config(tf))
    if job == "ps":
        print("READY", flush=True)
        server.join()
        return
    is_chief = index == 0
    with tf.device(tf.train.replica_device_setter(worker_device=f"/job:worker/task:{index}", cluster=spec)):
        x, y, train_op, global_step, hooks = _model(tf, sync, is_chief)
    config = _config(tf, ["/job:ps", f"/job:worker/task:{index}"])
    batches = _batches(seed=index)
    if sync:
        sess = tf.train.MonitoredTrainingSession(master=server.target, is_chief=is_chief, hooks=hooks, config=config,
                                                 save_checkpoint_secs=None, save_summaries_steps=None,
                                                 save_summaries_secs=None, log_step_count_steps=None)
    else:
        init = tf.global_variables_initializer()
        ready = tf.report_uninitialized_variables()
        sess = tf.Session(server.target, config=config)
        if is_chief:
            sess.run(init)
        while len(sess.run(ready)):
            time.sleep(0.05)
    for i in range(30):
        xs, ys = batches[i % len(batches)]
        sess.run(train_op, {x: xs, y: ys})
    print("WARM", flush=True)
    sys.stdin.readline()   # GO
    steps, start = 0, time.perf_counter()
    gs0 = int(sess.run(global_step))
    while time.perf_counter() - start < seconds:
        xs, ys = batches[steps % len(batches)]
        sess.run(train_op, {x: xs, y: ys})
        steps += 1
    elapsed = time.perf_counter() - start
    gs1 = int(sess.run(global_step))
    print(json.dumps({"steps": steps, "seconds": elapsed, "global_steps": gs1 - gs0}), flush=True)
    sys.stdin.readline()   # END: stay up until every worker has finished counting
    os._exit(0)


def _free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def _spawn(impl, cluster, job, index, seconds, sync):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(ROOT, "trainer"),
                                                       os.environ.get("PYTHONPATH", "")]))
    args = [sys.executable, os.path.abspath(__file__), "--task", impl, json.dumps(cluster), job, str(index),
            str(seconds), str(sync)]
    return subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, env=env)


def _expect(proc, word, timeout=180):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"task exited before {word}")
        if line.startswith(word) or (word == "{" and line.startswith("{")):
            return line
    raise RuntimeError(f"no {word} within {timeout} s")


def cluster_run(impl: str, seconds: float, sync: int = 0) -> dict:
    """-> {"worker_steps_per_s", "global_steps_per_s"} for 1 ps + 2 workers of `impl`."""
    p = _free_ports(3)
    cluster = {"ps": [f"127.0.0.1:{p[0]}"], "worker": [f"127.0.0.1:{p[1]}", f"127.0.0.1:{p[2]}"]}
    procs = []
    try:
        ps = _spawn(impl, cluster, "ps", 0, seconds, sync)
        procs.append(ps)
        _expect(ps, "READY")
        workers = [_spawn(impl, cluster, "worker", i, seconds, sync) for i in (0, 1)]
        procs += workers
        for w in workers:
            _expect(w, "WARM")
        for w in workers:
            w.stdin.write("GO\n")
            w.stdin.flush()
        results = [json.loads(_expect(w, "{", timeout=seconds + 120)) for w in workers]
        for w in workers:
            w.stdin.write("END\n")
            w.stdin.flush()
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait(10)
    steps = sum(r["steps"] for r in results)
    span = max(r["seconds"] for r in results)
    return {"worker_steps_per_s": steps / span,
            "global_steps_per_s": max(r["global_steps"] for r in results) / span}


def single_process(seconds: float) -> float:
    import tensorfleet as tf

    g = tf.Graph()
    with g.as_default():
        x, y, train_op, _, _ = _model(tf)
        init = tf.global_variables_initializer()
    batches = _batches()
    with tf.Session(graph=g, config=_config(tf)) as sess:
        sess.run(init)
        for i in range(30):
            sess.run(train_op, {x: batches[i % 8][0], y: batches[i % 8][1]})
        steps, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            xs, ys = batches[steps % 8]
            sess.run(train_op, {x: xs, y: ys})
            steps += 1
        return steps / (time.perf_counter() - start)


def _have_tensorflow() -> str:
    try:
        import tensorflow as real_tf
    except ImportError as e:
        return f"not importable ({e}); pip install tensorflow-cpu (the [bench] extra)"
    return "" if real_tf.__version__ else "unknown version"


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--task":
        impl, cluster, job, index, seconds, sync = sys.argv[2:8]
        task_main(impl, json.loads(cluster), job, int(index), float(seconds), int(sync))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    sys.path.insert(0, os.path.join(ROOT, "trainer"))
    import tensorfleet as tf

    tf_missing = _have_tensorflow()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python "
          f"{platform.python_version()}, BLAS threads {os.environ['OPENBLAS_NUM_THREADS']}")
    if not tf_missing:
        import tensorflow as real_tf
        print(f"tensorflow {real_tf.__version__} (tf.compat.v1 PS runtime)")
    else:
        print(f"tensorflow: {tf_missing}")
    rows: dict = {"single": [], "ours": [], "theirs": []}
    for r in range(args.rounds):   # interleaved, so load from other processes hits every side alike
        rows["single"].append(single_process(args.seconds))
        rows["ours"].append(cluster_run("tensorfleet", args.seconds)["worker_steps_per_s"])
        line = (f"round {r + 1}: single-process {rows['single'][-1]:7.1f} steps/s | tensorfleet async "
                f"{rows['ours'][-1]:7.1f} worker-steps/s")
        if not tf_missing:
            rows["theirs"].append(cluster_run("tf", args.seconds)["worker_steps_per_s"])
            line += (f" | tensorflow async {rows['theirs'][-1]:7.1f} worker-steps/s | ratio "
                     f"{rows['ours'][-1] / rows['theirs'][-1]:.2f}x")
        print(line, flush=True)
    med = {k: statistics.median(v) for k, v in rows.items() if v}
    line = (f"median of {args.rounds}: single-process {med['single']:.1f} steps/s | tensorfleet async "
            f"{med['ours']:.1f} worker-steps/s ({med['ours'] / med['single']:.2f}x single-process)")
    if "theirs" in med:
        line += (f" | tensorflow async {med['theirs']:.1f} worker-steps/s | ratio {med['ours'] / med['theirs']:.2f}x "
                 f"(target 1.5x)")
    print(line, flush=True)
    if hasattr(tf.train, "SyncReplicasOptimizer"):
        ours = cluster_run("tensorfleet", args.seconds, sync=2)
        line = f"sync (2 replicas): tensorfleet {ours['global_steps_per_s']:.1f} global steps/s"
        if not tf_missing:
            theirs = cluster_run("tf", args.seconds, sync=2)
            line += (f" | tensorflow {theirs['global_steps_per_s']:.1f} global steps/s | ratio "
                     f"{ours['global_steps_per_s'] / theirs['global_steps_per_s']:.2f}x (target 1.5x)")
        print(line)
    else:
        print("sync: not available (tensorfleet has no tf.train.SyncReplicasOptimizer in this build)")


if __name__ == "__main__":
    main()
