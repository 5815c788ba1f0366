"""Bounded fuzz of the checkpoint readers (issue 26, item 7): every malformed byte sequence in an index, data or
state file ends as a `tf.errors` error naming the checkpoint's file, or as a correct restore; never another
exception, and never other values.

Cases (seeded, ~900 in all): random mutations of `P.index` (bit flips, byte changes, truncation, extension,
insertion, deletion, random bytes), structured ones that keep the table valid (checksums recomputed) but
break what its entries say (dtypes, shapes, shards, offsets, sizes, slices, header fields, missing, renamed
or extra keys, garbage and deeply nested protobuf values), random mutations of the data file (and its
removal, or a directory in its place), structured and random mutations of a v1 JSON index (deep nesting,
floats, booleans and huge numbers where integers belong, odd data_file names; header checksum recomputed),
and of the `checkpoint` state file (which, as in TF, makes `latest_checkpoint` log and return None, or
name a prefix that then restores correctly or fails as above).
"""
import json
import os
import random
import shutil
import zlib

import numpy as np
import pytest
from google.protobuf.message import DecodeError

import tensorfleet as tf
from tensorfleet.protos import tensor_bundle_pb2
from tensorfleet.train import table_format

V1_DIR = os.path.join(os.path.dirname(__file__), "data", "v1_checkpoint")
INLINE = tf.ConfigProto(inter_op_parallelism_threads=1)


class Model:
    """A graph, its Saver and the values saved at `prefix`; `check()` runs one case against them."""

    def __init__(self, build, prefix: str, save: bool):
        self.graph = tf.Graph()
        with self.graph.as_default():
            self.variables = build()
            self.saver = tf.train.Saver()
            self.fetch = {k: tf.convert_to_tensor(v) for k, v in self.variables.items()}
            with tf.Session(config=INLINE) as sess:
                if save:
                    sess.run(tf.global_variables_initializer())
                    self.saver.save(sess, prefix, write_meta_graph=False)
                else:
                    self.saver.restore(sess, prefix)
                self.want = sess.run(self.fetch)
        self.prefix = prefix
        self.outcomes = {"error": 0, "restored": 0}

    def _same(self, got: dict) -> None:
        for key, want in self.want.items():
            assert np.asarray(got[key]).tolist() == np.asarray(want).tolist(), key

    def check(self, prefix=None) -> None:
        prefix = prefix or self.prefix
        try:
            with self.graph.as_default(), tf.Session(config=INLINE) as sess:
                self.saver.restore(sess, prefix)
                got = sess.run(self.fetch)
            reader = tf.train.NewCheckpointReader(prefix)
            values = {k: reader.get_tensor(k) for k in reader.get_variable_to_shape_map()}
        except tf.errors.OpError as e:
            assert self.prefix in str(e), f"{type(e).__name__} without the file's name: {e}"
            self.outcomes["error"] += 1
            return
        self._same(got)
        self._same(values)
        self.outcomes["restored"] += 1


def _build_bundle_model():
    w = tf.Variable(np.arange(12, dtype=np.float32).reshape(4, 3), name="w")
    step = tf.Variable(np.int64(7), name="step")
    words = tf.Variable([b"ab", b"", b"longer text"], name="words")
    emb = tf.get_variable("emb", initializer=np.arange(12, dtype=np.float32).reshape(6, 2),
                          partitioner=tf.fixed_size_partitioner(3))
    return {"w": w, "step": step, "words": words, "emb": emb}


def _build_v1_model():
    return {"dense/kernel": tf.Variable(np.zeros((2, 3), np.float32), name="dense/kernel"),
            "words": tf.Variable([b"", b"", b""], name="words"),
            "emb": tf.get_variable("emb", [5, 2], partitioner=tf.fixed_size_partitioner(2)),
            "global_step": tf.train.get_or_create_global_step()}


@pytest.fixture
def model(tmp_path):
    return Model(_build_bundle_model, str(tmp_path / "model.ckpt"), save=True)


def _random_mutation(rng: random.Random, good: bytes) -> bytes:
    raw = bytearray(good)
    kind = rng.randrange(7)
    pos = rng.randrange(len(raw))
    if kind == 0:
        raw[pos] ^= 1 << rng.randrange(8)
    elif kind == 1:
        raw[pos] = rng.randrange(256)
    elif kind == 2:
        del raw[pos:]
    elif kind == 3:
        raw += bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
    elif kind == 4:
        raw.insert(pos, rng.randrange(256))
    elif kind == 5:
        del raw[pos]
    else:
        raw = bytearray(rng.randbytes(len(raw)))
    return bytes(raw)


def _write(path: str, raw: bytes) -> None:
    with open(path, "wb") as f:
        f.write(raw)


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def test_random_mutations_of_the_index_and_data_files(model):
    rng = random.Random(1)
    for suffix, cases in ((".index", 250), (".data-00000-of-00001", 150)):
        path = model.prefix + suffix
        good = _read(path)
        for _ in range(cases):
            _write(path, _random_mutation(rng, good))
            model.check()
        _write(path, good)
    os.remove(model.prefix + ".data-00000-of-00001")
    model.check()
    os.mkdir(model.prefix + ".data-00000-of-00001")
    model.check()
    assert model.outcomes["error"] > 300 and model.outcomes["restored"] > 0  # appended bytes are ignored, as TF


_BIG = [0, 1, -1, 2, 3, 5, 2 ** 31 - 1, -(2 ** 31), 2 ** 40, 2 ** 62, 2 ** 63 - 1, -(2 ** 63)]


def _mutate_entry(rng: random.Random, entry) -> None:
    field = rng.choice(["dtype", "dim", "rank", "shard", "offset", "size", "crc", "slice", "unknown_rank"])
    if field == "dtype":
        entry.dtype = rng.choice(list(range(0, 25)) + [101, 200, 2 ** 31 - 1])
    elif field == "dim" and entry.shape.dim:
        rng.choice(entry.shape.dim).size = rng.choice(_BIG + [-5])
    elif field == "rank":
        if entry.shape.dim and rng.random() < 0.5:
            del entry.shape.dim[-1]
        else:
            for _ in range(rng.choice([1, 2, 70])):
                entry.shape.dim.add(size=rng.choice([0, 1, 2]))
    elif field == "shard":
        entry.shard_id = rng.choice([x for x in _BIG if -(2 ** 31) <= x < 2 ** 31])
    elif field in ("offset", "size"):
        setattr(entry, field, rng.choice(_BIG + [getattr(entry, field) + rng.choice([-1, 1])]))
    elif field == "crc":
        entry.crc32c = rng.randrange(2 ** 32)
    elif field == "unknown_rank":
        entry.shape.unknown_rank = True
    elif entry.slices:
        s = rng.choice(entry.slices)
        choice = rng.randrange(5)
        if choice == 0 and s.extent:
            rng.choice(s.extent).start = rng.choice(_BIG)
        elif choice == 1 and s.extent:
            rng.choice(s.extent).length = rng.choice(_BIG)
        elif choice == 2 and s.extent:
            rng.choice(s.extent).ClearField("length")
        elif choice == 3:
            entry.slices.add().CopyFrom(s)
        else:
            s.extent.add(start=0, length=1)


def _mutate_table(rng: random.Random, items: list) -> list:
    items = list(items)
    i = rng.randrange(len(items))
    key, value = items[i]
    kind = rng.randrange(8)
    try:  # an earlier mutation of this case may have left garbage there
        parsed = (tensor_bundle_pb2.BundleEntryProto if key else tensor_bundle_pb2.BundleHeaderProto).FromString(value)
    except DecodeError:
        kind = 4
    if kind in (0, 1, 2) and key != b"":
        _mutate_entry(rng, parsed)
        items[i] = (key, parsed.SerializeToString())
    elif kind in (0, 1, 2):
        header = parsed
        which = rng.randrange(5)
        if which == 0:
            header.num_shards = rng.choice([0, -1, 2, 99999, 100000, 2 ** 31 - 1])
        elif which == 1:
            header.endianness = rng.choice([1, 2, 2 ** 31 - 1])
        elif which == 2:
            header.version.min_consumer = rng.choice([2, 5])
        elif which == 3:
            header.version.bad_consumers.append(1)
        else:
            header.version.producer = -1
        items[i] = (key, header.SerializeToString())
    elif kind == 3:
        del items[i]
    elif kind == 4:
        items[i] = (key, rng.randbytes(rng.randrange(0, 40)))
    elif kind == 5:
        depth = rng.choice([10, 200, 5000])  # unknown group fields nested `depth` deep, then the value
        items[i] = (key, b"\x7b" * depth + b"\x7c" * depth + value)
    elif kind == 6:
        renamed = bytearray(key or b"x")
        renamed[rng.randrange(len(renamed))] = rng.randrange(256)
        items[i] = (bytes(renamed), value)
    else:
        items.append((rng.randbytes(rng.randrange(1, 12)), rng.randbytes(rng.randrange(0, 30))))
    unique = dict(items)
    return sorted(unique.items())


def test_structured_mutations_of_a_valid_table(model):
    rng = random.Random(2)
    path = model.prefix + ".index"
    good = table_format.read_table(_read(path))
    for _ in range(300):
        items = good
        for _ in range(rng.choice([1, 1, 2, 3])):
            items = _mutate_table(rng, items)
        _write(path, table_format.build_table(items))
        model.check()
    assert model.outcomes["error"] > 200


def _v1_mutation(rng: random.Random, doc: dict) -> bytes:
    doc = json.loads(json.dumps(doc))
    entry = rng.choice(list(doc["tensors"].values()))
    kind = rng.randrange(10)
    odd = rng.choice([1.5, True, None, "3", -1, 2 ** 70, [1], {"a": 1}, 1e308, float("nan")])
    if kind == 0:
        return b"[" * rng.choice([1000, 100000]) + b"]" * rng.choice([0, 1000])
    if kind == 1:
        entry["shape"] = [odd] if rng.random() < 0.5 else odd
    elif kind == 2:
        entry[rng.choice(["offset", "length", "crc32", "dtype"])] = odd
    elif kind == 3:
        doc[rng.choice(["data_size", "version", "tensors", "format"])] = odd
    elif kind == 4:
        doc["data_file"] = rng.choice(["", ".", "..", "/etc/passwd", "a\0b", "../x", 5, None, "nope"])
    elif kind == 5:
        entry["shape"] = [2 ** 62, 2 ** 62]
    elif kind == 6:
        entry["shape"] = [[[[1]]]] * 3
    elif kind == 7:
        del entry[rng.choice(sorted(entry))]
    elif kind == 8:
        doc["tensors"] = {k: odd for k in doc["tensors"]}
    else:
        entry["dtype"] = rng.choice(["complex64", "string", "int64", "bfloat16", ""])
    body = {k: v for k, v in doc.items() if k != "header_crc32"}
    doc["header_crc32"] = zlib.crc32(json.dumps(body, sort_keys=True, separators=(",", ":")).encode())
    return json.dumps(doc).encode()


def test_structured_and_random_mutations_of_a_v1_index(tmp_path):
    for name in os.listdir(V1_DIR):
        shutil.copy(os.path.join(V1_DIR, name), tmp_path / name)
    model = Model(_build_v1_model, str(tmp_path / "model.ckpt-2"), save=False)
    rng = random.Random(3)
    path = model.prefix + ".index"
    good = _read(path)
    doc = json.loads(good)
    for i in range(200):
        _write(path, _v1_mutation(rng, doc) if i % 4 else _random_mutation(rng, good))
        model.check()
    assert model.outcomes["error"] > 150


def test_mutations_of_the_state_file(model, caplog):
    rng = random.Random(4)
    directory = os.path.dirname(model.prefix)
    state = os.path.join(directory, "checkpoint")
    good = _read(state)
    crafted = [b'model_checkpoint_path: "\\000"\n', b'model_checkpoint_path: "' + b"x" * 5000 + b'"\n',
               b'model_checkpoint_path: "./model.ckpt"\n', b'model_checkpoint_path: "model.ckpt.index"\n',
               b'model_checkpoint_path: "/"\n', b'model_checkpoint_path: "\\377\\376"\n', b"\xff\xfe\x00",
               b'model_checkpoint_path: "model.ckpt', b"all_model_checkpoint_paths: 1\n", b""]
    for i in range(120):
        _write(state, crafted[i] if i < len(crafted) else _random_mutation(rng, good))
        latest = tf.train.latest_checkpoint(directory)
        assert latest is None or os.path.isfile(latest + ".index")
        if latest is not None:
            model.check(latest)
    assert model.outcomes["restored"] >= 1
