"""A graph with one or more ops of every type `tensorfleet.tf_graph` writes in TensorFlow's form, fed fixed inputs.

Used by tests/trainer/test_tf_graph_forms.py (the exported GraphDef against TF's op list, and back) and by
scripts/check_with_real_tf.py (real TF runs the exported graph on the same inputs and must give the same
outputs). `build()` returns the graph, {placeholder: value} and {name: output tensor}; names starting with
`random/` are random draws (TF's generator differs: compare their shapes only).
"""
from __future__ import annotations

import numpy as np

import tensorfleet as tf

X = np.array([[0.5, -1.25, 2.0], [-0.3, 0.75, 1.5]], np.float32)
Y = np.array([[1.5, 0.25, -2.0], [0.7, -0.75, 3.0]], np.float32)
I = np.array([[3, -7, 2], [0, 5, -1]], np.int32)
IMG = np.arange(50, dtype=np.float32).reshape(1, 5, 5, 2) / 10.0 - 2.0


def _examples() -> np.ndarray:
    ex = []
    for k in range(2):
        e = tf.train.Example()
        e.features.feature["dense_f"].float_list.value.extend([1.5 + k, -2.0])
        if k == 0:
            e.features.feature["dense_i"].int64_list.value.append(7)
        e.features.feature["dense_s"].bytes_list.value.append(b"word%d" % k)
        e.features.feature["sparse_a"].float_list.value.extend([0.5] * (k + 1))
        e.features.feature["sparse_b"].int64_list.value.extend(range(3 - k))
        ex.append(e.SerializeToString())
    arr = np.empty(2, dtype=object)
    arr[:] = ex
    return arr


def _math(x, y, i, out):
    pos = tf.abs(x) + 1.0
    unit = tf.clip_by_value(x / 3.0, -0.9, 0.9)
    for name, fn in (("neg", tf.negative), ("abs", tf.abs), ("sign", tf.sign), ("exp", tf.exp), ("square", tf.square),
                     ("floor", tf.floor), ("ceil", tf.ceil), ("round", tf.round), ("rint", tf.rint), ("sin", tf.sin),
                     ("cos", tf.cos), ("tan", tf.tan), ("atan", tf.atan), ("sinh", tf.sinh), ("cosh", tf.cosh),
                     ("asinh", tf.asinh), ("expm1", tf.expm1), ("erf", tf.erf), ("erfc", tf.erfc),
                     ("sigmoid", tf.sigmoid), ("tanh", tf.tanh), ("relu", tf.nn.relu), ("relu6", tf.nn.relu6),
                     ("elu", tf.nn.elu), ("softplus", tf.nn.softplus), ("is_finite", tf.is_finite),
                     ("is_nan", tf.is_nan), ("is_inf", tf.is_inf), ("stop_gradient", tf.stop_gradient)):
        out[name] = fn(x)
    for name, fn in (("log", tf.log), ("log1p", tf.log1p), ("sqrt", tf.sqrt), ("rsqrt", tf.rsqrt),
                     ("reciprocal", tf.reciprocal), ("acosh", tf.acosh), ("lgamma", tf.lgamma),
                     ("digamma", tf.digamma)):
        out[name] = fn(pos)
    for name, fn in (("asin", tf.asin), ("acos", tf.acos), ("atanh", tf.atanh)):
        out[name] = fn(unit)
    out["leaky_relu"] = tf.nn.leaky_relu(x, alpha=0.3)
    keep_prob = tf.placeholder_with_default(1.0, [], name="keep_prob")
    out["dropout_kept"] = tf.nn.dropout(x, keep_prob=keep_prob)  # keep_prob 1: every unit kept, deterministic
    out["random/dropout_mask"] = tf.nn.dropout(x, rate=0.5, noise_shape=[2, 1], seed=9).op.outputs[1]
    out["l2_loss"] = tf.nn.l2_loss(x)
    out["check_numerics"] = tf.check_numerics(x, "bad x")
    ok = tf.Assert(tf.reduce_all(tf.is_finite(x)), ["x must be finite:", x, "and y:", y], summarize=4)
    with tf.control_dependencies([ok]):
        out["identity"] = tf.identity(x)
    for name, fn in (("add", tf.add), ("sub", tf.subtract), ("mul", tf.multiply), ("realdiv", tf.divide),
                     ("maximum", tf.maximum), ("minimum", tf.minimum), ("squared_difference", tf.squared_difference),
                     ("div_no_nan", tf.div_no_nan), ("atan2", tf.atan2), ("equal", tf.equal),
                     ("not_equal", tf.not_equal), ("less", tf.less), ("less_equal", tf.less_equal),
                     ("greater", tf.greater), ("greater_equal", tf.greater_equal)):
        out[name] = fn(x, y)
    out["pow"] = tf.pow(pos, y)
    out["igamma"] = tf.igamma(pos, tf.abs(y) + 0.5)
    out["igammac"] = tf.igammac(pos, tf.abs(y) + 0.5)
    out["floordiv"] = tf.floordiv(i, 2)
    out["floormod"] = tf.floormod(i, 3)
    b1, b2 = tf.greater(x, 0.0), tf.less(y, 1.0)
    out["logical_and"], out["logical_or"], out["logical_not"] = tf.logical_and(b1, b2), tf.logical_or(b1, b2), \
        tf.logical_not(b1)
    out["matmul"] = tf.matmul(x, y, transpose_b=True)
    out["matmul_ta"] = tf.matmul(x, y, transpose_a=True)
    out["batch_matmul"] = tf.matmul(tf.reshape(x, [2, 3, 1]), tf.reshape(y, [2, 1, 3]))
    out["cast"] = tf.cast(x, tf.int32)
    out["add_n"] = tf.add_n([x, y, x])
    out["select"] = tf.where(b1, x, y)
    out["where"] = tf.where(b1)
    out["sum_axis"] = tf.reduce_sum(x, axis=1)
    out["sum_all"] = tf.reduce_sum(x)
    out["mean_keep"] = tf.reduce_mean(x, axis=0, keepdims=True)
    out["max"], out["min"], out["prod"] = tf.reduce_max(x, 1), tf.reduce_min(x, [0, 1]), tf.reduce_prod(x, -1)
    out["all"], out["any"] = tf.reduce_all(b1, 1), tf.reduce_any(b1, 0)
    out["argmax"], out["argmin"] = tf.argmax(x, 1), tf.argmin(x, 0, output_type=tf.int32)
    out["cumsum"] = tf.cumsum(x, axis=1, exclusive=True)
    out["cumprod"] = tf.cumprod(x, axis=1, reverse=True)


def _array(x, y, i, dyn, out):
    out["reshape"] = tf.reshape(x, [3, 2])
    out["reshape_dynamic"] = tf.reshape(dyn, tf.stack([tf.shape(dyn)[1], tf.shape(dyn)[0]]))
    out["squeeze"] = tf.squeeze(tf.reshape(x, [2, 1, 3]), [1])
    out["stack"] = tf.stack([x, y], axis=1)
    a, b, c = tf.unstack(x, axis=1)
    out["unstack"] = b
    out["shape"], out["size"], out["rank"] = tf.shape(dyn), tf.size(dyn), tf.rank(dyn)
    out["shape64"] = tf.shape(dyn, out_type=tf.int64)
    out["expand_dims"] = tf.expand_dims(x, 1)
    out["transpose"] = tf.transpose(x)
    out["transpose_perm"] = tf.transpose(tf.reshape(x, [1, 2, 3]), [2, 0, 1])
    out["fill"] = tf.fill([40, 30], 1.5) + 0.0
    out["zeros_like"], out["ones_like"] = tf.zeros_like(dyn), tf.ones_like(dyn)
    out["range"] = tf.range(2, 11, 3)
    out["concat"] = tf.concat([x, y, x], axis=1)
    out["split0"], out["split1"] = tf.split(tf.concat([x, y], 0), 2, axis=0)
    out["splitv0"], out["splitv1"] = tf.split(x, [1, 2], axis=1)
    out["tile"] = tf.tile(x, [2, 3])
    out["pad"] = tf.pad(x, [[1, 0], [0, 2]])
    out["pad_v2"] = tf.pad(x, [[0, 1], [1, 1]], constant_values=-9.0)
    out["mirror_pad"] = tf.pad(x, [[1, 1], [2, 0]], mode="REFLECT")
    out["strided_slice"] = x[:, 1:]
    out["strided_slice_shrink"] = x[-1, ::-2]
    out["strided_slice_newaxis"] = x[None, ..., 1]
    out["slice"] = tf.slice(x, [0, 1], [2, -1])
    out["gather"] = tf.gather(x, [2, 0], axis=1)
    out["embedding_lookup"] = tf.nn.embedding_lookup(y, [1, 0, 1])
    out["one_hot"] = tf.one_hot(tf.constant([0, 2, 1]) + 0, 4, on_value=5.0, off_value=-1.0)
    out["reverse"] = tf.reverse(x, [1])
    out["flatten"] = tf.layers.flatten(tf.reshape(dyn, [-1, 3, 1]))
    out["gather_nd"] = tf.gather_nd(x, [[1, 2], [0, 0]])
    parts = tf.dynamic_partition(x, tf.constant([1, 0]) + 0, 2)
    out["dynamic_partition1"] = parts[1]
    out["dynamic_stitch"] = tf.dynamic_stitch([tf.constant([1]) + 0, tf.constant([0]) + 0], parts)
    out["parallel_dynamic_stitch"] = tf.parallel_dynamic_stitch([tf.constant([0, 2]), tf.constant([1])],
                                                                [tf.constant([1.0, 3.0]), tf.constant([2.0])])
    out["invert_permutation"] = tf.invert_permutation(tf.constant([2, 0, 1]) + 0)
    out["identity_n"] = tf.identity_n([x, i])[1]
    out["placeholder_with_default"] = tf.placeholder_with_default(tf.constant([1.0, 2.0]), [None]) * 2.0


def _nn(x, img, out):
    out["bias_add"] = tf.nn.bias_add(x, tf.constant([0.5, -1.0, 2.0]))
    out["softmax"] = tf.nn.softmax(x)
    out["softmax_axis0"] = tf.nn.softmax(x, axis=0)
    out["log_softmax"] = tf.nn.log_softmax(x)
    f = tf.constant(np.linspace(-1, 1, 3 * 3 * 2 * 4, dtype=np.float32).reshape(3, 3, 2, 4))
    out["conv_same"] = tf.nn.conv2d(img, f, [1, 1, 1, 1], "SAME")
    out["conv_valid_stride"] = tf.nn.conv2d(img, f, [1, 2, 2, 1], "VALID")
    out["conv_dilated"] = tf.nn.conv2d(img, f, [1, 1, 1, 1], "SAME", dilations=[1, 2, 2, 1])
    out["conv_explicit"] = tf.nn.conv2d(img, f, [1, 1, 1, 1], [[0, 0], [1, 0], [0, 2], [0, 0]])
    out["max_pool"] = tf.nn.max_pool(img, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
    out["avg_pool"] = tf.nn.avg_pool(img, [1, 3, 3, 1], [1, 1, 1, 1], "VALID")
    values, indices = tf.nn.top_k(x, 2)
    out["top_k_values"], out["top_k_indices"] = values, indices
    out["in_top_k"] = tf.nn.in_top_k(x, [2, 1], 1)
    labels = tf.nn.softmax(tf.constant([[1.0, 2.0, 0.5], [0.0, 0.0, 3.0]]))
    out["softmax_xent"] = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=x)
    out["sparse_xent"] = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant([2, 0]), logits=x)


def _state_random_io(x, s, out):
    v = tf.Variable(tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), name="v")
    out["variable_read"] = v.value() * x
    out["random/normal"] = tf.random_normal([2, 5], seed=3)
    out["random/truncated_normal"] = tf.truncated_normal([4], mean=1.0, stddev=0.5, seed=4)
    out["random/uniform"] = tf.random_uniform([3, 2], -1.0, 1.0, seed=5)
    out["random/uniform_int"] = tf.random_uniform([6], 0, 10, dtype=tf.int32, seed=6)
    feats = {"dense_f": tf.FixedLenFeature([2], tf.float32), "dense_i": tf.FixedLenFeature([1], tf.int64, [-1]),
             "dense_s": tf.FixedLenFeature([], tf.string), "sparse_a": tf.VarLenFeature(tf.float32),
             "sparse_b": tf.VarLenFeature(tf.int64)}
    parsed = tf.parse_example(s, feats)
    for key in ("dense_f", "dense_i", "dense_s"):
        out["parse/" + key] = parsed[key]
    for key in ("sparse_a", "sparse_b"):
        out["parse/" + key + "/indices"] = parsed[key].indices
        out["parse/" + key + "/values"] = parsed[key].values
        out["parse/" + key + "/dense_shape"] = parsed[key].dense_shape
    out["as_string"] = tf.as_string(parsed["dense_i"])
    out["string_join"] = tf.string_join([parsed["dense_s"], tf.as_string(x[:, 0], precision=2)], separator="-")
    out["string_to_number"] = tf.string_to_number(tf.constant(["1.5", "-2"]))


def _extras(x, y, img, dyn_rank, out):
    """Ops a serving graph rarely holds but that have TF forms: gradient kernels, special functions, counters."""
    from tensorfleet.ops.common import make_tensor
    pos = tf.abs(x) + 1.0
    for op_type in ("ReluGrad", "Relu6Grad", "EluGrad", "SigmoidGrad", "TanhGrad", "SoftplusGrad"):
        out["grad/" + op_type] = make_tensor(op_type, [y, x])
    out["grad/LeakyReluGrad"] = make_tensor("LeakyReluGrad", [y, x], {"alpha": 0.1})
    out["grad/BiasAddGrad"] = make_tensor("BiasAddGrad", [x], {"data_format": "NHWC"})
    pooled = tf.nn.max_pool(img, [1, 2, 2, 1], [1, 1, 1, 1], "VALID")
    out["grad/MaxPoolGrad"] = make_tensor("MaxPoolGrad", [img, pooled, pooled * 2.0], dict(pooled.op.attrs))
    f = tf.constant(np.linspace(-1, 1, 2 * 2 * 2 * 3, dtype=np.float32).reshape(2, 2, 2, 3))
    conv = tf.nn.conv2d(img, f, [1, 2, 2, 1], "SAME")
    g = conv * 0.5 + 1.0
    out["grad/Conv2DBackpropInput"] = tf.nn.conv2d_backprop_input([1, 5, 5, 2], f, g, [1, 2, 2, 1], "SAME")
    out["grad/Conv2DBackpropFilter"] = tf.nn.conv2d_backprop_filter(img, [2, 2, 2, 3], g, [1, 2, 2, 1], "SAME")
    out["bessel_i0e"], out["bessel_i1e"] = tf.math.bessel_i0e(x), tf.math.bessel_i1e(x)
    out["betainc"] = tf.math.betainc(pos, pos + 1.0, tf.sigmoid(y))
    out["polygamma"] = tf.math.polygamma(tf.ones_like(pos), pos)
    out["zeta"] = tf.math.zeta(pos + 1.0, pos)
    out["nextafter"] = tf.math.nextafter(x, y)
    out["igamma_grad_a"] = make_tensor("IgammaGradA", [pos, pos + 0.5])
    out["select_v2"] = tf.where_v2(tf.greater(x, 0.0), x, 0.0)
    out["decode_raw"] = tf.decode_raw(tf.constant([b"\x01\x00\x02\x00"]), tf.int16)
    out["rank_dynamic"] = tf.rank(dyn_rank)
    counter = tf.Variable(0, name="counter")
    with tf.control_dependencies([tf.assign_add(counter, 5), tf.assign_sub(counter, 2)]):
        out["counter_after"] = tf.identity(counter.value())
    out["is_initialized"] = tf.is_variable_initialized(counter)
    steps = tf.Variable(3, name="steps")
    out["count_up_to"] = tf.count_up_to(steps, 10)


def build():
    """(graph, {placeholder: value}, {name: tensor}); variables need `tf.global_variables_initializer()`."""
    g = tf.Graph()
    out: dict = {}
    with g.as_default():
        x = tf.placeholder(tf.float32, [2, 3], name="x")
        y = tf.placeholder(tf.float32, [2, 3], name="y")
        i = tf.placeholder(tf.int32, [2, 3], name="i")
        dyn = tf.placeholder(tf.float32, [None, None], name="dyn")
        img = tf.placeholder(tf.float32, [1, 5, 5, 2], name="img")
        s = tf.placeholder(tf.string, [None], name="serialized")
        dyn_rank = tf.placeholder(tf.float32, None, name="dyn_rank")
        _math(x, y, i, out)
        _array(x, y, i, dyn, out)
        _nn(x, img, out)
        _state_random_io(x, s, out)
        _extras(x, y, img, dyn_rank, out)
        out["parse_single/dense_f"] = tf.parse_single_example(s[0], {"dense_f": tf.FixedLenFeature([2], tf.float32)})[
            "dense_f"]
    feeds = {x: X, y: Y, i: I, dyn: X, img: IMG, s: _examples(), dyn_rank: IMG}
    return g, feeds, out
