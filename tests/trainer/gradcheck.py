"""Finite-difference oracle for gradient tests (float64, central differences)."""
from __future__ import annotations

import numpy as np

import tensorfleet as tf


def numeric_grad(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central differences of the scalar function f at x."""
    x = np.array(x, dtype=np.float64)
    g = np.zeros_like(x)
    it = np.nditer(x, flags=["multi_index"])
    for _ in it:
        i = it.multi_index
        old = x[i]
        x[i] = old + eps
        fp = f(x)
        x[i] = old - eps
        fm = f(x)
        x[i] = old
        g[i] = (fp - fm) / (2 * eps)
    return g


def _dense(g):
    """A gradient as a dense Tensor (tf.gradients gives an IndexedSlices for a gathered tensor, as TF does)."""
    return tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices) else g


def vjp(f, wrt=0):
    """build(*primals, g) = d/d primals[wrt] of sum(f(*primals) * g): the gradient graph of f as a function.

    Checking `build` by finite differences checks the gradients of the ops *in* f's gradient graph
    (ConcatGrad, TileGrad, ReluGrad, ...) with respect to both the cotangent g and the primals.
    """

    def build(*args):
        *primals, g = args
        return _dense(tf.gradients(f(*primals), [primals[wrt]], grad_ys=g)[0])

    return build


def check_gradients(build, inputs, rtol=1e-5, atol=1e-6, eps=1e-6, seed=0):
    """Checks tf.gradients of sum(build(*placeholders) * W) against central differences.

    `build` maps float64 placeholders to one output tensor; a fixed random
    weighting W makes every output element matter. Returns (analytic, numeric).
    """
    graph = tf.Graph()
    with graph.as_default():
        phs = [tf.placeholder(tf.float64, np.shape(v), name=f"in{i}") for i, v in enumerate(inputs)]
        out = build(*phs)
        rng = np.random.default_rng(seed)
        out_shape = tuple(out.shape.as_list())
        weights = tf.constant(rng.standard_normal(out_shape))
        loss = tf.reduce_sum(out * weights)
        grads = [_dense(g) for g in tf.gradients(loss, phs)]
        with tf.Session(graph=graph) as sess:
            if tf.global_variables():  # `build` made variables (a layer's weights): start from their initial values
                sess.run(tf.global_variables_initializer())
            values = [np.asarray(v, dtype=np.float64) for v in inputs]
            analytic = sess.run([g for g in grads if g is not None], dict(zip(phs, values)))
            numeric = []
            for i, v in enumerate(values):
                if grads[i] is None:
                    continue

                def f(xi, i=i):
                    feed = dict(zip(phs, values))
                    feed[phs[i]] = xi
                    return float(sess.run(loss, feed))

                numeric.append(numeric_grad(f, v, eps))
    for a, n in zip(analytic, numeric):
        np.testing.assert_allclose(a, n, rtol=rtol, atol=atol)
    return analytic, numeric
