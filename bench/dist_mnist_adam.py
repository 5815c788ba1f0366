"""Async Adam on 2 ps + 4 workers (Kubeflow's dist-mnist layout): final validation cross entropy, both runtimes.

    python bench/dist_mnist_adam.py [--runs 5] [--steps 400] [--ps 2] [--workers 4] [--late-join STEP]
        [--start-together] [--staleness] [--pause-ms MS] [--tf-python PATH] [--baseline-trainer DIR]

The job is a between-graph TF1 script in dist-mnist's style, written here: `replica_device_setter(cluster=)`,
a 784-100-10 MLP (hid_w, hid_b, sm_w, sm_b), the summed clipped cross entropy, `AdamOptimizer(0.01)`
minimised with `global_step`, `Supervisor(recovery_wait_secs=1).prepare_or_wait_for_session` with
`device_filters`, a raw loop on `global_step` to `--steps`, batch 100, then every worker's cross entropy on
the 5,000 validation images. Every process is on 127.0.0.1 with BLAS at one thread; the data is MNIST from
`tensorfleet.datasets` (fetched), saved once to an .npz that both runtimes' workers read. Sides, rotated
run by run so other processes' load hits each alike: tensorfleet (this checkout), `baseline` (tensorfleet
from another checkout's trainer/, e.g. `git archive <commit> trainer | tar -x -C /tmp/base`), tensorflow
(`tf.compat.v1`, with `--tf-python`, default this interpreter, when it imports tensorflow). Printed: each
run (cross entropy, steps per worker), per side the median and spread and the workers' training-step times
(p50/p90/p99 of `Session.run`).

`--late-join STEP`: odd-numbered workers make one step, then wait until the global step reaches STEP, and
all four train from there. This is what happens, at a random step, when the other workers' Supervisors see
the chief's initialisation only at their next poll (`recovery_wait_secs`) while the chief already trains:
more workers, hence staler gradients, at a late stage of training. `--staleness`: beside hid_w (ps1) a
counter is read with the weights and bumped right after the step's update of hid_w: the number of other
workers' updates between a step's read and its own update (its gradient's staleness; async Adam at this
learning rate is very sensitive to it), printed per side, with the read-to-update window in ms (two
`tf.timestamp`s on ps1, one after the read and one after the bump). The bump and its constant are placed
on ps1 with the update: a constant made on the worker under the control dependency would put a round trip
between the update and its count in both runtimes (numbers measured before 2026-11-29 were). `--cpu`: CPU
seconds during training, per worker step and per global step on each ps (/proc, Linux). `--start-together`:
the workers start training only once all their sessions are ready (no worker trains alone first).
`--pause-ms MS`: every worker sleeps MS between its steps (time outside the read-to-update window, as an
input pipeline's): the same steps with a shorter share of each spent between a read and its update, to test
staleness as the cause.
"""
from __future__ import annotations

import os
import sys

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import argparse  # noqa: E402
import collections  # noqa: E402
import json  # noqa: E402
import socket  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# On ps1. Not hid_b: on ps0 a consumer of its ApplyAdam in the step would change where a checkout before
# the partitioning fix runs that update (the probe would hide the difference it measures).
STALENESS_OF = ("hid_w",)


def _runtime(impl: str):
    if impl == "tensorflow":
        import tensorflow.compat.v1 as tf

        tf.disable_v2_behavior()
        return tf
    import tensorfleet as tf

    return tf


def _model(tf, hidden=100):
    hid_w = tf.Variable(tf.truncated_normal([784, hidden], stddev=1.0 / 28), name="hid_w")
    hid_b = tf.Variable(tf.zeros([hidden]), name="hid_b")
    sm_w = tf.Variable(tf.truncated_normal([hidden, 10], stddev=1.0 / np.sqrt(hidden)), name="sm_w")
    sm_b = tf.Variable(tf.zeros([10]), name="sm_b")
    x = tf.placeholder(tf.float32, [None, 784])
    y_ = tf.placeholder(tf.float32, [None, 10])
    hid = tf.nn.relu(tf.nn.xw_plus_b(x, hid_w, hid_b))
    y = tf.nn.softmax(tf.nn.xw_plus_b(hid, sm_w, sm_b))
    return x, y_, -tf.reduce_sum(y_ * tf.log(tf.clip_by_value(y, 1e-10, 1.0)))


def task_main(impl: str, spec: dict) -> None:
    """One task of the job: a ps joins its server; a worker trains and prints one JSON line."""
    tf = _runtime(impl)
    cluster = tf.train.ClusterSpec(spec["cluster"])
    job, index = spec["job"], spec["index"]
    server = tf.train.Server(cluster, job_name=job, task_index=index)
    if job == "ps":
        server.join()
        return
    data = np.load(spec["data"])
    train_x, train_y = data["train_x"], data["train_y"]
    with tf.device(tf.train.replica_device_setter(worker_device=f"/job:worker/task:{index}", cluster=cluster)):
        global_step = tf.Variable(0, name="global_step", trainable=False)
        x, y_, xent = _model(tf)
        opt = tf.train.AdamOptimizer(0.01)
        grads = opt.compute_gradients(xent)
        train_op = opt.apply_gradients(grads, global_step=global_step)
        probe = {}
        if spec["staleness"]:  # per variable: a counter beside it, bumped right after this step's update
            g = tf.get_default_graph()
            for name in STALENESS_OF:
                var = g.get_operation_by_name(name)
                with tf.colocate_with(var):
                    counter = tf.Variable(0.0, name=f"{name}_updates", trainable=False)
                with tf.device(var.device):   # the count, its constant and both clocks: on the ps, with the update
                    with tf.control_dependencies([g.get_operation_by_name(f"Adam/update_{name}/ApplyAdam")]):
                        bumped = tf.assign_add(counter, 1.0)
                    read = tf.identity(counter)
                    with tf.control_dependencies([read]):
                        read_at = tf.timestamp()
                    after = bumped + 0.0
                    with tf.control_dependencies([after]):
                        updated_at = tf.timestamp()
                    probe[name] = (read, after, read_at, updated_at)
        init_op = tf.global_variables_initializer()
    sv = tf.train.Supervisor(is_chief=index == 0, logdir=os.path.join(spec["logdir"], f"w{index}"),
                             init_op=init_op, recovery_wait_secs=1, global_step=global_step)
    config = tf.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{index}"])
    sess = sv.prepare_or_wait_for_session(server.target, config=config)
    rng = np.random.RandomState()
    order, at = rng.permutation(len(train_x)), 0
    stale: dict = {name: [] for name in probe}
    window_ms: list = []
    step_ms: list = []

    def step():
        nonlocal order, at
        if at + 100 > len(order):
            order, at = rng.permutation(len(train_x)), 0
        idx = order[at:at + 100]
        at += 100
        feed = {x: train_x[idx], y_: train_y[idx]}
        started = time.perf_counter()
        if not probe:
            got = sess.run([train_op, global_step], feed)[1]
            step_ms.append((time.perf_counter() - started) * 1e3)
            return got
        _, got, p = sess.run([train_op, global_step, probe], feed)
        step_ms.append((time.perf_counter() - started) * 1e3)
        if got >= spec["late_join"]:  # with --late-join, only once the late workers may have joined
            for name, (read, after, read_at, updated_at) in p.items():
                stale[name].append(int(after - read - 1))
                window_ms.append(((updated_at - read_at) * 1e3, step_ms[-1]))
        return got

    cpu_before = _cpu_seconds(spec["ps_pids"])
    local = 0
    pause = spec["pause_ms"] / 1000

    def paused_step():
        time.sleep(pause)
        return step()

    if spec["together"]:  # every worker's session is ready before any of them trains
        open(os.path.join(spec["logdir"], f"ready{index}"), "w").close()
        deadline = time.monotonic() + 120
        while (sum(n.startswith("ready") for n in os.listdir(spec["logdir"])) < len(spec["cluster"]["worker"])
               and time.monotonic() < deadline):
            time.sleep(0.005)
    if spec["late_join"] and index % 2 == 1:
        step()
        local += 1
        deadline = time.monotonic() + 300
        while sess.run(global_step) < spec["late_join"] and time.monotonic() < deadline:
            time.sleep(0.005)
    while True:
        local += 1
        if (paused_step() if pause else step()) >= spec["steps"]:
            break
    cpu = [b - a for a, b in zip(cpu_before, _cpu_seconds(spec["ps_pids"]))]
    global_steps = int(sess.run(global_step))
    val = float(sess.run(xent, {x: data["val_x"], y_: data["val_y"]}))
    print(json.dumps({"xent": val, "local_steps": local, "staleness": stale, "window_ms": window_ms,
                      "step_ms": step_ms, "cpu": cpu, "global_steps": global_steps}), flush=True)
    sys.stdout.flush()
    os._exit(0)  # the parent ends the ps tasks; no job-end protocol is measured here


def _cpu_seconds(ps_pids) -> list:
    """[this process's CPU seconds, then each ps process's] (the ps from /proc; [] where it cannot be read)."""
    import resource

    ru = resource.getrusage(resource.RUSAGE_SELF)
    out = [ru.ru_utime + ru.ru_stime]
    for pid in ps_pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            return []
        out.append((int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"))
    return out


def _free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def run_job(side: dict, args, data: str, workdir: str) -> dict:
    ports = iter(_free_ports(args.ps + args.workers))
    cluster = {"ps": [f"127.0.0.1:{next(ports)}" for _ in range(args.ps)],
               "worker": [f"127.0.0.1:{next(ports)}" for _ in range(args.workers)]}
    env = dict(os.environ)
    if side["trainer"]:
        env["PYTHONPATH"] = os.pathsep.join([side["trainer"], env.get("PYTHONPATH", "")])
    logdir = tempfile.mkdtemp(dir=workdir)
    procs, workers = [], []
    try:
        for job, n in (("ps", args.ps), ("worker", args.workers)):
            for i in range(n):
                spec = {"cluster": cluster, "job": job, "index": i, "data": data, "logdir": logdir,
                        "steps": args.steps, "late_join": args.late_join, "staleness": args.staleness,
                        "together": args.start_together, "pause_ms": args.pause_ms,
                        "ps_pids": [q.pid for q in procs[:args.ps]] if args.cpu else []}
                p = subprocess.Popen([side["python"], os.path.abspath(__file__), "--task", side["impl"],
                                      json.dumps(spec)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True, env=env)
                procs.append(p)
                if job == "worker":
                    workers.append(p)
        rows = []
        deadline = time.monotonic() + args.timeout
        for w in workers:
            try:
                out, _ = w.communicate(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                out = ""
            lines = [ln for ln in out.splitlines() if ln.startswith("{")]
            rows.append(json.loads(lines[-1]) if lines else None)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait(10)
    done = [r for r in rows if r]
    return {"xent": statistics.median(r["xent"] for r in done) if done else float("nan"),
            "local_steps": [r["local_steps"] if r else None for r in rows],
            "staleness": {name: [s for r in done for s in r["staleness"][name]] for name in STALENESS_OF
                          if done and name in done[0]["staleness"]},
            "window_ms": [ms for r in done for ms in r.get("window_ms", [])],
            "step_ms": [ms for r in done for ms in r["step_ms"]],
            "cpu": _cpu_per_step(rows, args.ps)}


def _cpu_per_step(rows, n_ps) -> dict:
    """CPU ms per local step of each worker, and per global step of each ps (worker 0 measured the ps)."""
    done = [r for r in rows if r and r["cpu"]]
    if not done or rows[0] is None or len(rows[0]["cpu"]) != n_ps + 1:
        return {}
    first = rows[0]
    steps = max(1, first["global_steps"])
    return {"worker": [r["cpu"][0] * 1e3 / max(1, r["local_steps"]) for r in done],
            "ps": [c * 1e3 / steps for c in first["cpu"][1:]]}


def _save_data(workdir: str) -> str:
    sys.path.insert(0, os.path.join(ROOT, "trainer"))
    from tensorfleet.datasets import read_data_sets

    d = read_data_sets(None, one_hot=True, source="mnist")
    path = os.path.join(workdir, "mnist.npz")
    np.savez(path, train_x=d.train.images, train_y=d.train.labels, val_x=d.validation.images,
             val_y=d.validation.labels)
    return path


def _tf_python(path: str) -> str:
    try:
        ok = subprocess.run([path, "-c", "import tensorflow"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")).returncode == 0
    except OSError:   # no such interpreter
        ok = False
    return path if ok else ""


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--task":
        task_main(sys.argv[2], json.loads(sys.argv[3]))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--ps", type=int, default=2)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--late-join", type=int, default=0)
    ap.add_argument("--staleness", action="store_true")
    ap.add_argument("--cpu", action="store_true")
    ap.add_argument("--start-together", action="store_true")
    ap.add_argument("--pause-ms", type=float, default=0.0)
    ap.add_argument("--tf-python", default=sys.executable)
    ap.add_argument("--baseline-trainer", default="")
    ap.add_argument("--timeout", type=float, default=600)
    args = ap.parse_args()
    sides = {"tensorfleet": {"impl": "tensorfleet", "python": sys.executable, "trainer": os.path.join(ROOT, "trainer")}}
    if args.baseline_trainer:
        sides["baseline"] = {"impl": "tensorfleet", "python": sys.executable, "trainer": args.baseline_trainer}
    tf_python = _tf_python(args.tf_python)
    if tf_python:
        sides["tensorflow"] = {"impl": "tensorflow", "python": tf_python, "trainer": ""}
    else:
        print(f"tensorflow: not importable by {args.tf_python} (--tf-python)")
    print(f"{args.ps} ps + {args.workers} workers, {args.steps} steps, late join {args.late_join or 'no'}, "
          f"start together {'yes' if args.start_together else 'no'}, pause {args.pause_ms} ms, "
          f"{os.cpu_count()} CPUs, load average %.2f %.2f %.2f" % os.getloadavg(), flush=True)
    results: dict = {name: [] for name in sides}
    names = list(sides)
    with tempfile.TemporaryDirectory() as workdir:
        data = _save_data(workdir)
        for r in range(args.runs):
            for name in names[r % len(names):] + names[:r % len(names)]:
                res = run_job(sides[name], args, data, workdir)
                results[name].append(res)
                print(f"run {r + 1} {name:>11}: validation cross entropy {res['xent']:8.1f}, steps per worker "
                      f"{res['local_steps']}", flush=True)
    for name, rows in results.items():
        xs = [row["xent"] for row in rows if row["xent"] == row["xent"]]
        line = f"{name:>11}: median {statistics.median(xs):7.1f} [min {min(xs):.1f}, max {max(xs):.1f}, n={len(xs)}]"
        print(line)
        times = sorted(ms for row in rows for ms in row["step_ms"])
        if times:
            q = [times[min(len(times) - 1, int(f * len(times)))] for f in (0.5, 0.9, 0.99)]
            print(f"{'':>13}training step (Session.run) ms: p50 {q[0]:.2f}, p90 {q[1]:.2f}, p99 {q[2]:.2f}"
                  f" (p90/p50 {q[1] / q[0]:.2f})")
        for var in STALENESS_OF:
            stale = [s for row in rows for s in row["staleness"].get(var, [])]
            if stale:
                hist = dict(sorted(collections.Counter(stale).items()))
                print(f"{'':>13}{var} staleness: mean {statistics.mean(stale):.2f} {hist}"
                      + (f" (from global step {args.late_join})" if args.late_join else ""))
        windows = [w for row in rows for w in row["window_ms"]]
        if windows:
            window, its_step = (statistics.median(w[i] for w in windows) for i in (0, 1))
            print(f"{'':>13}read-to-update window on ps1 ms: p50 {window:.2f}, against a step (Session.run) "
                  f"p50 {its_step:.2f} in the same steps: {window / its_step:.2f} of a step")
        cpus = [row["cpu"] for row in rows if row["cpu"]]
        if cpus:
            w = statistics.median(ms for c in cpus for ms in c["worker"])
            ps = [statistics.median(c["ps"][i] for c in cpus) for i in range(args.ps)]
            print(f"{'':>13}CPU ms while training: per worker step {w:.2f}; per global step on each ps "
                  + ", ".join(f"{ms:.2f}" for ms in ps))
    print("end: load average %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()
