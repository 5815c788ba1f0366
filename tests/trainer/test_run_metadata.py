"""`tf.RunOptions` / `tf.RunMetadata` are TF's protos and a traced run fills `step_stats` as TF's executor does.

Oracles: TensorBoard's own copies of TF's protos (`tensorboard.compat.proto`: field numbers and types, and
parsing what tensorfleet serializes), the fetched values (output shapes and sizes), the wall clock around
the run (times), TF's timeline-label form and device names.
"""
import time

import numpy as np
import pytest

import tensorfleet as tf
from tensorfleet.protos import config_pb2, cost_graph_pb2, step_stats_pb2

tb_config = pytest.importorskip("tensorboard.compat.proto.config_pb2")
tb_step_stats = pytest.importorskip("tensorboard.compat.proto.step_stats_pb2")
tb_cost_graph = pytest.importorskip("tensorboard.compat.proto.cost_graph_pb2")

CPU = "/job:localhost/replica:0/task:0/device:CPU:0"


_FILES = {"config.proto", "step_stats.proto", "cost_graph.proto", "tensor_description.proto",
          "allocation_description.proto"}  # GraphDef & co are checked by the graph tests


def _fields(descriptor, seen=None):
    """{message.field: (number, type)} of a message and the messages it holds, by name."""
    seen = {} if seen is None else seen
    for f in descriptor.fields:
        key = f"{descriptor.name}.{f.name}"
        if key in seen:
            continue
        seen[key] = (f.number, f.type, f.is_repeated if hasattr(f, "is_repeated") else f.label)
        sub = f.message_type
        if sub is not None and not sub.GetOptions().map_entry and sub.file.name.rsplit("/", 1)[-1] in _FILES:
            _fields(sub, seen)
    return seen


@pytest.mark.parametrize("ours,theirs", [(config_pb2.RunOptions, tb_config.RunOptions),
                                         (config_pb2.RunMetadata, tb_config.RunMetadata),
                                         (step_stats_pb2.StepStats, tb_step_stats.StepStats),
                                         (cost_graph_pb2.CostGraphDef, tb_cost_graph.CostGraphDef)])
def test_field_numbers_and_types_are_tfs(ours, theirs):
    mine, tf_fields = _fields(ours.DESCRIPTOR), _fields(theirs.DESCRIPTOR)
    for key, spec in mine.items():
        assert tf_fields.get(key) == spec, key
    # what TF 1.15 had and we leave out: tfdbg's DebugOptions, and fields added after 1.15
    later = {k for k in tf_fields if "nanos" in k or "run_handler_pool_options" in k or "session_metadata" in k
             or k.startswith(("DebugOptions.", "DebugTensorWatch.", "AggregatedCost.", "RunHandlerPoolOptions.",
                              "SessionMetadata."))}
    assert set(tf_fields) - set(mine) - later <= {"RunOptions.debug_options", "CostGraphDef.cost"}


def test_run_options_and_metadata_are_protos_with_tfs_enum():
    opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE, timeout_in_ms=5)
    assert tf.RunOptions.FULL_TRACE == tf.RunOptions.TraceLevel.Value("FULL_TRACE") == 3
    assert tb_config.RunOptions.FromString(opts.SerializeToString()).trace_level == tb_config.RunOptions.FULL_TRACE
    with pytest.raises(ValueError):
        tf.RunOptions(trace_levle=1)
    md = tf.RunMetadata()
    assert md.SerializeToString() == b"" and len(md.step_stats.dev_stats) == 0


def _traced(fetches, feed=None, **options):
    meta = tf.RunMetadata()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        before = time.time()
        values = sess.run(fetches, feed, options=tf.RunOptions(**options), run_metadata=meta)
        after = time.time()
    return values, meta, before, after


def test_full_trace_fills_each_nodes_device_times_label_and_outputs():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="w")
    y = tf.matmul(x, w, name="y")
    z = tf.nn.relu(y, name="z")
    xv = np.ones((4, 3), np.float32)
    (yv, zv), meta, before, after = _traced([y, z], {x: xv}, trace_level=tf.RunOptions.FULL_TRACE)
    (dev,) = meta.step_stats.dev_stats
    assert dev.device == CPU
    by_name = {n.node_name: n for n in dev.node_stats}
    assert {"w", "w/read", "y", "z"} <= set(by_name)
    assert by_name["y"].timeline_label == "y = MatMul(x, w)"
    assert by_name["w/read"].timeline_label == "w/read = Identity(w)"
    starts = [n.all_start_micros for n in dev.node_stats]
    assert starts == sorted(starts)  # one thread, in run order
    for n in dev.node_stats:
        assert before * 1e6 - 1e3 <= n.all_start_micros <= after * 1e6 + 1e3
        assert 0 == n.op_start_rel_micros <= n.op_end_rel_micros <= n.all_end_rel_micros
        assert n.all_start_micros + n.all_end_rel_micros <= after * 1e6 + 1e3
    for name, value in (("y", yv), ("z", zv)):
        (out,) = by_name[name].output
        assert out.slot == 0
        td = out.tensor_description
        assert [d.size for d in td.shape.dim] == list(value.shape)
        assert td.dtype == 1  # DT_FLOAT
        assert td.allocation_description.requested_bytes == value.nbytes
        assert by_name[name].memory[0].total_bytes == value.nbytes
        assert by_name[name].memory[0].allocator_name == "cpu"
    parsed = tb_config.RunMetadata.FromString(meta.SerializeToString())  # TF's own parser reads it
    assert [n.node_name for n in parsed.step_stats.dev_stats[0].node_stats] == [n.node_name for n in dev.node_stats]


@pytest.mark.parametrize("level", ["SOFTWARE_TRACE", "HARDWARE_TRACE"])
def test_every_level_above_no_trace_collects(level):
    c = tf.constant(2.0, name="c")
    _, meta, _, _ = _traced(tf.square(c, name="sq"), trace_level=getattr(tf.RunOptions, level))
    assert [n.node_name for n in meta.step_stats.dev_stats[0].node_stats] == ["c", "sq"]


def test_no_trace_or_no_metadata_collects_nothing():
    c = tf.constant(2.0)
    _, meta, _, _ = _traced(c * 2.0, trace_level=tf.RunOptions.NO_TRACE)
    assert meta.SerializeToString() == b""
    with tf.Session() as sess:  # options without a RunMetadata: nothing to fill, the run is not traced
        assert sess.run(c * 3.0, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)) == 6.0


def test_output_partition_graphs_lists_the_ops_run_per_device():
    a = tf.constant(1.0, name="a")
    b = tf.add(a, a, name="b")
    _, meta, _, _ = _traced(b, output_partition_graphs=True)
    (gd,) = meta.partition_graphs
    assert [n.name for n in gd.node] == ["a", "b"] and {n.device for n in gd.node} == {CPU}
    assert len(meta.step_stats.dev_stats) == 0  # not traced: only the graphs


def test_two_devices_give_two_dev_stats_with_tfs_names():
    config = tf.ConfigProto(experimental=tf.ConfigProto.Experimental(simulated_devices=["/cpu:0", "/gpu:0"]))
    with tf.device("/cpu:0"):
        a = tf.constant(np.ones((2, 2), np.float32), name="a")
    with tf.device("/gpu:0"):
        b = tf.matmul(a, a, name="b")
    meta = tf.RunMetadata()
    with tf.Session(config=config) as sess:
        sess.run(b, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=meta)
    devices = {d.device: [n.node_name for n in d.node_stats] for d in meta.step_stats.dev_stats}
    assert devices[CPU] == ["a"]
    gpu = devices["/job:localhost/replica:0/task:0/device:GPU:0"]
    assert "b" in gpu and any("_copy_" in n for n in gpu)  # the copy onto the GPU runs there too


def test_monitored_session_hooks_receive_the_trace_they_ask_for():
    class Tracer(tf.train.SessionRunHook):
        def before_run(self, run_context):
            return tf.train.SessionRunArgs(None, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE))

        def after_run(self, run_context, run_values):
            self.names = [n.node_name for d in run_values.run_metadata.step_stats.dev_stats for n in d.node_stats]

    hook = Tracer()
    sq = tf.square(tf.constant(3.0, name="v"), name="sq")
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        assert sess.run(sq) == 9.0
    assert "sq" in hook.names
