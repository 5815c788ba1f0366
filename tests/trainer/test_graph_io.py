"""Graph import/export (graph_io.py) against TF 1.15's documented semantics, with numpy as the oracle for
values: Graph.as_graph_def / Session.graph_def, tf.import_graph_def (name scope, de-duplicated names,
input_map, return_elements, errors), tf.train.write_graph (text and binary, read back with protobuf),
tf.graph_util (extract_sub_graph, convert_variables_to_constants), and a MonitoredTrainingSession with an
in-graph tf.data pipeline and summaries, whose graph event TensorBoard's own loader reads back."""
import os

import numpy as np
import pytest
from google.protobuf import text_format

import tensorfleet as tf
from tensorfleet import errors

efl = pytest.importorskip("tensorboard.backend.event_processing.event_file_loader")
tb_event = pytest.importorskip("tensorboard.compat.proto.event_pb2")
tb_graph = pytest.importorskip("tensorboard.compat.proto.graph_pb2")

X = np.array([[1.0, -2.0], [0.5, 3.0], [4.0, 0.0]], np.float32)
W = np.array([[2.0], [-1.0]], np.float32)


def _model():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    w = tf.Variable(W, name="w")
    y = tf.identity(tf.nn.relu(tf.matmul(x, w) + 0.5), name="y")
    return x, w, y


def _expected(x, w=W):
    return np.maximum(x @ w + 0.5, 0.0)


def test_as_graph_def_lists_every_op_and_from_version_only_the_new_ones():
    _, _, y = _model()
    g = tf.get_default_graph()
    gd = g.as_graph_def()
    assert isinstance(gd, tf.GraphDef)
    assert [n.name for n in gd.node] == [op.name for op in g.get_operations()]
    assert {n.name: n.op for n in gd.node}["y"] == "Identity"
    assert all("_output_shapes" not in n.attr for n in gd.node)  # add_shapes defaults to False, as in TF
    version = g.version
    tf.square(y, name="later")
    assert [n.name for n in g.as_graph_def(from_version=version).node] == ["later"]
    with tf.Session() as sess:
        assert [n.name for n in sess.graph_def.node] == [op.name for op in g.get_operations()]


def test_import_graph_def_prefixes_names_maps_inputs_and_returns_elements():
    _model()
    gd = tf.get_default_graph().as_graph_def()
    with tf.Graph().as_default() as g:
        a = tf.placeholder(tf.float32, [None, 2], name="a")
        y, w_op = tf.import_graph_def(gd, input_map={"x": a}, return_elements=["y:0", "w"])
        assert y.name == "import/y:0" and isinstance(w_op, tf.Operation) and w_op.name == "import/w"
        (y2,) = tf.import_graph_def(gd, input_map={"x:0": a}, return_elements=["y:0"])
        assert y2.name == "import_1/y:0"  # the scope is made unique, as tf.name_scope does
        assert tf.import_graph_def(gd, name="") is None
        tf.import_graph_def(gd, name="")
        names = {op.name for op in g.get_operations()}
        assert {"x", "w", "y", "x_1", "w_1", "y_1"} <= names  # clashing names get a suffix
        with tf.Session() as sess:
            # a GraphDef has no collections (TF's too): run the imported initializers by name; each Assign's
            # variable reference was renamed with its node
            sess.run(["import/w/Assign", "import_1/w/Assign", "w/Assign", "w/Assign_1"])
            np.testing.assert_allclose(sess.run(y, {a: X}), _expected(X))
            np.testing.assert_allclose(sess.run("y_1:0", {"x_1:0": X}), _expected(X))


def test_import_graph_def_maps_control_inputs():
    x = tf.placeholder(tf.float32, [], name="x")
    c = tf.no_op(name="c")
    with tf.control_dependencies([c]):
        tf.identity(x, name="out")
    gd = tf.get_default_graph().as_graph_def()
    with tf.Graph().as_default():
        mine = tf.no_op(name="mine")
        (out,) = tf.import_graph_def(gd, input_map={"^c": mine}, return_elements=["out"], name="m")
        assert [op.name for op in out.control_inputs] == ["mine"]


@pytest.mark.parametrize("kwargs,error,match", [
    ({"input_map": {"nope:0": None}}, TypeError, "nope:0"),
    ({"return_elements": ["y:7"]}, ValueError, "y:7"),
    ({"return_elements": ["ghost"]}, ValueError, "ghost"),
    ({"return_elements": "y"}, TypeError, "list"),
])
def test_import_graph_def_bad_arguments_name_what_is_wrong(kwargs, error, match):
    _model()
    gd = tf.get_default_graph().as_graph_def()
    with tf.Graph().as_default():
        with pytest.raises(error, match=match):
            tf.import_graph_def(gd, **kwargs)


def test_import_graph_def_refuses_unknown_map_keys_dangling_inputs_and_non_graphdefs():
    _model()
    gd = tf.get_default_graph().as_graph_def()
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, [None, 2])
        with pytest.raises(ValueError, match=r"not found in graph_def: \[q:0\]"):
            tf.import_graph_def(gd, input_map={"q": a})
        with pytest.raises(TypeError, match="GraphDef"):
            tf.import_graph_def(gd.SerializeToString())
        broken = tf.GraphDef()
        broken.CopyFrom(gd)
        broken.node[-1].input[0] = "missing_node"
        with pytest.raises(ValueError, match="missing_node"):
            tf.import_graph_def(broken)


def test_write_graph_text_and_binary_read_back_equal(tmp_path):
    _model()
    g = tf.get_default_graph()
    text_path = tf.train.write_graph(g, str(tmp_path / "out"), "graph.pbtxt")
    bin_path = tf.io.write_graph(g.as_graph_def(), str(tmp_path / "out"), "graph.pb", as_text=False)
    assert text_path == str(tmp_path / "out" / "graph.pbtxt")
    from_text = text_format.Parse(open(text_path).read(), tf.GraphDef())
    from_bin = tf.GraphDef.FromString(open(bin_path, "rb").read())
    assert from_text == from_bin == g.as_graph_def()
    assert sorted(os.listdir(tmp_path / "out")) == ["graph.pb", "graph.pbtxt"]  # no temporary files left
    # TensorBoard's own GraphDef proto reads the binary file (same field numbers as TF)
    assert [n.name for n in tb_graph.GraphDef.FromString(open(bin_path, "rb").read()).node][-1] == "y"


def test_extract_sub_graph_keeps_what_the_destinations_need_in_order():
    x, w, y = _model()
    tf.square(x, name="unrelated")
    with tf.control_dependencies([tf.no_op(name="guard")]):
        tf.identity(y, name="guarded")
    gd = tf.get_default_graph().as_graph_def()
    sub = tf.graph_util.extract_sub_graph(gd, ["guarded"])
    names = [n.name for n in sub.node]
    assert "unrelated" not in names and "guard" in names and "w/Assign" not in names
    assert names == [n.name for n in gd.node if n.name in set(names)]
    with pytest.raises(AssertionError, match="nothere is not in graph"):
        tf.graph_util.extract_sub_graph(gd, ["nothere"])
    with pytest.raises(TypeError, match="list"):
        tf.graph_util.extract_sub_graph(gd, "y")


def test_convert_variables_to_constants_freezes_trained_values():
    x, w, y = _model()
    other = tf.Variable(5.0, name="other")
    tf.identity(y * other, name="z")
    trained = W * 3.0
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(w.assign(trained))
        frozen = tf.graph_util.convert_variables_to_constants(sess, sess.graph_def, ["z"])
        partly = tf.graph_util.convert_variables_to_constants(sess, sess.graph_def, ["z"],
                                                              variable_names_blacklist=["other"])
    ops = {n.name: n.op for n in frozen.node}
    assert ops["w"] == ops["other"] == "Const" and not any(op in ("VariableV2", "Assign") for op in ops.values())
    assert {n.name: n.op for n in partly.node}["other"] == "VariableV2"
    with tf.Graph().as_default():  # no variables, no initializer, no checkpoint: the values are in the graph
        (out,) = tf.import_graph_def(frozen, return_elements=["z:0"], name="")
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(out, {"x:0": X}), _expected(X, trained) * 5.0)


def test_monitored_training_session_with_tf_data_and_summaries_writes_a_graph_tensorboard_reads(tmp_path):
    features = np.random.RandomState(0).rand(32, 3).astype(np.float32)
    ds = tf.data.Dataset.from_tensor_slices((features, features.sum(1, keepdims=True))).repeat().batch(8)
    xb, yb = ds.make_one_shot_iterator().get_next()
    w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
    loss = tf.reduce_mean(tf.square(tf.matmul(xb, w) - yb))
    tf.summary.scalar("loss", loss)
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf.train.get_or_create_global_step())
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), save_summaries_steps=2,
                                           hooks=[tf.train.StopAtStepHook(last_step=6)]) as sess:
        while not sess.should_stop():
            sess.run(train)
    tf.train.SummaryWriterCache.clear()
    (events_file,) = [p for p in tmp_path.iterdir() if p.name.startswith("events.out.tfevents")]
    events = [tb_event.Event.FromString(r) for r in efl.RawEventFileLoader(str(events_file)).Load()]
    (graph_bytes,) = [e.graph_def for e in events if e.graph_def]
    graph = tb_graph.GraphDef.FromString(graph_bytes)
    (get_next,) = [n for n in graph.node if n.op == "IteratorGetNext"]
    assert any(e.summary.value and e.summary.value[0].tag == "loss" for e in events)
    # the Dataset the iterator holds has no GraphDef form: written for display, refused on import
    ours = tf.GraphDef.FromString(graph_bytes)
    with tf.Graph().as_default():
        with pytest.raises(errors.InvalidArgumentError, match=f"Node '{get_next.name}'.*Dataset.*display only"):
            tf.import_graph_def(ours, name="")


def test_a_graph_frozen_by_real_tensorflow_imports_and_computes_what_tensorflow_computed():
    """tests/trainer/data/tf_frozen_mlp.npz: an MLP (Placeholder, Const, Identity, MatMul, AddV2, Relu, Softmax, ArgMax)
    frozen by real TensorFlow's own convert_variables_to_constants (tensorflow.compat.v1; the version is in the
    file), with an input batch and the probabilities and classes TensorFlow computed for it."""
    fixture = np.load(os.path.join(os.path.dirname(__file__), "data", "tf_frozen_mlp.npz"))
    gd = tf.GraphDef.FromString(fixture["graph_def"].tobytes())
    assert {"AddV2", "MatMul", "Softmax", "Identity", "ArgMax"} <= {n.op for n in gd.node}
    probs, classes = tf.import_graph_def(gd, return_elements=["probs:0", "classes:0"], name="tf")
    with tf.Session() as sess:
        got_probs, got_classes = sess.run([probs, classes], {"tf/x:0": fixture["x"]})
    np.testing.assert_allclose(got_probs, fixture["probs"], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(got_classes, fixture["classes"])
    assert len(set(fixture["classes"].tolist())) > 1  # the batch exercises more than one class
