"""Training-step overhead of tensorfleet's Session.run against hand-written baselines.

    OPENBLAS_NUM_THREADS=1 python bench/step_overhead.py [--seconds 1] [--repeats 5]

For each workload (MLP 784-256-10, MLP 784-256-256-10, the small CNN; batch 100,
fed through feed_dict, plain SGD lr 0.1) it builds the same model in tensorfleet,
with the same initial parameters and batches as `bench/baselines.py`, and times
it in the same run against numpy by hand, PyTorch eager CPU and real TensorFlow's
TF1 graph mode (the latter two only when importable). The contenders take turns
every 50 steps (2 for the CNN) within each of `--repeats` rounds of about
`--seconds` each, so the machine's drift falls on all alike. It prints the median
absolute steps/s, the median over rounds of the ratio tensorfleet/baseline taken
within each round, and the thread settings.
Also: the per-call overhead of a trivial `Session.run` (two scalar feeds).
"""
from __future__ import annotations

import os
import sys

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import argparse  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import baselines as bl  # noqa: E402
import step_timing  # noqa: E402
import tensorfleet as tf  # noqa: E402


def _feed_step(sess, train_op, x, y, batches):
    state = {"i": 0}
    n = len(batches)

    def step():
        i = state["i"]
        state["i"] = (i + 1) % n
        bx, by = batches[i]
        sess.run(train_op, feed_dict={x: bx, y: by})

    return step


def tensorfleet_mlp(sizes, batch_size=100, lr=0.1, num_batches=16, seed=0):
    params = bl.init_mlp_params(sizes, seed=seed)
    batches = bl.make_batches(batch_size, num_batches, (sizes[0],), sizes[-1], seed=seed + 1)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, sizes[0]], name="x")
        y = tf.placeholder(tf.float32, [None, sizes[-1]], name="y")
        a = x
        for i, (w0, b0) in enumerate(params):
            w, b = tf.Variable(w0), tf.Variable(b0)
            a = tf.matmul(a, w) + b
            if i < len(params) - 1:
                a = tf.nn.relu(a)
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=a))
        train_op = tf.train.GradientDescentOptimizer(lr).minimize(loss)
        init = tf.global_variables_initializer()
    sess = tf.Session(graph=graph)
    sess.run(init)
    return _feed_step(sess, train_op, x, y, batches), (sess, loss, x, y, batches)


def tensorfleet_cnn(batch_size=100, lr=0.1, num_batches=16, seed=0):
    p = bl.init_cnn_params(seed=seed)
    batches = bl.make_batches(batch_size, num_batches, (28, 28, 1), 10, seed=seed + 1)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 28, 28, 1], name="x")
        y = tf.placeholder(tf.float32, [None, 10], name="y")

        def conv(a, w0, b0):
            w, b = tf.Variable(w0), tf.Variable(b0)
            h = tf.nn.relu(tf.nn.conv2d(a, w, strides=[1, 1, 1, 1], padding="SAME") + b)
            return tf.nn.max_pool(h, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")

        a = conv(conv(x, p["w1"], p["b1"]), p["w2"], p["b2"])
        a = tf.reshape(a, [-1, 7 * 7 * 16])
        logits = tf.matmul(a, tf.Variable(p["w3"])) + tf.Variable(p["b3"])
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=logits))
        train_op = tf.train.GradientDescentOptimizer(lr).minimize(loss)
        init = tf.global_variables_initializer()
    sess = tf.Session(graph=graph)
    sess.run(init)
    return _feed_step(sess, train_op, x, y, batches), (sess, loss, x, y, batches)


def check_same_computation(sizes=bl.MLP_SIZES, steps=3):
    """The tensorfleet model must follow the numpy baseline step for step (an honest comparison)."""
    ref = bl.numpy_mlp(sizes)
    step, (sess, loss, x, y, batches) = tensorfleet_mlp(sizes)
    for _ in range(steps):
        ref.step()
        step()
    bx, by = batches[steps % len(batches)]
    ours = float(sess.run(loss, {x: bx, y: by}))
    theirs, _ = bl.mlp_loss_and_grads(ref.state["params"], bx, by)
    return ours, theirs


def session_run_overhead(seconds, repeats):
    graph = tf.Graph()
    with graph.as_default():
        a = tf.placeholder(tf.float32, [], name="a")
        b = tf.placeholder(tf.float32, [], name="b")
        c = a + b
    sess = tf.Session(graph=graph)
    rate = step_timing.timeit_steps(lambda: sess.run(c, {a: 1.0, b: 2.0}), seconds=seconds, repeats=repeats)
    return 1e6 / rate


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--only", nargs="*", choices=["mlp", "mlp2", "cnn"])
    args = ap.parse_args(argv)
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(int(os.environ["OPENBLAS_NUM_THREADS"]))
    except Exception:  # noqa: BLE001
        pass

    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cpus, "
          f"python {platform.python_version()}, numpy {np.__version__}")
    ours, theirs = check_same_computation()
    print(f"same computation check (MLP loss after 3 steps): tensorfleet {ours:.6f} vs numpy {theirs:.6f}")
    print(f"trivial Session.run with two scalar feeds: {session_run_overhead(args.seconds, args.repeats):.1f} µs/call")

    workloads = {
        "mlp": (lambda: tensorfleet_mlp(bl.MLP_SIZES)[0], "784-256-10"),
        "mlp2": (lambda: tensorfleet_mlp(bl.MLP2_SIZES)[0], "784-256-256-10"),
        "cnn": (lambda: tensorfleet_cnn()[0], "conv8-conv16-dense"),
    }
    rows = []
    for key in args.only or list(workloads):
        build, desc = workloads[key]
        peers = {"numpy": bl.BASELINES[f"numpy_{key}"]}
        if bl.torch_available():
            peers["torch"] = lambda key=key: bl.BASELINES[f"torch_{key}"](threads=1)
        if bl.tf_available():
            peers["tf1"] = lambda key=key: bl.BASELINES[f"tf1_{key}"](threads=1)
        steps = {"tensorfleet": build()}
        steps.update({name: make().step for name, make in peers.items()})
        # The contenders take turns every few steps, so machine noise hits all of them alike;
        # ratios are taken within each round, then the median over rounds.
        secs = args.seconds if key != "cnn" else max(args.seconds, 2.0)
        rates = step_timing.interleaved_rates(steps, seconds=secs, rounds=args.repeats,
                                              chunk=50 if key != "cnn" else 2)
        med = {name: float(np.median(r)) for name, r in rates.items()}
        ratios = {name: step_timing.ratio_per_round(rates, "tensorfleet", name) for name in rates}
        for name, r in med.items():
            ratio = "" if name == "tensorfleet" else f"  tensorfleet/{name} = {ratios[name]:.3f}"
            print(f"{key:5s} {desc:20s} {name:12s} {r:8.1f} steps/s{ratio}", flush=True)
        rows.append((key, med, ratios))
    print(step_timing.format_thread_info(step_timing.thread_info()))
    return rows


if __name__ == "__main__":
    t0 = time.time()
    main()
    print(f"bench took {time.time() - t0:.0f} s")
