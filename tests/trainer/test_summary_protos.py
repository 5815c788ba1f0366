"""The protos (protos/{summary,event,feature,example}.proto) against independent oracles: TensorBoard's own
copies of TF's summary.proto and event.proto (field numbers, types, enums, wire compatibility) and, for
tf.train.Example, protobuf wire bytes written out by hand from TF's field numbers."""
import struct

import pytest

import tensorfleet as tf
from tensorfleet.protos import event_pb2, example_pb2, feature_pb2, summary_pb2

tb_summary = pytest.importorskip("tensorboard.compat.proto.summary_pb2")
tb_event = pytest.importorskip("tensorboard.compat.proto.event_pb2")
tb_histogram = pytest.importorskip("tensorboard.compat.proto.histogram_pb2")

#: fields TensorBoard's copies have that ours leave out on purpose (none)
NOT_YET: set = set()


def _fields(desc, prefix=""):
    name = prefix + desc.name
    out = {}
    for f in desc.fields:
        oneof = f.containing_oneof.name if f.containing_oneof else None
        type_name = f.message_type.name if f.message_type else (f.enum_type.name if f.enum_type else None)
        out[(name, f.name)] = (f.number, f.type, f.is_repeated, oneof, type_name)
    for nested in desc.nested_types:
        out.update(_fields(nested, name + "."))
    return out


@pytest.mark.parametrize("ours,theirs", [
    (summary_pb2.Summary, tb_summary.Summary), (summary_pb2.SummaryMetadata, tb_summary.SummaryMetadata),
    (summary_pb2.SummaryDescription, tb_summary.SummaryDescription),
    (summary_pb2.HistogramProto, tb_histogram.HistogramProto),
    (event_pb2.Event, tb_event.Event), (event_pb2.SessionLog, tb_event.SessionLog),
    (event_pb2.TaggedRunMetadata, tb_event.TaggedRunMetadata), (event_pb2.LogMessage, tb_event.LogMessage),
    (event_pb2.SourceMetadata, tb_event.SourceMetadata)])
def test_field_numbers_and_types_match_tensorboards_copy(ours, theirs):
    mine, ref = _fields(ours.DESCRIPTOR), _fields(theirs.DESCRIPTOR)
    assert set(ref) - set(mine) <= NOT_YET
    assert {k: ref[k] for k in ref if k not in NOT_YET} == mine


def test_enums_match():
    assert dict(event_pb2.SessionLog.SessionStatus.items()) == dict(tb_event.SessionLog.SessionStatus.items())
    assert dict(event_pb2.LogMessage.Level.items()) == dict(tb_event.LogMessage.Level.items())
    assert dict(summary_pb2.DataClass.items()) == dict(tb_summary.DataClass.items())


def test_event_bytes_parse_in_tensorboard():
    s = summary_pb2.Summary()
    s.value.add(tag="loss", simple_value=0.25)
    h = s.value.add(tag="h").histo
    h.min, h.max, h.num = -1.0, 2.0, 3.0
    h.bucket_limit.extend([0.0, 2.5])
    h.bucket.extend([1.0, 2.0])
    img = s.value.add(tag="i/image").image
    img.height, img.width, img.colorspace, img.encoded_image_string = 2, 3, 4, b"png"
    md = s.value[0].metadata
    md.plugin_data.plugin_name, md.plugin_data.content, md.display_name = "scalars", b"\x01", "Loss"
    ev = event_pb2.Event(wall_time=12.5, step=7, summary=s)
    theirs = tb_event.Event.FromString(ev.SerializeToString())
    assert theirs.step == 7 and theirs.wall_time == 12.5
    assert theirs.summary.value[0].simple_value == 0.25
    assert theirs.summary.value[0].metadata.plugin_data.plugin_name == "scalars"
    assert list(theirs.summary.value[1].histo.bucket) == [1.0, 2.0]
    assert theirs.summary.value[2].image.width == 3
    log = event_pb2.Event(session_log=event_pb2.SessionLog(status=event_pb2.SessionLog.CHECKPOINT,
                                                           checkpoint_path="/ckpt/model-5"))
    assert tb_event.Event.FromString(log.SerializeToString()).session_log.checkpoint_path == "/ckpt/model-5"
    assert event_pb2.Event.FromString(tb_event.Event(file_version="brain.Event:2").SerializeToString()) \
        .file_version == "brain.Event:2"


def _varint(n):
    out = b""
    while True:
        b, n = n & 0x7F, n >> 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out


def _ld(field, payload):  # a length-delimited field
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def test_example_wire_format_is_tfs():
    ex = tf.train.Example(features=tf.train.Features(feature={
        "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[3, 300])),
    }))
    # Example.features=1 { Features.feature=1 (map entry: key=1, value=2) { Feature.int64_list=3 { packed 1 } } }
    int64_list = _ld(1, _varint(3) + _varint(300))
    entry = _ld(1, b"label") + _ld(2, _ld(3, int64_list))
    assert ex.SerializeToString() == _ld(1, _ld(1, entry))
    ex2 = tf.train.Example(features=tf.train.Features(feature={
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=[1.5])),
    }))
    entry2 = _ld(1, b"x") + _ld(2, _ld(2, _ld(1, struct.pack("<f", 1.5))))
    assert ex2.SerializeToString() == _ld(1, _ld(1, entry2))
    ex3 = tf.train.Example(features=tf.train.Features(feature={
        "b": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"ab", b""])),
    }))
    entry3 = _ld(1, b"b") + _ld(2, _ld(1, _ld(1, b"ab") + _ld(1, b"")))
    assert ex3.SerializeToString() == _ld(1, _ld(1, entry3))


def test_sequence_example_and_names():
    seq = tf.train.SequenceExample()
    seq.context.feature["len"].int64_list.value.append(2)
    fl = seq.feature_lists.feature_list["tokens"]
    fl.feature.add().bytes_list.value.append(b"a")
    fl.feature.add().bytes_list.value.append(b"b")
    back = example_pb2.SequenceExample.FromString(seq.SerializeToString())
    assert [f.bytes_list.value[0] for f in back.feature_lists.feature_list["tokens"].feature] == [b"a", b"b"]
    assert tf.train.Feature is feature_pb2.Feature and tf.train.FeatureLists is feature_pb2.FeatureLists
    assert tf.Summary is summary_pb2.Summary and tf.summary.Summary is summary_pb2.Summary
    assert tf.Event is event_pb2.Event and tf.summary.SessionLog is event_pb2.SessionLog
    assert tf.HistogramProto is summary_pb2.HistogramProto and tf.SummaryMetadata is summary_pb2.SummaryMetadata
