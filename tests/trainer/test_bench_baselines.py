"""The numpy baselines in bench/baselines.py are an oracle: check their gradients."""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "bench")))
import baselines  # noqa: E402
import step_timing  # noqa: E402


def _fd_check(loss_fn, arrays, eps=1e-6, max_entries=None, seed=0):
    """Central differences on every (or a random subset of) entry of each array."""
    rng = np.random.RandomState(seed)
    worst = 0.0
    for name, arr, grad in arrays:
        flat, gflat = arr.reshape(-1), grad.reshape(-1)
        idx = np.arange(flat.size)
        if max_entries is not None and flat.size > max_entries:
            idx = rng.choice(flat.size, max_entries, replace=False)
        for j in idx:
            old = flat[j]
            flat[j] = old + eps
            lp = loss_fn()
            flat[j] = old - eps
            lm = loss_fn()
            flat[j] = old
            num = (lp - lm) / (2 * eps)
            err = abs(num - gflat[j]) / max(1e-8, abs(num) + abs(gflat[j]))
            if abs(num - gflat[j]) > 1e-7:  # ignore entries that are both ~0
                worst = max(worst, err)
                assert err < 1e-5, (name, j, num, gflat[j])
    return worst


@pytest.mark.parametrize("sizes", [(7, 5, 3), (6, 5, 4, 3)])
def test_mlp_gradients_match_finite_differences(sizes):
    params = baselines.init_mlp_params(sizes, seed=1, dtype=np.float64)
    for _, b in params:  # non-zero biases so their gradients are exercised
        b += np.random.RandomState(2).standard_normal(b.shape) * 0.1
    (x, y), = baselines.make_batches(4, 1, (sizes[0],), sizes[-1], seed=3,
                                     dtype=np.float64)
    x *= 3
    loss, grads = baselines.mlp_loss_and_grads(params, x, y)
    assert np.isfinite(loss) and loss > 0

    def loss_fn():
        return baselines.mlp_loss_and_grads(params, x, y)[0]

    arrays = []
    for i, ((w, b), (dw, db)) in enumerate(zip(params, grads)):
        assert dw.shape == w.shape and db.shape == b.shape
        arrays += [("W%d" % i, w, dw), ("b%d" % i, b, db)]
    _fd_check(loss_fn, arrays)


def test_cnn_gradients_match_finite_differences():
    params = baselines.init_cnn_params(seed=4, dtype=np.float64, in_channels=2,
                                       image_size=8, c1=3, c2=4, ksize=5,
                                       num_classes=3)
    rng = np.random.RandomState(5)
    for k in ("b1", "b2", "b3"):
        params[k] = params[k] + rng.standard_normal(params[k].shape) * 0.05
    (x, y), = baselines.make_batches(3, 1, (8, 8, 2), 3, seed=6, dtype=np.float64)
    x -= 0.3  # some negative pre-activations so ReLU masks matter
    loss, grads = baselines.cnn_loss_and_grads(params, x, y)
    assert set(grads) == set(params)

    def loss_fn():
        return baselines.cnn_loss_and_grads(params, x, y)[0]

    arrays = [(k, params[k], grads[k]) for k in sorted(params)]
    for _, p, g in arrays:
        assert g.shape == p.shape
    _fd_check(loss_fn, arrays, max_entries=60)


def test_cnn_forward_matches_direct_convolution():
    """im2col conv + pool against a slow loop implementation (float64)."""
    rng = np.random.RandomState(7)
    params = baselines.init_cnn_params(seed=8, dtype=np.float64, in_channels=2,
                                       image_size=8, c1=3, c2=2, num_classes=3)
    x = rng.standard_normal((2, 8, 8, 2))

    def conv(a, w, b):
        n, h, wd, c = a.shape
        k = w.shape[0]
        ap = np.pad(a, ((0, 0), (k // 2, k // 2), (k // 2, k // 2), (0, 0)))
        out = np.zeros((n, h, wd, w.shape[3]))
        for i in range(h):
            for j in range(wd):
                out[:, i, j, :] = np.tensordot(ap[:, i:i + k, j:j + k, :], w,
                                               axes=([1, 2, 3], [0, 1, 2]))
        return out + b

    def pool(a):
        n, h, wd, c = a.shape
        return a.reshape(n, h // 2, 2, wd // 2, 2, c).max(axis=(2, 4))

    a = pool(np.maximum(conv(x, params["w1"], params["b1"]), 0))
    a = pool(np.maximum(conv(a, params["w2"], params["b2"]), 0))
    ref = a.reshape(2, -1) @ params["w3"] + params["b3"]
    logits, _ = baselines.cnn_forward(params, x)
    np.testing.assert_allclose(logits, ref, rtol=1e-10, atol=1e-12)


def test_numpy_steps_run_and_learn():
    for b in (baselines.numpy_mlp(batch_size=20, num_batches=1),
              baselines.numpy_mlp(baselines.MLP2_SIZES, batch_size=20, num_batches=1),
              baselines.numpy_cnn(batch_size=8, num_batches=1)):
        b.step()
        first = b.loss()
        for _ in range(15):
            b.step()
        assert b.loss() < first, b.name  # same batch every step: loss must drop
        params = b.state["params"]
        leaves = [a for pair in params for a in pair] if isinstance(params, list) \
            else list(params.values())
        assert all(a.dtype == np.float32 for a in leaves)


def test_timing_and_thread_info():
    calls = []
    rate, reps, others = step_timing.timeit_steps(
        lambda: calls.append(1), seconds=0.01, warmup=2, repeats=3, return_all=True)
    assert rate > 0 and len(reps) == 3 and len(others) == 3 and len(calls) > 5
    assert step_timing.timeit_steps(lambda: None, seconds=0.01, warmup=0, repeats=3,
                                    max_other_cpu=1.01, max_seconds=1.0) > 0
    info = step_timing.thread_info(include_torch=False)
    assert "OPENBLAS_CORETYPE" in info and "blas" in info
    assert "OPENBLAS_NUM_THREADS" in step_timing.format_thread_info(info)
    assert set(baselines.BASELINES) >= {"numpy_mlp", "numpy_mlp2", "numpy_cnn",
                                        "torch_mlp", "tf1_mlp"}
