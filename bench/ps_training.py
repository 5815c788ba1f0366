"""Parameter-server training rate: the 784-256-10 MLP, batch 100, 1 ps + 2 workers as processes on 127.0.0.1.

    python bench/ps_training.py [--seconds 6] [--rounds 5] [--sync-rounds 3] [--baseline-trainer DIR]

Every process runs with BLAS at one thread (OPENBLAS/OMP/MKL_NUM_THREADS=1; TensorFlow: one intra-op and
one inter-op thread). Each worker builds the model under `replica_device_setter` (variables on the ps),
trains through a plain `Session(server.target)` on synthetic batches (the chief initialises, the other
waits on `report_uninitialized_variables`), warms up, then both run for `--seconds` from the same GO and
count their steps. Every side runs once per round, the order rotating round by round (other processes'
load on this 2-core machine hits every side alike); each round is printed, then per side the median and
the spread (min, max), the ratio of medians and the median of the per-round ratios, and the load average
at the start and the end. Sides:

- single-process: the same model in one process, local `Session` (tensorfleet), steps/s;
- baseline (with `--baseline-trainer DIR`): tensorfleet from another checkout's trainer/ directory, e.g.
  an earlier commit (`git archive <commit> trainer | tar -x -C /tmp/base`), for before/after figures;
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
import threading  # noqa: E402
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
    """One task process: the ps serves; a worker warms up (stepping on until GO on stdin), counts its steps for
    `seconds`, prints them, and steps on (uncounted) until END."""
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
    # stdin: GO, then END. A worker never stops stepping until END (the steps before GO and after its
    # count are just not counted): a sync step needs the other worker's gradients, so a worker that waited
    # idle (for GO, or after counting) would block the other forever; and async, both run under the same load
    go = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.readline(), go.set(), sys.stdin.readline(), os._exit(0)),
                     daemon=True).start()
    steps = 0
    while steps < 30 or not go.is_set():
        if steps == 30:
            print("WARM", flush=True)
        xs, ys = batches[steps % len(batches)]
        sess.run(train_op, {x: xs, y: ys})
        steps += 1
    steps, start = 0, time.perf_counter()
    gs0 = int(sess.run(global_step))
    while time.perf_counter() - start < seconds:
        xs, ys = batches[steps % len(batches)]
        sess.run(train_op, {x: xs, y: ys})
        steps += 1
    elapsed = time.perf_counter() - start
    gs1 = int(sess.run(global_step))
    print(json.dumps({"steps": steps, "seconds": elapsed, "global_steps": gs1 - gs0}), flush=True)
    while True:   # uncounted, until END (os._exit from the stdin thread)
        xs, ys = batches[steps % len(batches)]
        sess.run(train_op, {x: xs, y: ys})
        steps += 1


def _free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def _spawn(impl, cluster, job, index, seconds, sync, trainer=None):
    trainer = trainer or os.path.join(ROOT, "trainer")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([trainer, os.environ.get("PYTHONPATH", "")]))
    args = [sys.executable, os.path.abspath(__file__), "--task", impl, json.dumps(cluster), job, str(index),
            str(seconds), str(sync)]
    return subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, env=env)


def _expect(proc, word, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"task exited before {word}")
        if line.startswith(word) or (word == "{" and line.startswith("{")):
            return line
    raise RuntimeError(f"no {word} within {timeout} s")


def cluster_run(impl: str, seconds: float, sync: int = 0, trainer=None) -> dict:
    """-> {"worker_steps_per_s", "global_steps_per_s"} for 1 ps + 2 workers of `impl` (tensorfleet from the
    `trainer` directory: this checkout's by default)."""
    p = _free_ports(3)
    cluster = {"ps": [f"127.0.0.1:{p[0]}"], "worker": [f"127.0.0.1:{p[1]}", f"127.0.0.1:{p[2]}"]}
    procs = []
    try:
        ps = _spawn(impl, cluster, "ps", 0, seconds, sync, trainer)
        procs.append(ps)
        _expect(ps, "READY")
        workers = [_spawn(impl, cluster, "worker", i, seconds, sync, trainer) for i in (0, 1)]
        procs += workers
        for w in workers:
            _expect(w, "WARM")
        cpu0 = _cpu_seconds(procs)
        for w in workers:
            w.stdin.write("GO\n")
            w.stdin.flush()
        results = [json.loads(_expect(w, "{", timeout=seconds + 120)) for w in workers]
        cpu1 = _cpu_seconds(procs)
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
    cpu = [b - a for a, b in zip(cpu0, cpu1)] if cpu0 and cpu1 else []
    return {"worker_steps_per_s": steps / span,
            "global_steps_per_s": max(r["global_steps"] for r in results) / span,
            # CPU time (user + system) of the ps and of both workers per worker-step: the cost of a step,
            # much less sensitive than the rate to other processes' load on the shared cores
            "ps_cpu_ms": 1000 * cpu[0] / steps if cpu else float("nan"),
            "worker_cpu_ms": 1000 * sum(cpu[1:]) / steps if cpu else float("nan")}


def _cpu_seconds(procs) -> list:
    """User + system CPU seconds of each process so far (Linux /proc; [] elsewhere)."""
    out = []
    try:
        tick = os.sysconf("SC_CLK_TCK")
        for proc in procs:
            with open(f"/proc/{proc.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            out.append((int(fields[11]) + int(fields[12])) / tick)
    except (OSError, ValueError, IndexError):
        return []
    return out


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


def _spread(values: list) -> str:
    return (f"median {statistics.median(values):7.1f}  [min {min(values):.1f}, max {max(values):.1f}, "
            f"n={len(values)}]")


def _load() -> str:
    return "load average %.2f %.2f %.2f" % os.getloadavg()


def _rounds(sides: dict, rounds: int, label: str, unit: str) -> dict:
    """Runs every side once per round, the order rotating each round (so load from other processes and
    position effects hit every side alike); prints each round; -> {side: [result dicts]}."""
    rows: dict = {name: [] for name in sides}
    names = list(sides)
    for r in range(rounds):
        order = names[r % len(names):] + names[: r % len(names)]
        for name in order:
            rows[name].append(sides[name]())
        print(f"{label} round {r + 1}: " + " | ".join(f"{n} {rows[n][-1]['rate']:7.1f}" for n in names)
              + f" {unit}", flush=True)
    return rows


def _summary(rows: dict, label: str, unit: str) -> None:
    pairs = [(a["rate"], b["rate"]) for a, b in zip(rows.get("tensorfleet", []), rows.get("tensorflow", []))]
    per_round = [a / b for a, b in pairs if a == a and b == b]   # rounds where neither side failed (NaN)
    rows = {name: [x for x in values if x["rate"] == x["rate"]] for name, values in rows.items()}
    rows = {name: values for name, values in rows.items() if values}
    rates = {name: [x["rate"] for x in values] for name, values in rows.items()}
    for name, values in rows.items():
        line = f"{label} {name:>14}: {_spread(rates[name])} {unit}"
        if "ps_cpu_ms" in values[0]:
            ps = statistics.median(x["ps_cpu_ms"] for x in values)
            wk = statistics.median(x["worker_cpu_ms"] for x in values)
            line += f"; CPU per worker-step: ps {ps:.2f} ms + workers {wk:.2f} ms (medians)"
        print(line)
    med = {name: statistics.median(v) for name, v in rates.items()}
    if per_round:
        print(f"{label} ratio tensorfleet/tensorflow: {med['tensorfleet'] / med['tensorflow']:.2f}x of medians; "
              f"per round median {statistics.median(per_round):.2f}x [min {min(per_round):.2f}, "
              f"max {max(per_round):.2f}] (target 1.5x)")
    if "baseline" in rates and "tensorfleet" in rates:
        print(f"{label} ratio tensorfleet/baseline: {med['tensorfleet'] / med['baseline']:.2f}x of medians")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--task":
        impl, cluster, job, index, seconds, sync = sys.argv[2:8]
        task_main(impl, json.loads(cluster), job, int(index), float(seconds), int(sync))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--sync-rounds", type=int, default=3)
    ap.add_argument("--baseline-trainer", default="",
                    help="another checkout's trainer/ directory (e.g. an earlier commit, `git archive`d), run "
                         "interleaved as 'baseline'")
    ap.add_argument("--no-single", action="store_true", help="skip the single-process figure")
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
    print(f"start: {_load()}", flush=True)
    def side(impl, sync=0, trainer=None):
        key = "global_steps_per_s" if sync else "worker_steps_per_s"

        def run() -> dict:
            try:
                out = cluster_run(impl, args.seconds, sync, trainer)
            except RuntimeError as e:   # a task that died or hung: this round of this side is lost
                print(f"{impl}{' sync' if sync else ''}: round failed: {e}", flush=True)
                return {"rate": float("nan")}
            out["rate"] = out[key]
            return out
        return run

    sides: dict = {"tensorfleet": side("tensorfleet")}
    if args.baseline_trainer:
        sides["baseline"] = side("tensorfleet", trainer=os.path.abspath(args.baseline_trainer))
    if not tf_missing:
        sides["tensorflow"] = side("tf")
    if not args.no_single:
        sides["single-process"] = lambda: {"rate": single_process(args.seconds)}
    unit = "worker-steps/s" + ("" if args.no_single else " (single-process: steps/s)")
    if args.rounds:
        _summary(_rounds(sides, args.rounds, "async", unit), "async", unit)
    if hasattr(tf.train, "SyncReplicasOptimizer") and args.sync_rounds:
        sync_sides: dict = {"tensorfleet": side("tensorfleet", 2)}
        if not tf_missing:
            sync_sides["tensorflow"] = side("tf", 2)
        sync_rows = _rounds(sync_sides, args.sync_rounds, "sync (2 replicas)", "global steps/s")
        _summary(sync_rows, "sync (2 replicas)", "global steps/s")
    else:
        print("sync: not available (tensorfleet has no tf.train.SyncReplicasOptimizer in this build)")
    print(f"end: {_load()}", flush=True)


if __name__ == "__main__":
    main()
