"""Graphs in TensorFlow's form (tensorfleet.tf_graph): every node obeys TF's op definitions, and back.

Oracles: TF 1.15's op list as real TensorFlow defines it (tests/trainer/data/tf_op_defs.json, read by
tf_op_def_oracle.py, which knows nothing of the writer); the graph itself (the TF-form graph read back must
compute exactly what the original computes on the same inputs). scripts/check_with_real_tf.py runs the same
zoo in real TF.
"""
from __future__ import annotations

import numpy as np
import pytest

import tensorfleet as tf
from tensorfleet import tf_graph
from tensorfleet.graph_def import import_graph_def
from tensorfleet.protos.graph_pb2 import GraphDef

import tf_forms_zoo
import tf_op_def_oracle


@pytest.fixture(scope="module")
def zoo():
    g, feeds, out = tf_forms_zoo.build()
    with g.as_default():
        init = tf.global_variables_initializer()
    export = tf_graph.export_graph_def(g, list(out.values()) + [init])
    return g, feeds, out, init, export


def test_every_exported_node_obeys_tf_op_definitions(zoo):
    _, _, _, _, export = zoo
    assert tf_op_def_oracle.problems(export.graph_def) == []
    ops = {nd.op for nd in export.graph_def.node}
    assert {"Conv2D", "ParseExample", "StridedSlice", "VariableV2", "Assign", "RandomStandardNormal"} <= ops


def test_no_attribute_of_ours_reaches_the_tf_form(zoo):
    _, _, _, _, export = zoo
    for nd in export.graph_def.node:
        for key, av in nd.attr.items():
            assert av.WhichOneof("value") != "func", (nd.name, key)  # our tagged values (op refs, Python values)
    shape_attr_ops = {nd.op for nd in export.graph_def.node if "shape" in nd.attr}
    assert shape_attr_ops <= {"Placeholder", "PlaceholderWithDefault", "VariableV2"}  # not the random ops


def test_the_zoo_covers_every_writer(zoo):
    g = zoo[0]
    used = {op.type for op in g.get_operations()} | {"NoOp"}
    # AddV2 comes only from graphs TF wrote; ReadFile needs a file (test_saved_model's asset test covers it)
    assert set(tf_graph.registry.WRITERS) - used == {"AddV2", "ReadFile"}


def test_the_tf_form_read_back_computes_the_same_values(zoo):
    g, feeds, out, init, export = zoo
    with tf.Session(graph=g) as sess:
        sess.run(init)
        want = sess.run(out, feeds)
    g2 = tf.Graph()
    import_graph_def(tf_graph.import_tf_graph_def(export.graph_def), g2)
    with tf.Session(graph=g2) as sess:
        sess.run(init.name)
        names = {k: export.tensor_name(t) for k, t in out.items()}
        got = sess.run({k: n if ":" in n else n + ":0" for k, n in names.items()},
                       {p.name: v for p, v in feeds.items()})
    for key in out:  # random ops keep their seeds: the same draws
        np.testing.assert_array_equal(np.asarray(got[key]), np.asarray(want[key]), err_msg=key)


def test_tensor_names_are_the_graphs(zoo):
    _, _, out, _, export = zoo
    names = {nd.name for nd in export.graph_def.node}
    for key, t in out.items():
        node = export.tensor_name(t).split(":")[0]
        assert node in names
        if key != "random/dropout_mask":  # (a lowered op's second output: the mask node inside it)
            assert node == t.op.name


def test_an_op_without_a_tf_form_fails_naming_the_node():
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        y = tf.py_func(lambda a: a * 2, [x], tf.float32, name="doubler")
    with pytest.raises(tf_graph.NoTFForm, match=r"Node 'doubler' \(op PyFunc\)"):
        tf_graph.export_graph_def(g, [y])


def test_only_what_the_roots_need_is_written():
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        kept = tf.nn.relu(x, name="kept")
        tf.py_func(lambda a: a, [x], tf.float32, name="unused_pyfunc")  # no TF form, but nobody needs it
    gd = tf_graph.export_graph_def(g, [kept]).graph_def
    assert [nd.name for nd in gd.node] == ["x", "kept"]


def test_strip_default_attrs_leaves_out_tf_defaults_only():
    with tf.Graph().as_default() as g:
        a = tf.placeholder(tf.float32, [2, 2], name="a")
        plain = tf.matmul(a, a, name="plain")
        tb = tf.matmul(a, a, transpose_b=True, name="tb")
    full = {nd.name: nd for nd in tf_graph.export_graph_def(g, [plain, tb]).graph_def.node}
    stripped = {nd.name: nd for nd in tf_graph.export_graph_def(g, [plain, tb], strip_default_attrs=True)
                .graph_def.node}
    assert set(full["plain"].attr) == {"T", "transpose_a", "transpose_b"}
    assert set(stripped["plain"].attr) == {"T"}
    assert set(stripped["tb"].attr) == {"T", "transpose_b"} and stripped["tb"].attr["transpose_b"].b


def test_clear_devices_and_colocation():
    with tf.Graph().as_default() as g:
        with tf.device("/job:ps/task:0"):
            v = tf.Variable([1.0, 2.0], name="v")
        y = tf.identity(v.value() * 2.0, name="y")
    kept = tf_graph.export_graph_def(g, [y, v.initializer]).graph_def
    cleared = tf_graph.export_graph_def(g, [y, v.initializer], clear_devices=True).graph_def
    by_name = {nd.name: nd for nd in kept.node}
    assert by_name["v"].device == "/job:ps/task:0"
    assert list(by_name["v/Assign"].attr["_class"].list.s) == [b"loc:@v"]
    assert all(nd.device == "" for nd in cleared.node)


def test_reading_an_unknown_tf_op_names_the_node():
    gd = GraphDef()
    gd.node.add(name="weird", op="SomeOpNobodyHas")
    with pytest.raises(tf.errors.InvalidArgumentError, match="Node 'weird'.*SomeOpNobodyHas"):
        tf_graph.import_tf_graph_def(gd)


def test_reading_a_non_constant_axis_names_the_node():
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [2, 3], name="x")
        tf.reduce_sum(x, axis=1, name="s")
    gd = tf_graph.export_graph_def(g).graph_def
    for nd in gd.node:
        if nd.op == "Sum":
            nd.input[1] = "x"  # the reduction axes now come from a placeholder
    with pytest.raises(tf.errors.InvalidArgumentError, match="Node 's'.*must be a constant"):
        tf_graph.import_tf_graph_def(gd)


def test_checkpoint_io_nodes_are_left_out_on_read():
    from tensorfleet.tf_graph.saver_nodes import SavedTensor, add_saver_nodes
    with tf.Graph().as_default() as g:
        v = tf.Variable([1.0, 2.0], name="v")
    gd = tf_graph.export_graph_def(g, [v.initializer]).graph_def
    saver_def = add_saver_nodes(gd, [SavedTensor("v", "v", tf.float32, v.shape)])
    assert saver_def.restore_op_name == "save/restore_all" and saver_def.filename_tensor_name == "save/Const:0"
    assert tf_op_def_oracle.problems(gd) == []
    internal = tf_graph.import_tf_graph_def(gd)
    assert sorted(nd.name for nd in internal.node) == ["v", "v/Assign", "v/initial_value"]
    assert tf_graph.saver_key_map(gd) == [("v", "v", "")]


def test_tf_import_graph_def_reads_graphs_tensorflow_wrote(zoo):
    """`tf.import_graph_def` takes TF's op forms (here a SavedModel's graph TF wrote, and the zoo's export) and
    leaves the internal form (what `Graph.as_graph_def()` and the distributed runtime use) as it is."""
    import os
    from tensorfleet.protos.saved_model_pb2 import SavedModel
    path = os.path.join(os.path.dirname(__file__), "data", "tf_saved_model", "mlp_ref", "saved_model.pb")
    tf_written = SavedModel.FromString(open(path, "rb").read()).meta_graphs[0].graph_def
    assert tf_graph.is_tf_form(tf_written) and tf_graph.is_tf_form(zoo[4].graph_def)
    assert not tf_graph.is_tf_form(zoo[0].as_graph_def())
    with tf.Graph().as_default() as g:
        probs, = tf.import_graph_def(tf_written, return_elements=["probabilities:0"], name="tf")
        assert probs.shape.as_list() == [None, 3] and "tf/save/RestoreV2" not in g._ops_by_name
        internal = zoo[0].as_graph_def()
        tf.import_graph_def(internal, name="mine")
        mine = [op for op in g.get_operations() if op.name.startswith("mine/")]
        assert len(mine) == len(internal.node)  # node for node: no TF-form reading of an internal graph
        assert g.get_operation_by_name("mine/random_normal/RandomStandardNormal").get_attr("shape") == (2, 5)
