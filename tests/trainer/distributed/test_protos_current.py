"""The committed generated proto modules are exactly what scripts/gen_protos.py produces now, and the
framework messages carry TensorFlow's field numbers (typed in from TF's framework/*.proto)."""
import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[3]


def _gen_protos():
    spec = importlib.util.spec_from_file_location("gen_protos", ROOT / "scripts" / "gen_protos.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_regenerating_gives_the_committed_files(tmp_path):
    gen = _gen_protos()
    written = gen.generate(tmp_path)
    assert written, "no proto compiled"
    committed = sorted(p.relative_to(ROOT / "trainer") for p in (ROOT / "trainer" / "tensorfleet").rglob("*_pb2*.py*")
                       if p.suffix in (".py", ".pyi"))   # not the bytecode `make test` compiles into __pycache__
    fresh = sorted(p.relative_to(tmp_path) for p in written)
    assert fresh == committed, "generated files differ from the committed set: run scripts/gen_protos.py"
    for rel in fresh:
        assert (tmp_path / rel).read_bytes() == (ROOT / "trainer" / rel).read_bytes(), \
            f"{rel} is stale: run scripts/gen_protos.py"


# (message, field) -> TensorFlow's number, from tensorflow/core/framework/*.proto (TF 1.15)
TF_FIELD_NUMBERS = {
    ("GraphDef", "node"): 1, ("GraphDef", "versions"): 4, ("GraphDef", "version"): 3,
    ("NodeDef", "name"): 1, ("NodeDef", "op"): 2, ("NodeDef", "input"): 3, ("NodeDef", "device"): 4,
    ("NodeDef", "attr"): 5, ("NodeDef", "experimental_debug_info"): 6,
    ("AttrValue", "list"): 1, ("AttrValue", "s"): 2, ("AttrValue", "i"): 3, ("AttrValue", "f"): 4,
    ("AttrValue", "b"): 5, ("AttrValue", "type"): 6, ("AttrValue", "shape"): 7, ("AttrValue", "tensor"): 8,
    ("AttrValue", "placeholder"): 9, ("AttrValue", "func"): 10,
    ("TensorProto", "dtype"): 1, ("TensorProto", "tensor_shape"): 2, ("TensorProto", "version_number"): 3,
    ("TensorProto", "tensor_content"): 4, ("TensorProto", "float_val"): 5, ("TensorProto", "double_val"): 6,
    ("TensorProto", "int_val"): 7, ("TensorProto", "string_val"): 8, ("TensorProto", "int64_val"): 10,
    ("TensorProto", "bool_val"): 11, ("TensorProto", "half_val"): 13,
    ("TensorShapeProto", "dim"): 2, ("TensorShapeProto", "unknown_rank"): 3,
    ("VersionDef", "producer"): 1, ("VersionDef", "min_consumer"): 2, ("VersionDef", "bad_consumers"): 3,
}
TF_DTYPES = {"DT_FLOAT": 1, "DT_DOUBLE": 2, "DT_INT32": 3, "DT_UINT8": 4, "DT_INT16": 5, "DT_INT8": 6,
             "DT_STRING": 7, "DT_INT64": 9, "DT_BOOL": 10, "DT_HALF": 19, "DT_FLOAT_REF": 101}


def test_framework_messages_use_tensorflow_field_numbers():
    from tensorfleet.protos import attr_value_pb2, graph_pb2, node_def_pb2, tensor_pb2, tensor_shape_pb2
    from tensorfleet.protos import types_pb2, versions_pb2

    messages = {"GraphDef": graph_pb2.GraphDef, "NodeDef": node_def_pb2.NodeDef, "AttrValue": attr_value_pb2.AttrValue,
                "TensorProto": tensor_pb2.TensorProto, "TensorShapeProto": tensor_shape_pb2.TensorShapeProto,
                "VersionDef": versions_pb2.VersionDef}
    for (msg, field), number in TF_FIELD_NUMBERS.items():
        assert messages[msg].DESCRIPTOR.fields_by_name[field].number == number, (msg, field)
    assert tensor_shape_pb2.TensorShapeProto.Dim.DESCRIPTOR.fields_by_name["size"].number == 1
    for name, number in TF_DTYPES.items():
        assert types_pb2.DataType.Value(name) == number
    # the package name keeps our messages apart from TensorBoard's registered `tensorboard.*` ones
    assert graph_pb2.GraphDef.DESCRIPTOR.full_name == "tensorfleet.GraphDef"


def test_a_node_encodes_to_tensorflows_wire_bytes():
    """NodeDef{name:"a", op:"Const"} by hand from the protobuf wire format: tag (1<<3|2)=0x0a, (2<<3|2)=0x12."""
    from tensorfleet.protos import node_def_pb2

    nd = node_def_pb2.NodeDef(name="a", op="Const")
    assert nd.SerializeToString() == b"\x0a\x01a\x12\x05Const"
