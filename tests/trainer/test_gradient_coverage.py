"""Gradient coverage: central finite differences (float64) for the gradients the per-module tests reach only
as forward plumbing -- the internal gradient ops' own gradients (second order, through `vjp`), AddN, Cast,
Identity/PlaceholderWithDefault, ReshapeLike, the nn-private flatten ops and seeded Dropout.

`tests/trainer/test_op_coverage.py` lists which test checks each op type; keep the two in step.
"""
import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import check_gradients, numeric_grad, vjp

RNG = np.random.default_rng(7)


def _gops(build, inputs):
    """Op types in the graph `build` makes from float64 placeholders of `inputs`' shapes."""
    g = tf.Graph()
    with g.as_default():
        build(*[tf.placeholder(tf.float64, np.shape(v)) for v in inputs])
    return {op.type for op in g.get_operations()}


def _check_vjp(f, primals, out_shape, expect_op, **kw):
    build = vjp(f)
    inputs = list(primals) + [RNG.standard_normal(out_shape)]
    assert expect_op in _gops(build, inputs), f"{expect_op} is not in the gradient graph"
    check_gradients(build, inputs, **kw)


# -- first-order gaps ---------------------------------------------------------
def test_add_n_gradient():
    xs = [RNG.standard_normal((2, 3)) for _ in range(3)]
    assert "AddN" in _gops(lambda a, b, c: tf.add_n([a, b, c]), xs)
    check_gradients(lambda a, b, c: tf.add_n([a, a * b, c]), xs)


def test_cast_gradient_float64_to_float32_and_back():
    x = RNG.standard_normal((3, 2))
    check_gradients(lambda t: tf.cast(tf.square(tf.cast(t, tf.float32)), tf.float64), [x], rtol=2e-3, atol=2e-4,
                    eps=1e-3)


def test_identity_and_placeholder_with_default_gradients():
    x = RNG.standard_normal((2, 3))
    check_gradients(lambda t: tf.identity(t) * tf.placeholder_with_default(t, [2, 3]), [x])
    check_gradients(lambda t: tf.reshape(tf.sin(tf.placeholder_with_default(t, [None, 3])), [2, 3]), [x])


def test_reshape_like_gradient_on_a_partially_known_shape():
    x = RNG.standard_normal((2, 6))

    def f(t):
        u = tf.placeholder_with_default(t, [None, 6])
        r = tf.reshape(u, [-1, 3, 2])  # its gradient reshapes back to u's runtime shape: ReshapeLike
        return tf.reshape(r * r, [2, 6])

    assert "ReshapeLike" in _gops(lambda t: tf.gradients(f(t), t)[0], [x])
    check_gradients(f, [x])
    # second order: ReshapeLike's own gradient (the vjp's output has u's partial shape: pin it)
    build = lambda t, g: tf.reshape(vjp(lambda v: tf.reshape(tf.placeholder_with_default(v, [None, 6]),  # noqa: E731
                                                             [-1, 3, 2]))(t, g), [2, 6])
    inputs = [x, RNG.standard_normal((2, 3, 2))]
    assert "ReshapeLike" in _gops(build, inputs)
    check_gradients(build, inputs)


def test_layers_flatten_gradient_nn_flatten_and_reshape_like():
    x = RNG.standard_normal((2, 3, 2, 2))
    check_gradients(lambda t: tf.layers.flatten(t) ** 2, [x])
    _check_vjp(lambda t: tf.layers.flatten(t) * 1.0, [x], (2, 12), "NnReshapeLike")


def test_dropout_gradient_by_finite_differences_with_a_fixed_seed():
    """Each run draws a fresh mask, so the oracle re-creates the session: a fresh session's first draw
    under a graph seed + op seed is the same mask every time (TF1's seed rule)."""
    x0 = RNG.standard_normal((3, 4))
    w = RNG.standard_normal((3, 4))
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(3)
        x = tf.placeholder(tf.float64, (3, 4))
        y = tf.nn.dropout(x * x, keep_prob=0.6, seed=5)
        loss = tf.reduce_sum(y * w)
        (dx,) = tf.gradients(loss, [x])

    def first_run(fetch, xv):
        with tf.Session(graph=g) as sess:
            return sess.run(fetch, {x: xv})

    yv, analytic = first_run([y, dx], x0)
    kept = yv != 0
    assert 0 < kept.sum() < kept.size
    numeric = numeric_grad(lambda xv: float(first_run(loss, xv)), x0)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(analytic, np.where(kept, 2 * x0 * w / 0.6, 0), rtol=1e-12)


# -- the internal gradient ops' own gradients (second order) -------------------
def test_concat_grad_gradient():
    a, b = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 2))
    _check_vjp(lambda x, y: tf.concat([y, x, y], axis=1), [a, b], (2, 7), "ConcatGrad")


def test_gather_grad_gradient_with_repeated_indices():
    x = RNG.standard_normal((4, 3))
    _check_vjp(lambda t: tf.gather(t, [3, 0, 3, 1], axis=0), [x], (4, 3), "IndexedSlicesToDense")
    _check_vjp(lambda t: tf.gather(t, [2, 0, 2], axis=1), [x], (4, 3), "GatherGrad")


def test_mean_grad_and_reduction_grad_gradients():
    x = RNG.standard_normal((3, 4, 2))
    _check_vjp(lambda t: tf.reduce_mean(t, axis=[0, 2]), [x], (4,), "MeanGrad")
    _check_vjp(lambda t: tf.reduce_mean(t, axis=1, keepdims=True), [x], (3, 1, 2), "MeanGrad")
    _check_vjp(lambda t: tf.reduce_sum(t, axis=[1]), [x], (3, 2), "ReductionGrad")


def test_sum_to_shape_of_and_broadcast_like_gradients():
    x, b = RNG.standard_normal((3, 4)), RNG.standard_normal((4,))
    # d(x + b)/db sums the cotangent over the broadcast axis: SumToShapeOf
    build = lambda t, c, g: tf.gradients(t + c, [c], grad_ys=g)[0]  # noqa: E731
    inputs = [x, b, RNG.standard_normal((3, 4))]
    assert "SumToShapeOf" in _gops(build, inputs)
    check_gradients(build, inputs)
    # d(sum(x))/dx broadcasts the scalar cotangent back: BroadcastLike / ReductionGrad
    _check_vjp(lambda t: tf.reduce_sum(t), [x], (), "ReductionGrad")


def test_tile_grad_gradient():
    x = RNG.standard_normal((2, 3))
    _check_vjp(lambda t: tf.tile(t, [2, 3]), [x], (4, 9), "TileGrad")


def test_strided_slice_grad_gradient():
    x = RNG.standard_normal((4, 5))
    _check_vjp(lambda t: t[1:4:2, ::-2], [x], (2, 3), "StridedSliceGrad")


def test_avg_pool_grad_gradient():
    x = RNG.standard_normal((1, 5, 4, 2))
    _check_vjp(lambda t: tf.nn.avg_pool(t, [1, 2, 2, 1], [1, 2, 1, 1], "SAME"), [x], (1, 3, 4, 2), "AvgPoolGrad")


def test_bias_add_grad_gradient():
    x, b = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((3,))
    build = lambda t, c, g: tf.gradients(tf.nn.bias_add(t, c, data_format="NCW"), [c], grad_ys=g)[0]  # noqa: E731
    inputs = [x, b, RNG.standard_normal((2, 3, 4))]
    assert "BiasAddGrad" in _gops(build, inputs)
    check_gradients(build, inputs)


def test_conv2d_backprop_ops_second_order():
    x, f = RNG.standard_normal((1, 4, 4, 2)), RNG.standard_normal((3, 3, 2, 2))
    conv = lambda t, k: tf.nn.conv2d(t, k, [1, 1, 1, 1], "SAME")  # noqa: E731
    _check_vjp(conv, [x, f], (1, 4, 4, 2), "Conv2DBackpropInput")
    _check_vjp(lambda k, t: conv(t, k), [f, x], (1, 4, 4, 2), "Conv2DBackpropFilter")


# -- MirrorPad (tf.pad REFLECT / SYMMETRIC) -------------------------------------
@pytest.mark.parametrize("mode,pads", [("REFLECT", [[1, 2], [0, 3]]), ("SYMMETRIC", [[3, 1], [2, 4]]),
                                       ("REFLECT", [[2, 0], [3, 3]])])
def test_mirror_pad_forward_and_gradient(mode, pads):
    x = RNG.standard_normal((3, 4))
    with tf.Session() as sess:
        out = sess.run(tf.pad(tf.constant(x.astype(np.float32)), pads, mode))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, np.pad(x, pads, mode.lower()).astype(np.float32))
    check_gradients(lambda t: tf.pad(t, pads, mode), [x])
    out_shape = tuple(d + a + b for d, (a, b) in zip(x.shape, pads))
    _check_vjp(lambda t: tf.pad(t, pads, mode), [x], out_shape, "MirrorPadGrad")


# -- second derivatives through tf.nn (the *Grad ops' gradients) ---------------
_X = RNG.standard_normal((3, 4)) * 2
_X = np.where(np.abs(_X) < 0.2, 0.7, _X)  # away from the kinks at 0
_X[0, :2] = [6.6, 5.4]  # both sides of relu6's kink at 6

ACTIVATION_GRAD_OPS = [
    (tf.nn.relu, "ReluGrad"), (tf.nn.relu6, "Relu6Grad"), (tf.nn.elu, "EluGrad"),
    (lambda t: tf.nn.leaky_relu(t, alpha=0.3), "LeakyReluGrad"), (tf.nn.sigmoid, "SigmoidGrad"),
    (tf.nn.tanh, "TanhGrad"), (tf.nn.softplus, "SoftplusGrad"),
]


@pytest.mark.parametrize("fn,grad_op", ACTIVATION_GRAD_OPS, ids=[a[1] for a in ACTIVATION_GRAD_OPS])
def test_activation_second_derivatives(fn, grad_op):
    _check_vjp(fn, [_X], _X.shape, grad_op)


@pytest.mark.parametrize("axis", [-1, 0])
def test_softmax_and_log_softmax_second_derivatives(axis):
    _check_vjp(lambda t: tf.nn.softmax(t, axis=axis), [_X], _X.shape, "SoftmaxGrad")
    _check_vjp(lambda t: tf.nn.log_softmax(t, axis=axis), [_X], _X.shape, "LogSoftmaxGrad")


def test_hessian_of_mlp_loss_through_tanh_and_softmax_xent():
    """tf.gradients of tf.gradients: the Hessian-vector product of a small MLP's loss."""
    w = RNG.standard_normal((4, 3)) * 0.5
    x_value, labels_value = RNG.standard_normal((5, 4)), np.eye(3)[[0, 2, 1, 1, 0]]

    def grad_of_loss(wt):
        x, labels = tf.constant(x_value), tf.constant(labels_value)
        loss = tf.reduce_sum(tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels,
                                                                        logits=tf.matmul(tf.tanh(tf.matmul(x, wt)),
                                                                                         tf.constant(np.eye(3) + 0.5))))
        return tf.gradients(loss, wt)[0]

    check_gradients(grad_of_loss, [w])


@pytest.mark.parametrize("axis", [-1, 0])
def test_softmax_xent_second_derivatives_wrt_logits_and_labels(axis):
    logits = RNG.standard_normal((3, 4))
    labels = RNG.dirichlet(np.ones(4 if axis == -1 else 3), size=4 if axis == 0 else 3)
    labels = labels.T if axis == 0 else labels
    loss_shape = (3,) if axis == -1 else (4,)
    xent = lambda lg, lb: tf.nn.softmax_cross_entropy_with_logits_v2(labels=lb, logits=lg, axis=axis)  # noqa: E731
    _check_vjp(xent, [logits, labels], loss_shape, "XentScaleAlongAxis")
    _check_vjp(lambda lb, lg: xent(lg, lb), [labels, logits], loss_shape, "XentLabelsGrad")


def test_sparse_softmax_xent_second_derivative():
    logits = RNG.standard_normal((4, 5))
    xent = lambda lg: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[0, 4, 2, 2], logits=lg)  # noqa: E731
    _check_vjp(xent, [logits], (4,), "XentScaleAlongAxis")


def test_sigmoid_xent_second_derivatives_wrt_logits_and_labels():
    logits, labels = RNG.standard_normal((3, 4)), RNG.uniform(0, 1, (3, 4))
    xent = lambda lg, lb: tf.nn.sigmoid_cross_entropy_with_logits(labels=lb, logits=lg)  # noqa: E731
    _check_vjp(xent, [logits, labels], (3, 4), "SigmoidCrossEntropyWithLogitsGrad")
    _check_vjp(lambda lb, lg: xent(lg, lb), [labels, logits], (3, 4), "SigmoidCrossEntropyWithLogitsGrad")


# -- second derivatives through the nn-private ops, max pooling and boolean_mask --
@pytest.mark.parametrize("padding,strides", [("VALID", [1, 2, 2, 1]), ("SAME", [1, 1, 1, 1])])
def test_max_pool_grad_and_max_pool_grad_grad_gradients(padding, strides):
    x = RNG.permutation(2 * 5 * 4 * 2).reshape(2, 5, 4, 2) / 7.0  # distinct values: no ties, no kinks
    pool = lambda t: tf.nn.max_pool(t, [1, 3, 2, 1], strides, padding)  # noqa: E731
    out_shape = tuple(pool(tf.constant(x)).shape.as_list())
    _check_vjp(pool, [x], out_shape, "MaxPoolGrad")
    # third order: MaxPoolGradGrad's own gradient (the vjp of the vjp, w.r.t. the first cotangent)
    build = lambda t, g, h: tf.gradients(vjp(pool)(t, g), [g], grad_ys=h)[0]  # noqa: E731
    inputs = [x, RNG.standard_normal(out_shape), RNG.standard_normal(x.shape)]
    assert "MaxPoolGradGrad" in _gops(build, inputs)
    check_gradients(build, inputs)


def test_max_pool_grad_grad_forward_against_numpy_nchw():
    x = RNG.permutation(1 * 2 * 4 * 4).reshape(1, 2, 4, 4).astype(np.float32)
    g = RNG.standard_normal((1, 2, 4, 4)).astype(np.float32)
    h = RNG.standard_normal((1, 2, 2, 2)).astype(np.float32)
    t, gt = tf.constant(x), tf.constant(h)
    y = tf.nn.max_pool(t, [1, 1, 2, 2], [1, 1, 2, 2], "VALID", data_format="NCHW")
    dx = tf.gradients(y, t, grad_ys=gt)[0]
    ggy = tf.gradients(dx, gt, grad_ys=tf.constant(g))[0]
    with tf.Session() as sess:
        out = sess.run(ggy)
    windows = x.reshape(1, 2, 2, 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(1, 2, 2, 2, 4)
    gwin = g.reshape(1, 2, 2, 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(1, 2, 2, 2, 4)
    ref = np.take_along_axis(gwin, windows.argmax(-1)[..., None], -1)[..., 0]
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, ref, rtol=1e-6)


def test_bias_add_grad_grad_nn_broadcast_channel_gradient():
    x, b = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((4,))

    def build(t, c, g, h):  # d/dg of <BiasAddGrad(g), h> is NnBroadcastChannel(h); check its gradient
        gb = tf.gradients(tf.nn.bias_add(t, c), [c], grad_ys=g)[0]
        return tf.gradients(gb, [g], grad_ys=h)[0]

    inputs = [x, b, RNG.standard_normal((2, 3, 4)), RNG.standard_normal((4,))]
    assert "NnBroadcastChannel" in _gops(build, inputs)
    check_gradients(build, inputs)


def test_embedding_lookup_grad_gradient():
    x = RNG.standard_normal((5, 3))
    _check_vjp(lambda t: tf.nn.embedding_lookup(t, [[4, 0], [4, 2]]), [x], (2, 2, 3), "IndexedSlicesToDense")


@pytest.mark.parametrize("axes,keep", [([0], False), ([0, 2], True), ([-1], False)])
def test_moments_second_derivatives(axes, keep):
    x = RNG.standard_normal((4, 3, 2))

    def both(t):
        mean, var = tf.nn.moments(t, axes, keep_dims=keep)
        return mean * 0.7 + var * var  # both outputs' cotangents reach NnMomentsGrad

    out_shape = tuple(both(tf.constant(x)).shape.as_list())
    _check_vjp(both, [x], out_shape, "NnMomentsGrad")


def test_boolean_mask_grad_gradient():
    x = RNG.standard_normal((3, 4))
    mask = np.array([True, False, True, True])
    _check_vjp(lambda t: tf.boolean_mask(t, mask, axis=1), [x], (3, 3), "BooleanMaskGrad")


def test_moments_second_derivative_with_an_unknown_batch_dim():
    x = RNG.standard_normal((4, 3, 2))

    def both(t):
        mean, var = tf.nn.moments(tf.placeholder_with_default(t, [None, 3, 2]), [0, 1])
        return mean + var * var

    build = lambda t, g: tf.reshape(vjp(both)(t, g), x.shape)  # noqa: E731  (pin the gradient's [?, 3, 2])
    inputs = [x, RNG.standard_normal((2,))]
    # differentiating NnMomentsGrad must count the reduced elements at run time (Size)
    assert "Size" in _gops(lambda t, g: tf.gradients(build(t, g), [t, g]), inputs)
    check_gradients(build, inputs)


# -- random ops with a differentiable input: random_crop --------------------------
def check_gradients_fresh_sessions(build, inputs, seed=11, rtol=1e-5, atol=1e-6):
    """check_gradients for graphs with seeded random ops: every evaluation runs in a new session, whose
    first draws under a graph seed are always the same (TF1's seed rule), so the oracle sees one function."""
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(seed)
        phs = [tf.placeholder(tf.float64, np.shape(v)) for v in inputs]
        out = build(*phs)
        w = np.random.default_rng(0).standard_normal(tuple(out.shape.as_list()))
        loss = tf.reduce_sum(out * w)
        grads = tf.gradients(loss, phs)

    def first_run(fetch, values):
        with tf.Session(graph=g) as sess:
            return sess.run(fetch, dict(zip(phs, values)))

    values = [np.asarray(v, np.float64) for v in inputs]
    analytic = first_run([d for d in grads if d is not None], values)
    k = 0
    for i, d in enumerate(grads):
        if d is None:
            continue

        def f(xi, i=i):
            return float(first_run(loss, values[:i] + [xi] + values[i + 1:]))

        np.testing.assert_allclose(analytic[k], numeric_grad(f, values[i]), rtol=rtol, atol=atol)
        k += 1
    return first_run(out, values)


def test_random_crop_gradient_and_second_order():
    x = RNG.standard_normal((5, 4))
    crop = check_gradients_fresh_sessions(lambda t: tf.random_crop(t * t, [3, 2], seed=4), [x])
    assert crop.shape == (3, 2)
    hits = [(i, j) for i in range(3) for j in range(3) if np.allclose(crop, (x * x)[i:i + 3, j:j + 2])]
    assert len(hits) == 1  # the crop is a real window of the input
    build = vjp(lambda t: tf.random_crop(t, [3, 2], seed=4))
    check_gradients_fresh_sessions(build, [x, RNG.standard_normal((3, 2))])
    assert "DynamicSliceGrad" in _gops(build, [x, np.zeros((3, 2))])
