"""graph_def: Graph -> GraphDef -> Graph round trips, constants as raw bytes, and bad GraphDefs rejected
with InvalidArgumentError naming the node. Oracles: numpy, and TF's documented GraphDef layout."""
import numpy as np
import pytest

import tensorfleet as tf
from tensorfleet import errors
from tensorfleet import graph_def as gd
from tensorfleet.protos import attr_value_pb2, types_pb2


def _mlp_graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        with tf.device("/job:ps/task:0"):
            w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2) / 10, name="w")
        y = tf.nn.relu(tf.matmul(x, w) + tf.constant([0.5, -0.25]), name="y")
        first = y[:, 0:1]
        loss = tf.reduce_mean(tf.square(y), name="loss")
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        init = tf.global_variables_initializer()
    return g, dict(x=x, w=w, y=y, first=first, loss=loss, train=train, init=init)


def test_round_trip_keeps_names_types_inputs_devices_and_attrs():
    g, _ = _mlp_graph()
    proto = gd.as_graph_def(g)
    g2 = tf.Graph()
    gd.import_graph_def(gd.GraphDef.FromString(proto.SerializeToString()), g2)
    ops1, ops2 = g.get_operations(), g2.get_operations()
    assert [o.name for o in ops1] == [o.name for o in ops2]
    for a, b in zip(ops1, ops2, strict=True):
        assert (a.type, a.device) == (b.type, b.device)
        assert [t.name for t in a.inputs] == [t.name for t in b.inputs]
        assert [c.name for c in a.control_inputs] == [c.name for c in b.control_inputs]
        assert [t.shape.as_list() if t.shape.ndims is not None else None for t in a.outputs] == \
               [t.shape.as_list() if t.shape.ndims is not None else None for t in b.outputs]
        assert set(a.attrs) == set(b.attrs), a.name
        for k, v in a.attrs.items():
            w = b.attrs[k]
            if isinstance(v, np.ndarray):
                assert v.dtype == w.dtype and np.array_equal(v, w)
            elif isinstance(v, tf.Operation):
                assert w.name == v.name and w.graph is g2
            else:
                assert v == w, (a.name, k)
    assert g2.get_operation_by_name("w").device == "/job:ps/task:0"


def test_imported_graph_computes_what_numpy_computes():
    g, _ = _mlp_graph()
    g2 = tf.Graph()
    gd.import_graph_def(gd.as_graph_def(g), g2)
    xs = np.array([[1.0, -2.0, 3.0], [0.5, 0.25, -1.0]], np.float32)
    w0 = np.arange(6, dtype=np.float32).reshape(3, 2) / 10
    with tf.Session(graph=g2, config=tf.ConfigProto(allow_soft_placement=True)) as sess:
        sess.run(g2.get_operation_by_name("init"))
        y, first = sess.run(["y:0", "strided_slice:0"], {"x:0": xs})
        sess.run(g2.get_operation_by_name("GradientDescent"), {"x:0": xs})
        w1 = sess.run("w:0")
    h = xs @ w0 + np.array([0.5, -0.25], np.float32)
    y_ref = np.maximum(h, 0)
    np.testing.assert_allclose(y, y_ref, rtol=1e-6)
    np.testing.assert_allclose(first, y_ref[:, 0:1], rtol=1e-6)
    grad_w = xs.T @ (2 * y_ref / y_ref.size * (h > 0))
    np.testing.assert_allclose(w1, w0 - 0.1 * grad_w, rtol=1e-5, atol=1e-7)


def test_constants_travel_as_raw_bytes_with_dtype_and_shape():
    value = np.array([[1.5, -2.0, 3.25], [4.0, 5.0, 6.0]], np.float32)
    with tf.Graph().as_default() as g:
        tf.constant(value, name="c")
        tf.constant(np.array([1, 2, 3], np.int64), name="i")
    nodes = {n.name: n for n in gd.as_graph_def(g).node}
    t = nodes["c"].attr["value"].tensor
    assert t.dtype == types_pb2.DT_FLOAT
    assert [d.size for d in t.tensor_shape.dim] == [2, 3]
    assert t.tensor_content == value.astype("<f4").tobytes()
    assert nodes["c"].attr["dtype"].type == types_pb2.DT_FLOAT
    assert nodes["i"].attr["value"].tensor.dtype == types_pb2.DT_INT64
    assert nodes["c"].attr["_output_shapes"].list.shape[0].dim[1].size == 3


def test_python_attribute_values_round_trip_exactly():
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(1.0, name="v")
    values = [None, True, 3, -7, 0.5, 0.2, "same", b"raw", tf.int64, tf.TensorShape([None, 3]),
              tf.TensorShape(None), (), (1, 2, 3), ("a", "b"), (slice(None, 2, None), Ellipsis, None, 1),
              ((0, 0), (1, 2)), (0.1, 0.5), np.array([[1, 2]], np.int32), v.op]
    for value in values:
        back = gd.decode_attr(gd.encode_attr(value), "test", g.get_operation_by_name)
        if isinstance(value, np.ndarray):
            assert back.dtype == value.dtype and np.array_equal(back, value)
        elif value is None or value is Ellipsis:
            assert back is value
        else:
            assert back == value and type(back) is type(value), (value, back)


def test_graph_growth_is_sent_as_an_extension():
    g = tf.Graph()
    with g.as_default():
        a = tf.constant(2.0, name="a")
        first = gd.as_graph_def(g)
        mark = g.version
        b = tf.multiply(a, 3.0, name="b")
    ext = gd.as_graph_def(g, from_version=mark)
    assert [n.name for n in first.node] == ["a"]
    assert [n.name for n in ext.node] == ["b/y", "b"] or [n.name for n in ext.node][-1] == "b"
    assert "a" not in [n.name for n in ext.node]
    g2 = tf.Graph()
    gd.import_graph_def(first, g2)
    gd.import_graph_def(ext, g2)
    with tf.Session(graph=g2) as sess:
        assert sess.run(g2.get_tensor_by_name(b.name)) == 6.0


def _const_node(name="c"):
    nd = gd.NodeDef(name=name, op="Const")
    nd.attr["value"].tensor.CopyFrom(gd.ndarray_to_proto(np.float32(1.0)))
    nd.attr["dtype"].type = types_pb2.DT_FLOAT
    return nd


@pytest.mark.parametrize("case, fragment", [
    ("unknown_op", "unknown op type 'NoSuchOp'"),
    ("unknown_attr_kind", "unknown attribute kind"),
    ("placeholder_attr", "unknown attribute kind"),
    ("dangling_input", "names an unknown node"),
    ("cycle", "cycle"),
    ("duplicate", "duplicate"),
    ("short_content", "bytes of content"),
    ("bad_dtype", "unsupported DataType"),
    ("bad_output_index", "has only 1 outputs"),
])
def test_bad_graph_defs_are_rejected_naming_the_node(case, fragment):
    proto = gd.GraphDef()
    proto.node.append(_const_node("c"))
    bad = proto.node.add(name="bad", op="Identity", input=["c"])
    if case == "unknown_op":
        bad.op = "NoSuchOp"
    elif case == "unknown_attr_kind":
        bad.attr["T"].func.name = "os.system"
    elif case == "placeholder_attr":
        bad.attr["T"].placeholder = "T"
    elif case == "dangling_input":
        bad.input[0] = "nowhere:0"
    elif case == "cycle":
        bad.input[0] = "bad2"
        proto.node.add(name="bad2", op="Identity", input=["bad"])
    elif case == "duplicate":
        proto.node.add(name="bad", op="Identity", input=["c"])
    elif case == "short_content":
        bad.op = "Const"
        del bad.input[:]
        bad.attr["value"].tensor.CopyFrom(gd.ndarray_to_proto(np.zeros(4, np.float32)))
        bad.attr["value"].tensor.tensor_content = b"\0" * 7
        bad.attr["dtype"].type = types_pb2.DT_FLOAT
    elif case == "bad_dtype":
        bad.op = "Const"
        del bad.input[:]
        bad.attr["value"].tensor.CopyFrom(gd.ndarray_to_proto(np.zeros(4, np.float32)))
        bad.attr["value"].tensor.dtype = 55
        bad.attr["dtype"].type = types_pb2.DT_FLOAT
    elif case == "bad_output_index":
        bad.input[0] = "c:1"
    with pytest.raises(errors.InvalidArgumentError) as info:
        gd.import_graph_def(proto, tf.Graph())
    assert fragment in str(info.value)
    assert "bad" in str(info.value)


def test_shape_function_errors_name_the_node():
    proto = gd.GraphDef()
    proto.node.append(_const_node("c"))
    mm = proto.node.add(name="mm", op="MatMul", input=["c", "c"])
    mm.attr["transpose_a"].b = False
    mm.attr["transpose_b"].b = False
    with pytest.raises(errors.InvalidArgumentError, match="Node 'mm'"):
        gd.import_graph_def(proto, tf.Graph())


def test_tensorboard_parses_what_we_write():
    tb = pytest.importorskip("tensorboard.compat.proto.graph_pb2")
    g, _ = _mlp_graph()
    parsed = tb.GraphDef.FromString(gd.as_graph_def(g).SerializeToString())
    assert [n.name for n in parsed.node] == [o.name for o in g.get_operations()]
    assert parsed.node[0].attr["dtype"].type == 1


def test_attr_value_is_tensorflows_message():
    assert attr_value_pb2.AttrValue.DESCRIPTOR.oneofs_by_name["value"].fields[0].name in {"s", "list"}
