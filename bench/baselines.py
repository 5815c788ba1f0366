"""Hand-written training-step baselines for Tensorfleet's benchmarks.

``bench/step_overhead.py`` imports this module and times these baselines in the
same run as Tensorfleet's ``Session.run`` step, so the comparison is side by side
on the same machine state.  Every builder returns a :class:`Baseline` whose
``step()`` takes no arguments and performs one full training step
(forward + backward + SGD update) on the next of ``num_batches`` pre-made random
batches, cycling like a ``feed_dict`` would (a fresh batch object every step).

Workloads (float32, softmax cross-entropy averaged over the batch, plain SGD):

* ``mlp``  784-256-10, ReLU, lr 0.1, batch 100           (runtime-anchors.md Sec. 1-2)
* ``mlp2`` 784-256-256-10, ReLU, lr 0.1, batch 100
* ``cnn``  28x28x1 NHWC, conv 5x5x1x8 SAME + ReLU + maxpool 2x2/2,
  conv 5x5x8x16 SAME + ReLU + maxpool 2x2/2, dense 784->10; lr 0.1, batch 100

Implementations: numpy by hand (gradients derived by hand and checked against
finite differences in ``tests/trainer/test_bench_baselines.py``, so they are an
honest oracle), PyTorch eager CPU (only if ``import torch`` works) and real
TensorFlow in TF1 graph mode (only if ``import tensorflow`` works).  Neither
torch nor tensorflow is a dependency of anything.

``python bench/baselines.py`` times every available baseline with 1 BLAS/OMP
thread (``--threads N`` to change) and prints steps/s plus the thread settings
(timing and thread reporting: ``bench/step_timing.py``; import this module with
``bench/`` on ``sys.path``).
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__":  # must happen before numpy/torch load their BLAS
    _t = "1"
    for _i, _a in enumerate(sys.argv):
        if _a == "--threads" and _i + 1 < len(sys.argv):
            _t = sys.argv[_i + 1]
        elif _a.startswith("--threads="):
            _t = _a.split("=", 1)[1]
    for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_v, _t)

import functools
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from step_timing import format_thread_info, thread_info, timeit_steps

__all__ = [
    "Baseline",
    "BASELINES",
    "MLP_SIZES",
    "MLP2_SIZES",
    "available_baselines",
    "cnn_forward",
    "cnn_loss_and_grads",
    "init_cnn_params",
    "init_mlp_params",
    "make_batches",
    "mlp_loss_and_grads",
    "numpy_cnn",
    "numpy_mlp",
    "tf1_cnn",
    "tf1_mlp",
    "tf_available",
    "torch_available",
    "torch_cnn",
    "torch_mlp",
]

MLP_SIZES = (784, 256, 10)
MLP2_SIZES = (784, 256, 256, 10)


class Baseline:
    """A ready-to-time training step.

    ``step()`` runs one training step.  ``state`` holds the parameters and
    framework objects (numpy: ``params``; torch: ``model``/``optimizer``; tf:
    ``session``/``graph``); ``loss()`` returns the loss of the most recent step
    (it may cost a framework call, so it is not done inside ``step``).
    Attributes: ``name``, ``framework``, ``step``, ``batch_size``, ``state``,
    ``loss``.
    """

    __slots__ = ("name", "framework", "step", "batch_size", "state", "loss")

    def __init__(self, name: str, framework: str, step: Callable[[], Any],
                 batch_size: int, state: Dict[str, Any], loss: Callable[[], float]):
        self.name = name
        self.framework = framework
        self.step = step
        self.batch_size = batch_size
        self.state = state
        self.loss = loss

    def __call__(self):
        return self.step()

    def __repr__(self):
        return "Baseline(%r, framework=%r, batch_size=%d)" % (
            self.name, self.framework, self.batch_size)


# =========================================================================== data
def make_batches(batch_size=100, num_batches=16, input_shape=(784,), num_classes=10,
                 seed=0, dtype=np.float32) -> List[Tuple[np.ndarray, np.ndarray]]:
    """``num_batches`` random (x, one_hot_y) pairs; x uniform in [0, 1)."""
    rng = np.random.RandomState(seed)
    out = []
    for _ in range(num_batches):
        x = rng.random_sample((batch_size,) + tuple(input_shape)).astype(dtype)
        y = np.zeros((batch_size, num_classes), dtype=dtype)
        y[np.arange(batch_size), rng.randint(0, num_classes, batch_size)] = 1
        out.append((x, y))
    return out


def _softmax_xent(logits, y):
    """Mean softmax cross-entropy and its gradient w.r.t. logits."""
    z = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(z)
    s = e.sum(axis=1, keepdims=True)
    p = e / s
    n = logits.shape[0]
    loss = float(-(y * (z - np.log(s))).sum() / n)
    return loss, (p - y) * (logits.dtype.type(1.0) / logits.dtype.type(n))


# =========================================================================== MLP
def init_mlp_params(sizes: Sequence[int] = MLP_SIZES, seed=0, dtype=np.float32):
    """``[[W0, b0], [W1, b1], ...]``; W ~ N(0, 0.1) (truncated-normal-like), b = 0."""
    rng = np.random.RandomState(seed)
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        w = np.clip(rng.standard_normal((fan_in, fan_out)), -2, 2) * 0.1
        params.append([w.astype(dtype), np.zeros(fan_out, dtype=dtype)])
    return params


def mlp_loss_and_grads(params, x, y):
    """Loss and ``[[dW, db], ...]`` for a ReLU MLP with softmax cross-entropy mean."""
    acts = [x]
    pre = []
    a = x
    last = len(params) - 1
    for i, (w, b) in enumerate(params):
        h = a @ w
        h += b
        if i < last:
            pre.append(h)
            a = np.maximum(h, 0)
            acts.append(a)
        else:
            logits = h
    loss, d = _softmax_xent(logits, y)
    grads = [None] * len(params)
    for i in range(last, -1, -1):
        grads[i] = [acts[i].T @ d, d.sum(axis=0)]
        if i > 0:
            d = d @ params[i][0].T
            d *= pre[i - 1] > 0
    return loss, grads


def _sgd_steps(params, batches, lr, dtype, loss_and_grads):
    """(state, step) for a hand-written SGD step cycling through `batches` like a feed_dict.

    `loss_and_grads(x, y)` returns the loss and one gradient per array of `params`
    (same order); the update is done in place (grad *= lr; param -= grad).
    """
    lr = np.dtype(dtype).type(lr)
    state = {"batches": batches, "i": 0, "loss": float("nan")}

    def step():
        i = state["i"]
        state["i"] = (i + 1) % len(batches)
        loss, grads = loss_and_grads(*batches[i])
        for p, g in zip(params, grads):
            g *= lr
            p -= g
        state["loss"] = loss

    return state, step


def _flat_mlp_grads(params, x, y):
    loss, grads = mlp_loss_and_grads(params, x, y)
    return loss, [g for layer in grads for g in layer]


def _flat_cnn_grads(params, keys, x, y):
    loss, grads = cnn_loss_and_grads(params, x, y)
    return loss, [grads[k] for k in keys]


def numpy_mlp(sizes: Sequence[int] = MLP_SIZES, batch_size=100, lr=0.1,
              num_batches=16, seed=0, dtype=np.float32) -> Baseline:
    """numpy by hand: one fwd+bwd+SGD step of a ReLU MLP per ``step()``."""
    params = init_mlp_params(sizes, seed=seed, dtype=dtype)
    batches = make_batches(batch_size, num_batches, (sizes[0],), sizes[-1],
                           seed=seed + 1, dtype=dtype)
    flat = [p for layer in params for p in layer]
    state, step = _sgd_steps(flat, batches, lr, dtype,
                             lambda x, y: _flat_mlp_grads(params, x, y))
    state["params"] = params

    name = "numpy_mlp_" + "_".join(str(s) for s in sizes)
    return Baseline(name, "numpy", step, batch_size, state, lambda: state["loss"])


# =========================================================================== CNN
def init_cnn_params(seed=0, dtype=np.float32, in_channels=1, image_size=28,
                    c1=8, c2=16, ksize=5, num_classes=10):
    """Parameters of the small CNN (HWIO conv kernels, dense on NHWC-flattened)."""
    rng = np.random.RandomState(seed)

    def tn(shape, std):
        return (np.clip(rng.standard_normal(shape), -2, 2) * std).astype(dtype)

    flat = (image_size // 4) ** 2 * c2
    return {
        "w1": tn((ksize, ksize, in_channels, c1), 0.1),
        "b1": np.full(c1, 0.1, dtype=dtype),
        "w2": tn((ksize, ksize, c1, c2), 0.1),
        "b2": np.full(c2, 0.1, dtype=dtype),
        "w3": tn((flat, num_classes), 0.1),
        "b3": np.zeros(num_classes, dtype=dtype),
    }


def _im2col_same(x, k):
    """NHWC -> [N*H*W, k*k*C] patches in (kh, kw, c) order; SAME, stride 1.

    ``sliding_window_view`` gives [N, H, W, C, kh, kw]; moving C innermost before
    the (copying) reshape keeps the copy's inner runs contiguous (3x faster than
    copying in (c, kh, kw) order for C=16) and matches the HWIO kernel layout, so
    the kernel matrix is a free reshape.
    """
    n, h, w, c = x.shape
    p = k // 2
    xp = np.pad(x, ((0, 0), (p, k - 1 - p), (p, k - 1 - p), (0, 0)))
    win = sliding_window_view(xp, (k, k), axis=(1, 2))  # [N, H, W, C, kh, kw]
    return win.transpose(0, 1, 2, 4, 5, 3).reshape(n * h * w, k * k * c)


def _conv_same(x, w, b):
    n, h, wd, _ = x.shape
    kh, kw, ci, co = w.shape
    cols = _im2col_same(x, kh)
    out = cols @ w.reshape(kh * kw * ci, co)
    out += b
    return out.reshape(n, h, wd, co), cols


def _conv_same_backward(dout, cols, w, need_dx):
    """Grads of a SAME stride-1 conv: (dx or None, dw, db).

    dx is the transposed convolution: each of the k*k kernel taps contributes
    ``dout . W[i, j]^T`` shifted by (i, j) onto the padded input.  Done as k*k
    small matmuls with contiguous results, measured faster here (9.5 ms for the
    CNN's conv2 at batch 100) than an im2col of dout (11 ms) or one big matmul
    followed by a strided col2im (28 ms).
    """
    kh, kw, ci, co = w.shape
    n, h, wd, _ = dout.shape
    d2 = dout.reshape(-1, co)
    dw = (cols.T @ d2).reshape(kh, kw, ci, co)
    db = d2.sum(axis=0)
    dx = None
    if need_dx:
        p = kh // 2
        dxp = np.zeros((n, h + kh - 1, wd + kw - 1, ci), dtype=dout.dtype)
        for i in range(kh):
            for j in range(kw):
                dxp[:, i:i + h, j:j + wd, :] += (d2 @ w[i, j].T).reshape(n, h, wd, ci)
        dx = dxp[:, p:p + h, p:p + wd, :]
    return dx, dw, db


def _maxpool2(x):
    """2x2/2 max pool (NHWC, even H, W) -> (out, masks of the 4 window taps).

    Gradient goes to the first maximal tap in row-major window order, like TF's
    MaxPoolGrad; the masks encode that choice.
    """
    a, b = x[:, 0::2, 0::2], x[:, 0::2, 1::2]
    c, d = x[:, 1::2, 0::2], x[:, 1::2, 1::2]
    out = np.maximum(np.maximum(a, b), np.maximum(c, d))
    ma = a == out
    mb = (b == out) & ~ma
    taken = ma | mb
    mc = (c == out) & ~taken
    taken |= mc
    md = ~taken
    return out, (ma, mb, mc, md)


def _maxpool2_backward(dout, masks, shape):
    dx = np.empty(shape, dtype=dout.dtype)
    for (di, dj), m in zip(((0, 0), (0, 1), (1, 0), (1, 1)), masks):
        np.multiply(dout, m, out=dx[:, di::2, dj::2])
    return dx


def cnn_forward(params, x):
    """Logits and the cache needed by the backward pass."""
    h1, cols1 = _conv_same(x, params["w1"], params["b1"])
    a1 = np.maximum(h1, 0)
    p1, masks1 = _maxpool2(a1)
    h2, cols2 = _conv_same(p1, params["w2"], params["b2"])
    a2 = np.maximum(h2, 0)
    p2, masks2 = _maxpool2(a2)
    flat = p2.reshape(p2.shape[0], -1)
    logits = flat @ params["w3"]
    logits += params["b3"]
    cache = (h1, cols1, a1.shape, masks1, p1.shape,
             h2, cols2, a2.shape, masks2, p2.shape, flat)
    return logits, cache


def cnn_loss_and_grads(params, x, y):
    """Loss and a dict of gradients (same keys as ``params``) for the small CNN."""
    logits, cache = cnn_forward(params, x)
    (h1, cols1, a1_shape, masks1, p1_shape,
     h2, cols2, a2_shape, masks2, p2_shape, flat) = cache
    loss, d = _softmax_xent(logits, y)
    g = {"w3": flat.T @ d, "b3": d.sum(axis=0)}
    dp2 = (d @ params["w3"].T).reshape(p2_shape)
    da2 = _maxpool2_backward(dp2, masks2, a2_shape)
    da2 *= h2 > 0
    dp1, g["w2"], g["b2"] = _conv_same_backward(da2, cols2, params["w2"], True)
    da1 = _maxpool2_backward(dp1, masks1, a1_shape)
    da1 *= h1 > 0
    _, g["w1"], g["b1"] = _conv_same_backward(da1, cols1, params["w1"], False)
    return loss, g


def numpy_cnn(batch_size=100, lr=0.1, num_batches=16, seed=0,
              dtype=np.float32) -> Baseline:
    """numpy by hand (im2col via sliding_window_view + matmul) small CNN step."""
    params = init_cnn_params(seed=seed, dtype=dtype)
    batches = make_batches(batch_size, num_batches, (28, 28, 1), 10, seed=seed + 1,
                           dtype=dtype)
    keys = list(params)
    state, step = _sgd_steps([params[k] for k in keys], batches, lr, dtype,
                             lambda x, y: _flat_cnn_grads(params, keys, x, y))
    state["params"] = params

    return Baseline("numpy_cnn", "numpy", step, batch_size, state,
                    lambda: state["loss"])


# =========================================================================== torch
def torch_available() -> bool:
    try:
        import torch  # noqa: F401
    except Exception:  # noqa: BLE001 - any import failure means "not available"
        return False
    return True


def _torch_train_step(model, batches, lr, name, batch_size):
    import torch

    opt = torch.optim.SGD(model.parameters(), lr=lr)
    loss_fn = torch.nn.CrossEntropyLoss()
    state = {"model": model, "optimizer": opt, "batches": batches, "i": 0,
             "loss": None}
    n = len(batches)

    def step():
        i = state["i"]
        state["i"] = (i + 1) % n
        x, t = batches[i]
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), t)
        loss.backward()
        opt.step()
        state["loss"] = loss

    def last_loss():
        return float("nan") if state["loss"] is None else float(state["loss"].item())

    return Baseline(name, "torch", step, batch_size, state, last_loss)


def _torch_batches(np_batches, nchw=False):
    import torch

    out = []
    for x, y in np_batches:
        if nchw:
            x = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
        out.append((torch.from_numpy(x), torch.from_numpy(y.argmax(axis=1))))
    return out


def torch_mlp(sizes: Sequence[int] = MLP_SIZES, batch_size=100, lr=0.1, num_batches=16,
              seed=0, threads: Optional[int] = None) -> Baseline:
    """PyTorch eager CPU MLP (nn.Sequential + SGD).  Raises ImportError w/o torch."""
    import torch

    if threads is not None:
        torch.set_num_threads(int(threads))
    torch.manual_seed(seed)
    layers: List[Any] = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(torch.nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(torch.nn.ReLU())
    model = torch.nn.Sequential(*layers)
    batches = _torch_batches(make_batches(batch_size, num_batches, (sizes[0],),
                                          sizes[-1], seed=seed + 1))
    name = "torch_mlp_" + "_".join(str(s) for s in sizes)
    return _torch_train_step(model, batches, lr, name, batch_size)


def torch_cnn(batch_size=100, lr=0.1, num_batches=16, seed=0,
              threads: Optional[int] = None) -> Baseline:
    """PyTorch eager CPU version of the small CNN (NCHW internally)."""
    import torch
    from torch import nn

    if threads is not None:
        torch.set_num_threads(int(threads))
    torch.manual_seed(seed)
    model = nn.Sequential(
        nn.Conv2d(1, 8, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2, 2),
        nn.Conv2d(8, 16, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2, 2),
        nn.Flatten(), nn.Linear(7 * 7 * 16, 10))
    batches = _torch_batches(make_batches(batch_size, num_batches, (28, 28, 1), 10,
                                          seed=seed + 1), nchw=True)
    return _torch_train_step(model, batches, lr, "torch_cnn", batch_size)


# =========================================================================== TF1
def tf_available() -> bool:
    try:
        import tensorflow  # noqa: F401
    except Exception:  # noqa: BLE001
        return False
    return True


def _tf1():
    import tensorflow as tf

    v1 = tf.compat.v1
    return v1


def _tf1_session(v1, graph, threads):
    kw = {}
    if threads is not None:
        kw = dict(intra_op_parallelism_threads=int(threads),
                  inter_op_parallelism_threads=int(threads))
    return v1.Session(graph=graph, config=v1.ConfigProto(**kw))


def _tf1_baseline(name, build, input_shape, batch_size, lr, num_batches, seed, threads):
    v1 = _tf1()
    graph = v1.Graph()
    with graph.as_default():
        v1.set_random_seed(seed)
        x = v1.placeholder(np.float32, (None,) + tuple(input_shape), name="x")
        y = v1.placeholder(np.float32, (None, 10), name="y")
        logits = build(v1, x)
        loss = v1.reduce_mean(
            v1.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=logits))
        train_op = v1.train.GradientDescentOptimizer(lr).minimize(loss)
        init = v1.global_variables_initializer()
    sess = _tf1_session(v1, graph, threads)
    sess.run(init)
    batches = make_batches(batch_size, num_batches, input_shape, 10, seed=seed + 1)
    state = {"session": sess, "graph": graph, "batches": batches, "i": 0,
             "x": x, "y": y, "loss_t": loss, "train_op": train_op}

    def step():
        i = state["i"]
        state["i"] = (i + 1) % num_batches
        bx, by = batches[i]
        sess.run(train_op, feed_dict={x: bx, y: by})

    def last_loss():
        i = (state["i"] - 1) % num_batches
        bx, by = batches[i]
        return float(sess.run(loss, feed_dict={x: bx, y: by}))

    return Baseline(name, "tensorflow", step, batch_size, state, last_loss)


def tf1_mlp(sizes: Sequence[int] = MLP_SIZES, batch_size=100, lr=0.1, num_batches=16,
            seed=0, threads: Optional[int] = None) -> Baseline:
    """Real TensorFlow, TF1 graph mode (tf.compat.v1 Session + feed_dict)."""

    def build(v1, x):
        a = x
        for i, (m, n) in enumerate(zip(sizes[:-1], sizes[1:])):
            w = v1.Variable(v1.truncated_normal((m, n), stddev=0.1))
            b = v1.Variable(v1.zeros((n,)))
            a = v1.matmul(a, w) + b
            if i < len(sizes) - 2:
                a = v1.nn.relu(a)
        return a

    name = "tf1_mlp_" + "_".join(str(s) for s in sizes)
    return _tf1_baseline(name, build, (sizes[0],), batch_size, lr, num_batches,
                         seed, threads)


def tf1_cnn(batch_size=100, lr=0.1, num_batches=16, seed=0,
            threads: Optional[int] = None) -> Baseline:
    """Real TensorFlow TF1 graph-mode version of the small CNN (NHWC)."""

    def build(v1, x):
        def conv(a, cin, cout):
            w = v1.Variable(v1.truncated_normal((5, 5, cin, cout), stddev=0.1))
            b = v1.Variable(v1.constant(0.1, shape=(cout,)))
            h = v1.nn.relu(v1.nn.conv2d(a, w, strides=[1, 1, 1, 1], padding="SAME") + b)
            return v1.nn.max_pool(h, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1],
                                  padding="SAME")

        a = conv(conv(x, 1, 8), 8, 16)
        a = v1.reshape(a, (-1, 7 * 7 * 16))
        w = v1.Variable(v1.truncated_normal((7 * 7 * 16, 10), stddev=0.1))
        b = v1.Variable(v1.zeros((10,)))
        return v1.matmul(a, w) + b

    return _tf1_baseline("tf1_cnn", build, (28, 28, 1), batch_size, lr, num_batches,
                         seed, threads)


# =========================================================================== registry
#: name -> zero-argument builder returning a Baseline (default sizes: batch 100).
BASELINES: Dict[str, Callable[[], Baseline]] = {
    "numpy_mlp": functools.partial(numpy_mlp, MLP_SIZES),
    "numpy_mlp2": functools.partial(numpy_mlp, MLP2_SIZES),
    "numpy_cnn": numpy_cnn,
    "torch_mlp": functools.partial(torch_mlp, MLP_SIZES),
    "torch_mlp2": functools.partial(torch_mlp, MLP2_SIZES),
    "torch_cnn": torch_cnn,
    "tf1_mlp": functools.partial(tf1_mlp, MLP_SIZES),
    "tf1_mlp2": functools.partial(tf1_mlp, MLP2_SIZES),
    "tf1_cnn": tf1_cnn,
}


def available_baselines() -> List[str]:
    """Names in BASELINES whose framework imports here (numpy ones always)."""
    names = [n for n in BASELINES if n.startswith("numpy_")]
    if torch_available():
        names += [n for n in BASELINES if n.startswith("torch_")]
    if tf_available():
        names += [n for n in BASELINES if n.startswith("tf1_")]
    return names


# =========================================================================== main
def _main(argv=None):
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=1,
                    help="BLAS/OMP/torch/TF threads (default 1)")
    ap.add_argument("--seconds", type=float, default=1.0, help="per repetition")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--only", nargs="*", help="subset of: " + " ".join(BASELINES))
    ap.add_argument("--max-other-cpu", type=float, default=0.08,
                    help="a repetition is clean if other processes used less than "
                         "this share of the machine (default 0.08; <0 disables)")
    ap.add_argument("--max-seconds", type=float, default=25.0,
                    help="per baseline, when waiting for clean repetitions")
    args = ap.parse_args(argv)
    if args.max_other_cpu is not None and args.max_other_cpu < 0:
        args.max_other_cpu = None

    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(args.threads)
    except Exception:  # noqa: BLE001
        pass
    names = args.only or available_baselines()
    if not torch_available():
        print("torch: not importable, torch baselines skipped")
    if not tf_available():
        print("tensorflow: not importable, tf1 baselines skipped")
    results = {}
    for name in names:
        builder = BASELINES[name]
        kw = {} if name.startswith("numpy_") else {"threads": args.threads}
        b = builder(**kw)
        med, rates, others = timeit_steps(
            b.step, seconds=args.seconds, repeats=args.repeats, return_all=True,
            max_other_cpu=args.max_other_cpu, max_seconds=args.max_seconds)
        results[name] = med
        print("%-11s %7.1f steps/s %8.3f ms/step  reps %s  others' CPU %s  loss %.3f"
              % (name, med, 1e3 / med, " ".join("%.0f" % r for r in rates),
                 " ".join("%.0f%%" % (100 * o) for o in others), b.loss()),
              flush=True)
    print(format_thread_info(thread_info()))
    return results


if __name__ == "__main__":
    _main()
