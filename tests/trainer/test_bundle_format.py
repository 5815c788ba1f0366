"""What tensorfleet writes is TensorFlow's checkpoint format, read back by an independent reader (tf_bundle_oracle.py,
written from the table-format and tensor-bundle documentation), and what it reads it reads exactly.

Covers every dtype a variable may have, scalars and empty tensors, string elements whose varint lengths take 1-3
bytes, an index large enough to span several table blocks, the table writer's block boundaries (checked by
the oracle's block-level rules), TF's slice keys (against the keys in TF's own partitioned fixture), and a
read that races with two saves to the same prefix (it returns the newest checkpoint, never a mix).
"""
import os

import numpy as np
import pytest
from test_tf_checkpoints import assert_same
from tf_bundle_oracle import decode_slice_key, read_bundle, read_table, table_blocks

import tensorfleet as tf
from tensorfleet.train import checkpoint_io, table_format, tensor_bundle
from tensorfleet.train.bundle_entries import slice_key

DATA = os.path.join(os.path.dirname(__file__), "data", "tf_checkpoints")


def _strings(*items):
    arr = np.empty(len(items), dtype=object)
    arr[:] = list(items)
    return arr


VALUES = {
    "f16": np.array([1.5, -0.25, 65504.0], np.float16),
    "f32": np.arange(12, dtype=np.float32).reshape(3, 4) / 7,
    "f64": np.array([[np.pi, -1e300]]),
    "i8": np.array([-128, 127], np.int8), "i16": np.array([-32768], np.int16),
    "i32": np.array(7, np.int32), "i64": np.array([-(2 ** 63), 2 ** 63 - 1]),
    "u8": np.array([0, 255], np.uint8), "u16": np.array([65535], np.uint16),
    "u32": np.array([2 ** 32 - 1], np.uint32), "u64": np.array([2 ** 64 - 1], np.uint64),
    "bool": np.array([[True, False]]), "c64": np.array([1 + 2j], np.complex64),
    "c128": np.array([[-1j, 3.5]], np.complex128), "empty": np.zeros((0, 5), np.float32),
    "s": _strings(b"", b"a", b"\x00\xff", b"x" * 127, b"y" * 128, b"z" * 20000),
    "s_scalar": np.array(b"alone", dtype=object),
}


def test_every_dtype_round_trips_and_the_independent_reader_agrees(tmp_path):
    prefix = str(tmp_path / "all")
    checkpoint_io.write_checkpoint(prefix, VALUES)
    header, oracle = read_bundle(prefix)
    ours = checkpoint_io.read_checkpoint(prefix)
    assert header["num_shards"] == 1 and sorted(oracle) == sorted(ours) == sorted(VALUES)
    for key, want in VALUES.items():
        assert_same(oracle[key], want, key)
        assert_same(ours[key], want, key)


def test_a_large_index_spans_several_blocks_with_restart_points(tmp_path):
    """8000 tensors with little common prefix: an index of ~350 KiB, more than TF's 256 KiB block size."""
    rng = np.random.default_rng(5)
    names = {f"v{i:05d}/{rng.bytes(12).hex()}": np.array([i], np.int32) for i in range(8000)}
    prefix = str(tmp_path / "many")
    checkpoint_io.write_checkpoint(prefix, names)
    with open(prefix + ".index", "rb") as f:
        raw = f.read()
    assert len(table_blocks(raw)) >= 2
    _, oracle = read_bundle(prefix)
    assert {k: int(v[0]) for k, v in oracle.items()} == {k: int(v[0]) for k, v in names.items()}
    last = sorted(names)[-1]
    assert checkpoint_io.read_checkpoint(prefix, [last])[last] == 7999


@pytest.mark.parametrize("seed", [0])
def test_table_writer_block_boundaries_read_back_by_both_readers(seed):
    rng = np.random.default_rng(seed)
    keys = sorted({bytes(rng.integers(0, 256, rng.integers(0, 40)).astype(np.uint8)) for _ in range(3000)})
    sizes = rng.choice([0, 10, 300], size=len(keys))
    sizes[[len(keys) // 3, 2 * len(keys) // 3]] = [300_000, 600_000]  # one past the block size, one past twice it
    items = [(k, bytes(rng.integers(0, 256, n).astype(np.uint8))) for k, n in zip(keys, sizes, strict=True)]
    raw = table_format.build_table(items)
    assert read_table(raw) == items
    assert table_format.read_table(raw) == items
    assert len(table_blocks(raw)) > 1


def test_slice_keys_are_tfs():
    with open(os.path.join(DATA, "partitioned", "model.ckpt.index"), "rb") as f:
        tf_keys = [k for k, _ in read_table(f.read()) if k[:1] == b"\x00"]
    decoded = [decode_slice_key(k) for k in tf_keys]
    assert ("emb", [(0, 4), (0, 4)]) in decoded and ("wide", [(0, 3), (3, 2)]) in decoded
    assert [slice_key(name, extents) for name, extents in decoded] == tf_keys
    assert decode_slice_key(slice_key("a\x00b\xffc", [(0, -1), (5, 3)])) == ("a\x00b\xffc", [(0, -1), (5, 3)])
    rng = np.random.default_rng(0)
    numbers = [0, -1, 63, 64, -64, -65, 8191, 8192, 2 ** 62, -(2 ** 63), 2 ** 63 - 1]
    numbers += [int(x) >> int(s) for x, s in zip(rng.integers(-(2 ** 63), 2 ** 63 - 1, 500, dtype=np.int64),
                                                  rng.integers(0, 63, 500), strict=True)]
    for n in numbers:
        assert decode_slice_key(slice_key("v", [(n, -n)])) == ("v", [(n, -n)])


def test_a_read_racing_two_saves_returns_the_newest_checkpoint(tmp_path, monkeypatch):
    """The reader parses P.index (data in shard 0 of 1); two saves then commit (of 2, then of 1 again, a new
    file under the old name): the reader sees the index changed after opening the data, and reads again."""
    prefix = str(tmp_path / "race")
    checkpoint_io.write_checkpoint(prefix, {"v": np.array([1.0])})
    real = tensor_bundle.BundleIndex.data_files
    calls = []

    def racing(self, names):
        if not calls:
            checkpoint_io.write_checkpoint(prefix, {"v": np.array([2.0])})
            checkpoint_io.write_checkpoint(prefix, {"v": np.array([3.0, 3.0])})
        calls.append(self.num_shards)
        return real(self, names)

    monkeypatch.setattr(tensor_bundle.BundleIndex, "data_files", racing)
    np.testing.assert_array_equal(checkpoint_io.read_checkpoint(prefix)["v"], [3.0, 3.0])
    assert calls == [1, 1]


def test_saver_rejects_unsupported_dtypes_and_reports_tf_only_types(tmp_path):
    prefix = str(tmp_path / "x")
    with pytest.raises(TypeError, match="Cannot convert value"):
        checkpoint_io.write_checkpoint(prefix, {"o": np.array(["2020-01-01"], np.datetime64)})
    writer_items = {"v": np.array([1.0], np.float32)}
    checkpoint_io.write_checkpoint(prefix, writer_items)
    with open(prefix + ".index", "rb") as f:
        items = read_table(f.read())
    entry = tf_entry = items[1][1]
    tf_entry = b"\x08\x0e" + entry[2:]  # dtype 14: DT_BFLOAT16, which TF has and tensorfleet does not
    with open(prefix + ".index", "wb") as f:
        f.write(table_format.build_table([items[0], (items[1][0], tf_entry)]))
    reader = tf.train.NewCheckpointReader(prefix)
    assert reader.get_variable_to_shape_map() == {"v": [1]}
    with pytest.raises(tf.errors.UnimplementedError, match=r"x\.index: tensor 'v' has dtype DT_BFLOAT16"):
        reader.get_tensor("v")
