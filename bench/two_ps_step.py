"""One worker's step time over two ps tasks (dist-mnist's layout, one worker): this checkout, another, TF.

    python bench/two_ps_step.py [--rounds 5] [--steps 600] [--baseline-trainer DIR] [--tf-python PATH]
        [--pull-mb MB]

Three processes on 127.0.0.1, BLAS at one thread: two ps tasks and a worker that builds dist-mnist's model
under `replica_device_setter(cluster=)` (a 784-100-10 MLP; hid_w and sm_w on ps1, the biases, beta powers and
`global_step` on ps0), `AdamOptimizer(0.01).minimize(loss, global_step=)`, then times `--steps` training steps on
one fixed batch of 100 after 50 to warm up. A step here is a pull from both ps, the worker's pass, a push to
both, and the ordering of the step's end (beta powers, `global_step`). Sides, rotated round by round:
tensorfleet (this checkout), `baseline` (`--baseline-trainer DIR`: another checkout's trainer/, e.g.
`git archive <commit> trainer | tar -x -C /tmp/base`), tensorflow (`tf.compat.v1`, when `--tf-python`, default
this interpreter, imports it). `--pull-mb MB`: instead of training, a step pulls an MB-sized variable
from each ps (the large-transfer case: both replies must still move in parallel). Prints ms per step per
round, per side the median, the ratios of medians to
tensorfleet's, the CPU time per step of the worker process and of both ps processes (/proc), and the machine.
"""
from __future__ import annotations

import os
import sys

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from dist_mnist_adam import _free_ports  # noqa: E402  (the same job's bench: one way to pick ports)


def task_main(impl: str, spec: dict) -> None:
    """A ps joins its server; the worker times its steps and prints one JSON line."""
    import numpy as np

    from dist_mnist_adam import _model, _runtime

    tf = _runtime(impl)
    cluster = tf.train.ClusterSpec(spec["cluster"])
    server = tf.train.Server(cluster, job_name=spec["job"], task_index=spec["index"])
    if spec["job"] == "ps":
        server.join()
        return
    rng = np.random.RandomState(0)
    if spec["pull_mb"]:
        big = []
        for i in range(2):
            with tf.device(f"/job:ps/task:{i}"):
                big.append(tf.Variable(tf.zeros([int(spec["pull_mb"] * 2 ** 18)]), name=f"big{i}"))
        with tf.device("/job:worker/task:0"):
            train_op, feed = big[0][:1] + big[1][:1], {}
    else:
        with tf.device(tf.train.replica_device_setter(worker_device="/job:worker/task:0", cluster=cluster)):
            global_step = tf.Variable(0, name="global_step", trainable=False)
            x, y_, loss = _model(tf)
            train_op = tf.train.AdamOptimizer(0.01).minimize(loss, global_step=global_step)
        feed = {x: rng.rand(100, 784).astype(np.float32), y_: np.eye(10, dtype=np.float32)[rng.randint(0, 10, 100)]}
    sess = tf.Session(server.target, config=tf.ConfigProto(device_filters=["/job:ps", "/job:worker/task:0"]))
    sess.run(tf.global_variables_initializer())
    for _ in range(50):
        sess.run(train_op, feed)
    ps_cpu, cpu, started = _cpu_seconds(spec["ps_pids"]), time.process_time(), time.perf_counter()
    for _ in range(spec["steps"]):
        sess.run(train_op, feed)
    elapsed, cpu, ps_cpu = (time.perf_counter() - started, time.process_time() - cpu,
                            _cpu_seconds(spec["ps_pids"]) - ps_cpu)
    n = spec["steps"] / 1e3
    print(json.dumps({"ms": elapsed / n, "worker_cpu_ms": cpu / n, "ps_cpu_ms": ps_cpu / n}), flush=True)
    os._exit(0)   # the parent ends the ps tasks


def _cpu_seconds(pids: list) -> float:
    """User + system CPU seconds of these processes so far (/proc/PID/stat), all together."""
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def run_side(side: dict, steps: int, pull_mb: float) -> dict:
    p = _free_ports(3)
    cluster = {"ps": [f"127.0.0.1:{p[0]}", f"127.0.0.1:{p[1]}"], "worker": [f"127.0.0.1:{p[2]}"]}
    env = dict(os.environ)
    if side["trainer"]:
        env["PYTHONPATH"] = os.pathsep.join([side["trainer"], env.get("PYTHONPATH", "")])
    procs = []
    try:
        for job, index in (("ps", 0), ("ps", 1), ("worker", 0)):
            spec = {"cluster": cluster, "job": job, "index": index, "steps": steps, "pull_mb": pull_mb,
                    "ps_pids": [proc.pid for proc in procs]}
            procs.append(subprocess.Popen([side["python"], os.path.abspath(__file__), "--task", side["impl"],
                                           json.dumps(spec)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                          text=True, env=env))
        out, _ = procs[-1].communicate(timeout=300)
        lines = [ln for ln in out.splitlines() if ln.startswith("{")]
        return json.loads(lines[-1]) if lines else {"ms": float("nan"), "worker_cpu_ms": float("nan"),
                                                     "ps_cpu_ms": float("nan")}
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait(10)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--task":
        task_main(sys.argv[2], json.loads(sys.argv[3]))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--baseline-trainer", default="")
    ap.add_argument("--tf-python", default=sys.executable)
    ap.add_argument("--pull-mb", type=float, default=0.0)
    args = ap.parse_args()
    sides = {"tensorfleet": {"impl": "tensorfleet", "python": sys.executable,
                             "trainer": os.path.join(ROOT, "trainer")}}
    if args.baseline_trainer:
        sides["baseline"] = {"impl": "tensorfleet", "python": sys.executable, "trainer": args.baseline_trainer}
    if subprocess.run([args.tf_python, "-c", "import tensorflow"], stdout=subprocess.DEVNULL,
                      stderr=subprocess.DEVNULL).returncode == 0:
        sides["tensorflow"] = {"impl": "tensorflow", "python": args.tf_python, "trainer": ""}
    print(f"machine: {platform.machine()} {os.cpu_count()} cpus, {platform.python_implementation()} "
          f"{platform.python_version()}, load average %.2f %.2f %.2f" % os.getloadavg(), flush=True)
    names, results = list(sides), {name: [] for name in sides}
    for r in range(args.rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            got = results[name]
            got.append(run_side(sides[name], args.steps, args.pull_mb))
            print(f"round {r + 1} {name:>11}: {got[-1]['ms']:.2f} ms per step, CPU per step: worker "
                  f"{got[-1]['worker_cpu_ms']:.2f} ms, both ps {got[-1]['ps_cpu_ms']:.2f} ms", flush=True)
    ours = statistics.median(row["ms"] for row in results["tensorfleet"])
    for name, rows in results.items():
        ms = [row["ms"] for row in rows]
        med = statistics.median(ms)
        print(f"{name:>11}: median {med:.2f} ms per step [{min(ms):.2f}-{max(ms):.2f}], {med / ours:.2f}x "
              f"tensorfleet's; CPU per step: worker {statistics.median(r['worker_cpu_ms'] for r in rows):.2f} ms, "
              f"both ps {statistics.median(r['ps_cpu_ms'] for r in rows):.2f} ms")
    print("end: load average %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()
