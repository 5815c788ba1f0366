"""tf.string tensors: constants, feeds, fetches (bytes out, as TF), the string ops, tf.print/tf.Print, string
variables through the Saver, report_uninitialized_variables. Oracles: Python's str/bytes/csv/struct semantics
and the values TF 1.15's docs give."""
import os
import struct

import numpy as np
import pytest
from tf_bundle_oracle import crc32c, masked

import tensorfleet as tf


def run(fetches, feed=None):
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        return s.run(fetches, feed)


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default():
        yield


def test_constant_fetches_bytes_like_tf():
    h = tf.constant("Hello, TensorFlow!")
    arr = tf.constant([["a", "é"], [b"\x00b", "c"]])
    assert h.dtype is tf.string and h.shape.as_list() == [] and arr.shape.as_list() == [2, 2]
    hv, av = run([h, arr])
    assert hv == b"Hello, TensorFlow!" and isinstance(hv, bytes)
    assert av.dtype == object and av.tolist() == [[b"a", "é".encode()], [b"\x00b", b"c"]]


def test_placeholder_feed_str_and_bytes_and_errors():
    p = tf.placeholder(tf.string, [None])
    out = run(tf.identity(p), {p: ["x", b"y", np.str_("z")]})
    assert out.tolist() == [b"x", b"y", b"z"]
    with pytest.raises(TypeError, match="dtype string"):
        run(tf.identity(p), {p: [1, 2]})
    with pytest.raises(ValueError, match="shape"):
        run(tf.identity(p), {p: "scalar"})
    q = tf.placeholder("string")
    assert run(q, {q: np.array([b"a", b"b"], dtype=object)}).tolist() == [b"a", b"b"]


def test_generic_ops_carry_strings():
    t = tf.constant(["a", "b", "c", "d"])
    r = tf.reshape(t, [2, 2])
    g = tf.gather(t, [3, 0])
    c = tf.concat([t, tf.constant(["e"])], 0)
    rv, gv, cv = run([r, g, c])
    assert rv.tolist() == [[b"a", b"b"], [b"c", b"d"]] and gv.tolist() == [b"d", b"a"]
    assert cv.tolist() == [b"a", b"b", b"c", b"d", b"e"]


@pytest.mark.parametrize("value,kwargs,expected", [
    ([3.14, -2.0], {}, [b"3.140000", b"-2.000000"]),  # TF's default "%f"
    ([3.14159], {"precision": 2}, [b"3.14"]),
    ([1234.5], {"scientific": True}, [b"1.234500e+03"]),
    ([0.0001], {"shortest": True}, [b"0.0001"]),
    ([7, -3], {"width": 4, "fill": "0"}, [b"0007", b"-003"]),
    ([7], {"width": 3}, [b"  7"]),
    ([True, False], {}, [b"true", b"false"]),
])
def test_as_string_printf_semantics(value, kwargs, expected):
    assert run(tf.as_string(tf.constant(value), **kwargs)).tolist() == expected


def test_as_string_rejects_strings_and_bad_fill():
    with pytest.raises(TypeError, match="AsString"):
        tf.as_string(tf.constant("a"))
    with pytest.raises(ValueError, match="one or fewer"):
        tf.as_string(tf.constant(1), fill="ab")


def test_string_join_broadcasts_scalars_like_python_join():
    a, b = ["x", "yy", ""], ["1", "2", "3"]
    out = run(tf.string_join([a, "-", b], separator="|"))
    assert out.tolist() == ["|".join(t).encode() for t in zip(a, ["-"] * 3, b, strict=True)]
    assert run(tf.strings.join(["a", "b"])) == b"ab"
    with pytest.raises(ValueError, match="shapes"):
        tf.string_join([["a", "b"], ["c"]])


def test_reduce_join_matches_tf_docs():
    # TF 1.15 docstring: a = [["a", "b"], ["c", "d"]]
    a = tf.constant([["a", "b"], ["c", "d"]])
    assert run(tf.reduce_join(a, 0)).tolist() == [b"ac", b"bd"]
    assert run(tf.reduce_join(a, 1)).tolist() == [b"ab", b"cd"]
    assert run(tf.reduce_join(a, -2)).tolist() == [b"ac", b"bd"]
    assert run(tf.reduce_join(a, 0, keep_dims=True)).tolist() == [[b"ac", b"bd"]]
    assert run(tf.reduce_join(a, 1, keep_dims=True)).tolist() == [[b"ab"], [b"cd"]]
    assert run(tf.reduce_join(a, 0, separator=".")).tolist() == [b"a.c", b"b.d"]
    assert run(tf.reduce_join(a, [0, 1])) == b"acbd"
    assert run(tf.reduce_join(a, [1, 0])) == b"abcd"
    assert run(tf.reduce_join(a)) == b"abcd"
    assert tf.reduce_join(a, 1, keep_dims=True).shape.as_list() == [2, 1]


def test_string_split_v1_dense_form_matches_tf_docs():
    # TF 1.15 docs: string_split(['hello world', 'a b c']) -> indices [[0,0],[0,1],[1,0],[1,1],[1,2]],
    # values ['hello','world','a','b','c'], dense_shape [2,3]
    sp = tf.string_split(["hello world", "a b c"])
    v = run(sp)
    assert v.indices.tolist() == [[0, 0], [0, 1], [1, 0], [1, 1], [1, 2]]
    assert v.values.tolist() == [b"hello", b"world", b"a", b"b", b"c"]
    assert v.dense_shape.tolist() == [2, 3]
    dense = run(tf.sparse_tensor_to_dense(sp, default_value=""))
    assert dense.tolist() == [[b"hello", b"world", b""], [b"a", b"b", b"c"]]


def test_string_split_v1_delimiter_characters_and_skip_empty():
    src = ["a,b;;c", ""]
    v = run(tf.string_split(src, delimiter=",;"))
    assert v.values.tolist() == [b"a", b"b", b"c"] and v.dense_shape.tolist() == [2, 3]
    v = run(tf.string_split(src, delimiter=",;", skip_empty=False))
    assert v.values.tolist() == [b"a", b"b", b"", b"c", b""]
    v = run(tf.string_split(["abc"], delimiter=""))
    assert v.values.tolist() == [b"a", b"b", b"c"]


@pytest.mark.parametrize("sep,maxsplit", [(None, -1), (",", -1), (",", 1), ("<>", -1), (None, 1)])
def test_strings_split_follows_python_str_split(sep, maxsplit):
    src = ["a,b,,c", "  x  y ", "1<>2<>", ""]
    v = run(tf.strings.split(src, sep=sep, maxsplit=maxsplit))
    rows = [s.split(sep, maxsplit) if (s or sep is None) else [""] for s in src]
    assert v.values.tolist() == [t.encode() for r in rows for t in r]
    assert v.dense_shape.tolist() == [len(src), max(len(r) for r in rows)]


def test_decode_raw_matches_struct_and_checks_sizes():
    vals = [[1.5, -2.0], [3.25, 0.0]]
    recs = [struct.pack("<2f", *r) for r in vals]
    np.testing.assert_array_equal(run(tf.decode_raw(recs, tf.float32)), np.array(vals, np.float32))
    big = [struct.pack(">3h", 1, -2, 300)]
    assert run(tf.decode_raw(big, tf.int16, little_endian=False)).tolist() == [[1, -2, 300]]
    assert run(tf.decode_raw(tf.constant(b"\x01\x02"), tf.uint8)).tolist() == [1, 2]
    with pytest.raises(tf.errors.InvalidArgumentError, match="same size"):
        run(tf.decode_raw([b"abcd", b"ab"], tf.uint8))
    with pytest.raises(tf.errors.InvalidArgumentError, match="not a multiple of 4"):
        run(tf.decode_raw([b"abcde"], tf.float32))


def test_decode_csv_types_defaults_quotes_and_errors():
    recs = tf.constant(['1,2.5,hello', '3,,"a,b"', '-4,1e3,'])
    a, b, c = tf.decode_csv(recs, [[0], [9.0], ["dflt"]])
    assert a.dtype is tf.int32 and b.dtype is tf.float32 and c.dtype is tf.string
    av, bv, cv = run([a, b, c])
    assert av.tolist() == [1, 3, -4] and bv.tolist() == [2.5, 9.0, 1000.0]
    assert cv.tolist() == [b"hello", b"a,b", b"dflt"]
    req = tf.decode_csv(["1,"], [[0], tf.constant([], tf.float32)])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Field 1 is required but missing in record 0"):
        run(req)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Expect 2 fields but have 3"):
        run(tf.decode_csv(["1,2,3"], [[0], [0]]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="not a valid int32: x"):
        run(tf.decode_csv(["x"], [[0]]))
    sel = tf.io.decode_csv(["a;b;c"], [[""], [""]], field_delim=";", select_cols=[0, 2])
    assert [v.tolist() for v in run(sel)] == [[b"a"], [b"c"]]


def test_string_to_number_length_strip_substr_regex():
    s = tf.constant([" 12 ", "x"])
    assert run(tf.strings.to_number(s[:1], tf.int32)).tolist() == [12]
    with pytest.raises(tf.errors.InvalidArgumentError, match="could not correctly convert string: x"):
        run(tf.strings.to_number(s))
    assert run(tf.strings.length(["ab", "é"])).tolist() == [2, 2]
    assert run(tf.strings.length(["ab", "é"], unit="UTF8_CHAR")).tolist() == [2, 1]
    assert run(tf.strings.strip(s)).tolist() == [b"12", b"x"]
    assert run(tf.strings.substr(["hello"], 1, 3)).tolist() == [b"ell"]
    assert run(tf.strings.regex_replace(["a1b22"], r"(\d+)", r"<\1>")).tolist() == [b"a<1>b<22>"]


def test_tf_print_renders_strings_and_tensors(capfd):
    op = tf.print("loss:", tf.constant("x y"), tf.constant(["a", "b"]), tf.range(10), tf.constant([[1, 2], [3, 4]]))
    run(op)
    assert capfd.readouterr().err == 'loss: x y ["a" "b"] [0 1 2 ... 7 8 9] [[1 2]\n [3 4]]\n'
    run(tf.print(tf.constant("out"), output_stream=__import__("sys").stdout, end="!"))
    assert capfd.readouterr().out == "out!"


def test_tf_Print_of_strings(capfd):
    t = tf.Print(tf.constant(1.0), [tf.constant(["hi", "there"])], message="msg: ")
    assert run(t) == 1.0
    assert capfd.readouterr().err == "msg: [hi there]\n"


def test_string_variables_round_trip_through_the_saver(tmp_path):
    v = tf.Variable(["ab", "héllo", ""], name="words")
    set_v = tf.assign(v, ["x", "y", "z"])
    saver = tf.train.Saver()
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        path = saver.save(s, str(tmp_path / "m"))
        s.run(set_v)
        saver.restore(s, path)
        assert s.run(v).tolist() == [b"ab", "héllo".encode(), b""]
    raw = open(path + ".data-00000-of-00001", "rb").read()
    elements = [b"ab", "héllo".encode(), b""]  # TF's layout: varint lengths, masked crc32c of them (as uint32s)
    length_crc = masked(crc32c(b"".join(struct.pack("<I", len(b)) for b in elements)))
    assert raw == bytes([2, 6, 0]) + struct.pack("<I", length_crc) + b"".join(elements)  # byte for byte


def test_corrupt_string_checkpoint_is_data_loss(tmp_path):
    from tensorfleet.train import checkpoint_io
    prefix = str(tmp_path / "c")
    checkpoint_io.write_checkpoint(prefix, {"s": np.array([b"abc"], dtype=object)})
    assert checkpoint_io.read_checkpoint(prefix)["s"].tolist() == [b"abc"]
    data = prefix + ".data-00000-of-00001"
    good = open(data, "rb").read()
    for raw, match in [(b"\x09" + good[1:], "lengths' checksum does not match"),  # a length of 9, not 3
                       (good[:5] + b"abd", "checksum mismatch for tensor 's'")]:
        open(data, "wb").write(raw)
        with pytest.raises(tf.errors.DataLossError, match=match):
            checkpoint_io.read_checkpoint(prefix)
    assert os.path.exists(prefix + ".index")


def test_report_uninitialized_variables_names_as_strings():
    with tf.variable_scope("scope"):
        a = tf.Variable(1.0, name="a")
    b = tf.Variable([2], name="b")
    report = tf.report_uninitialized_variables()
    assert report.dtype is tf.string
    with tf.Session() as s:
        assert s.run(report).tolist() == [b"scope/a", b"b"]
        s.run(a.initializer)
        assert s.run(report).tolist() == [b"b"]
        s.run(b.initializer)
        out = s.run(report)
        assert out.shape == (0,) and out.dtype == object
    with tf.Graph().as_default():
        assert run(tf.report_uninitialized_variables()).shape == (0,)


def test_trailing_nul_bytes_survive_constants_and_scalar_feeds():
    """A serialized proto can end in b'\\x00': TF keeps every byte of a Python bytes value."""
    blob = b"a\x00\x00"
    c = tf.constant(blob)
    listed = tf.constant([b"x\x00", b"y"])
    p = tf.placeholder(tf.string)
    with tf.Session() as sess:
        assert sess.run(c) == blob
        assert sess.run(listed).tolist() == [b"x\x00", b"y"]
        assert sess.run(p, {p: np.array(b"b\x00")}) == b"b\x00"
        assert sess.run(p, {p: b"c\x00"}) == b"c\x00"
