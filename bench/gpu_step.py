"""GPU training-step benchmark: tensorfleet on cupy against hand-written cupy and PyTorch (eager, CUDA graph).

    python bench/gpu_step.py [--seconds 2] [--rounds 3] [--only small|wide] [--json out.json]

Two workloads, float32, softmax cross-entropy averaged over the batch, plain SGD (lr 0.01):
* small: MLP 784-256-256-10, ReLU, batch 128
* wide:  MLP 784-4096-4096-4096-10, ReLU, batch 1024
Every implementation performs the same full step (forward, backward, SGD update) on
the next of 8 pre-made host (numpy) batches, i.e. each step copies its batch to the
GPU, the way a TF1 `feed_dict` does:
* tensorfleet           `Session.run(train_op, feed_dict)`, all nodes placed on GPU:0 by default
* tensorfleet+graph     the same with `ConfigProto.experimental.cuda_graph_replay = True`
* cupy (hand)           the step written by hand against cupy
* torch eager           nn.Sequential + torch.optim.SGD on cuda
* torch cuda graph      the whole step captured with torch.cuda.graph and replayed
Each is timed for `--rounds` windows of `--seconds` (device synchronized at the end
of each window) after a warm-up; the median steps/s is reported, with the targets
of the issue (wide within 1.05x of PyTorch; small faster than torch eager, and with
CUDA-graph replay at least half of torch's CUDA-graph rate). All in one process, one run.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import numpy as np

WORKLOADS = {"small": ((784, 256, 256, 10), 128), "wide": ((784, 4096, 4096, 4096, 10), 1024)}
LR = 0.01
NUM_BATCHES = 8


def make_params(sizes, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((a, b)).astype(np.float32) * np.float32(np.sqrt(2.0 / a)),
             np.zeros(b, np.float32)) for a, b in zip(sizes[:-1], sizes[1:])]


def make_batches(sizes, batch, seed=1):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(NUM_BATCHES):
        x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
        labels = rng.integers(0, sizes[-1], batch)
        y = np.zeros((batch, sizes[-1]), np.float32)
        y[np.arange(batch), labels] = 1.0
        out.append((x, y))
    return out


def cycling(batches):
    state = [0]

    def nxt():
        i = state[0]
        state[0] = (i + 1) % len(batches)
        return batches[i]

    return nxt


# -- tensorfleet ---------------------------------------------------------------------
def tensorfleet_step(sizes, batch, replay=False):
    import tensorfleet as tf

    params, batches = make_params(sizes), make_batches(sizes, batch)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [batch, sizes[0]], name="x")
        y = tf.placeholder(tf.float32, [batch, sizes[-1]], name="y")
        a = x
        for i, (w0, b0) in enumerate(params):
            a = tf.matmul(a, tf.Variable(w0)) + tf.Variable(b0)
            if i < len(params) - 1:
                a = tf.nn.relu(a)
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=a))
        train_op = tf.train.GradientDescentOptimizer(LR).minimize(loss)
        init = tf.global_variables_initializer()
    cfg = tf.ConfigProto()
    cfg.experimental.cuda_graph_replay = replay
    sess = tf.Session(graph=graph, config=cfg)
    sess.run(init)
    placement = sess.device_placement()
    nxt = cycling(batches)

    def step():
        bx, by = nxt()
        sess.run(train_op, {x: bx, y: by})

    def info():
        plans = [p for k, p in sess._plans.items() if train_op in k[2]]
        rep = plans[0].replay if plans else None
        devices = sorted(set(placement.values()) | set(sess.device_placement().values()))
        return {"devices": devices, "replays": getattr(rep, "replays", None),
                "replay_error": repr(getattr(rep, "last_error", None)) if rep is not None else None,
                "loss": float(sess.run(loss, {x: batches[0][0], y: batches[0][1]}))}

    return step, info


# -- hand-written cupy -----------------------------------------------------------------
def cupy_step(sizes, batch):
    import cupy as cp

    params = [(cp.asarray(w), cp.asarray(b)) for w, b in make_params(sizes)]
    nxt = cycling(make_batches(sizes, batch))

    def step():
        bx, by = nxt()
        x, y = cp.asarray(bx), cp.asarray(by)
        acts = [x]
        a = x
        for i, (w, b) in enumerate(params):
            a = a @ w + b
            if i < len(params) - 1:
                a = cp.maximum(a, 0)
            acts.append(a)
        z = a - a.max(axis=1, keepdims=True)
        e = cp.exp(z)
        p = e / e.sum(axis=1, keepdims=True)
        g = (p - y) / np.float32(batch)
        for i in range(len(params) - 1, -1, -1):
            w, b = params[i]
            dw = acts[i].T @ g
            db = g.sum(axis=0)
            if i > 0:
                g = (g @ w.T) * (acts[i] > 0)
            w -= np.float32(LR) * dw
            b -= np.float32(LR) * db

    return step, lambda: {}


# -- PyTorch ---------------------------------------------------------------------------
def _torch_model(sizes):
    import torch

    layers = []
    for i, (w0, b0) in enumerate(make_params(sizes)):
        lin = torch.nn.Linear(w0.shape[0], w0.shape[1])
        with torch.no_grad():
            lin.weight.copy_(torch.from_numpy(w0.T.copy()))
            lin.bias.copy_(torch.from_numpy(b0))
        layers.append(lin)
        if i < len(sizes) - 2:
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers).cuda()


def torch_eager_step(sizes, batch):
    import torch

    model = _torch_model(sizes)
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    batches = [(torch.from_numpy(x).pin_memory(), torch.from_numpy(y).pin_memory())
               for x, y in make_batches(sizes, batch)]
    nxt = cycling(batches)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        bx, by = nxt()
        x, y = bx.cuda(non_blocking=True), by.cuda(non_blocking=True)
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()

    return step, lambda: {}


def torch_graph_step(sizes, batch):
    import torch

    model = _torch_model(sizes)
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    loss_fn = torch.nn.CrossEntropyLoss()
    batches = [(torch.from_numpy(x).pin_memory(), torch.from_numpy(y).pin_memory())
               for x, y in make_batches(sizes, batch)]
    static_x = torch.empty((batch, sizes[0]), device="cuda")
    static_y = torch.empty((batch, sizes[-1]), device="cuda")
    static_x.copy_(batches[0][0])
    static_y.copy_(batches[0][1])
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up on a side stream, as the PyTorch docs ask
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            loss_fn(model(static_x), static_y).backward()
            opt.step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        static_loss = loss_fn(model(static_x), static_y)
        static_loss.backward()
        opt.step()
    nxt = cycling(batches)

    def step():
        bx, by = nxt()
        static_x.copy_(bx, non_blocking=True)
        static_y.copy_(by, non_blocking=True)
        graph.replay()

    return step, lambda: {}


IMPLS = {
    "tensorfleet": lambda s, b: tensorfleet_step(s, b, replay=False),
    "tensorfleet+graph": lambda s, b: tensorfleet_step(s, b, replay=True),
    "cupy (hand)": cupy_step,
    "torch eager": torch_eager_step,
    "torch cuda graph": torch_graph_step,
}


def sync():
    try:
        import cupy as cp

        cp.cuda.Device().synchronize()
    except Exception:  # noqa: BLE001
        pass
    try:
        import torch

        if torch.cuda.is_available():
            torch.cuda.synchronize()
    except Exception:  # noqa: BLE001
        pass


def time_steps(step, seconds, rounds, warmup=20) -> list:
    for _ in range(warmup):
        step()
    sync()
    rates = []
    for _ in range(rounds):
        n = 0
        t0 = time.perf_counter()
        while True:
            for _ in range(10):
                step()
            n += 10
            if time.perf_counter() - t0 >= seconds:
                break
        sync()
        rates.append(n / (time.perf_counter() - t0))
    return rates


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", choices=sorted(WORKLOADS))
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args(argv)
    try:
        import cupy as cp

        props = cp.cuda.runtime.getDeviceProperties(0)
        gpu = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    except Exception as e:  # noqa: BLE001
        print(f"needs cupy and a CUDA GPU: {e}", file=sys.stderr)
        return 2
    print(f"GPU: {gpu}; python {sys.version.split()[0]}; numpy {np.__version__}; cupy {cp.__version__}")
    results: dict = {}
    for wname, (sizes, batch) in WORKLOADS.items():
        if args.only and wname != args.only:
            continue
        results[wname] = {}
        for iname, make in IMPLS.items():
            try:
                step, info = make(sizes, batch)
                rates = time_steps(step, args.seconds, args.rounds)
                results[wname][iname] = {"steps_per_s": statistics.median(rates), "rounds": rates, **info()}
            except Exception as e:  # noqa: BLE001  (report and go on: one run collects everything it can)
                results[wname][iname] = {"error": f"{type(e).__name__}: {e}"}
            r = results[wname][iname]
            print(f"{wname:6s} {iname:18s} " + (f"{r['steps_per_s']:9.1f} steps/s  rounds "
                                               f"{[round(x) for x in r['rounds']]}" if "error" not in r
                                               else r["error"]), flush=True)
    print()
    print("| workload | tensorfleet | tensorfleet + CUDA graph | cupy (hand) | torch eager | torch CUDA graph |")
    print("|---|---|---|---|---|---|")
    for wname, res in results.items():
        cells = [f"{res[i]['steps_per_s']:.0f}" if "steps_per_s" in res.get(i, {}) else "n/a" for i in IMPLS]
        print(f"| {wname} | " + " | ".join(cells) + " |")
    print()
    for wname, res in results.items():
        tf_rate = res.get("tensorfleet", {}).get("steps_per_s")
        gr_rate = res.get("tensorfleet+graph", {}).get("steps_per_s")
        te = res.get("torch eager", {}).get("steps_per_s")
        tg = res.get("torch cuda graph", {}).get("steps_per_s")
        if wname == "wide" and tf_rate and te:
            best = max(r for r in (tf_rate, gr_rate or 0))
            print(f"target wide: torch eager / tensorfleet = {te / best:.3f} (<= 1.05 wanted)")
        if wname == "small" and tf_rate and te:
            print(f"target small: tensorfleet / torch eager = {tf_rate / te:.2f} (> 1 wanted)")
        if wname == "small" and gr_rate and tg:
            print(f"target small: tensorfleet+graph / torch cuda graph = {gr_rate / tg:.2f} (>= 0.5 wanted)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"gpu": gpu, "results": results}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
