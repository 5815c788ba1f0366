"""TFRecord framing (io/tfrecord.py) against independent oracles: the CRC-32C check values of RFC 3720 and the
CRC catalogue, TensorBoard's own pure-Python record reader (its masked CRC and framing), and Python's gzip/zlib."""
import gzip
import os
import struct
import zlib

import pytest

import tensorfleet as tf
from tensorfleet.io import tfrecord

tb_pywrap = pytest.importorskip("tensorboard.compat.tensorflow_stub.pywrap_tensorflow")
tb_errors = pytest.importorskip("tensorboard.compat.tensorflow_stub.errors")


def _tensorboard_records(path):
    """Every record of an uncompressed file, read by TensorBoard's own reader (which checks both CRCs)."""
    reader = tb_pywrap.PyRecordReader_New(os.fspath(path), 0, None, None)
    out = []
    while True:
        try:
            reader.GetNext()
        except tb_errors.OutOfRangeError:
            return out
        out.append(reader.record())


RECORDS = [b"", b"a", b"hello tfrecord", bytes(range(256)) * 40, b"\x00" * 3]


def test_crc32c_known_vectors():
    assert tfrecord.crc32c(b"123456789") == 0xE3069283  # the CRC catalogue's check value for CRC-32C
    assert tfrecord.crc32c(b"\x00" * 32) == 0x8A9136AA  # RFC 3720 B.4
    assert tfrecord.crc32c(b"\xff" * 32) == 0x62A8AB43
    assert tfrecord.crc32c(bytes(range(32))) == 0x46DD794E


def test_masked_crc_matches_tensorboard_and_the_formula():
    for data in RECORDS:
        crc = tfrecord.crc32c(data)
        assert tfrecord.masked_crc32c(data) == tb_pywrap.masked_crc32c(data)
        unrotated = (tfrecord.masked_crc32c(data) - 0xA282EAD8) & 0xFFFFFFFF
        assert ((unrotated << 15) | (unrotated >> 17)) & 0xFFFFFFFF == crc


def test_framing_bytes_are_exact(tmp_path):
    path = tmp_path / "one.tfrecord"
    with tf.io.TFRecordWriter(str(path)) as w:
        w.write(b"abc")
    raw = path.read_bytes()
    assert len(raw) == 8 + 4 + 3 + 4
    assert struct.unpack("<Q", raw[:8])[0] == 3
    assert struct.unpack("<I", raw[8:12])[0] == tb_pywrap.masked_crc32c(raw[:8])
    assert raw[12:15] == b"abc"
    assert struct.unpack("<I", raw[15:])[0] == tb_pywrap.masked_crc32c(b"abc")


def test_written_records_read_back_by_tensorboard_and_by_us(tmp_path):
    path = tmp_path / "data.tfrecord"
    w = tf.python_io.TFRecordWriter(str(path))
    for r in RECORDS:
        w.write(r)
    w.write("text é")  # str is written as UTF-8
    w.close()
    w.close()  # twice is fine
    expected = RECORDS + ["text é".encode()]
    assert _tensorboard_records(path) == expected
    assert list(tf.python_io.tf_record_iterator(str(path))) == expected
    assert list(tf.io.tf_record_iterator(str(path))) == expected


def test_flush_makes_records_visible_before_close(tmp_path):
    path = tmp_path / "f.tfrecord"
    w = tf.io.TFRecordWriter(str(path))
    w.write(b"first")
    w.flush()
    assert _tensorboard_records(path) == [b"first"]
    w.write(b"second")
    w.close()
    assert _tensorboard_records(path) == [b"first", b"second"]


@pytest.mark.parametrize("options", ["GZIP", tf.io.TFRecordCompressionType.GZIP,
                                     tf.io.TFRecordOptions(compression_type="GZIP", compression_level=9)])
def test_gzip_files_are_gzip_streams(tmp_path, options):
    path = tmp_path / "g.tfrecord.gz"
    with tf.io.TFRecordWriter(str(path), options=options) as w:
        for r in RECORDS:
            w.write(r)
    plain = tmp_path / "plain"
    plain.write_bytes(gzip.decompress(path.read_bytes()))
    assert _tensorboard_records(plain) == RECORDS
    assert list(tf.io.tf_record_iterator(str(path), options=options)) == RECORDS


def test_zlib_files_are_zlib_streams_and_flush_midway(tmp_path):
    path = tmp_path / "z.tfrecord"
    w = tf.io.TFRecordWriter(str(path), options=tf.io.TFRecordOptions(tf.io.TFRecordCompressionType.ZLIB))
    w.write(b"one")
    w.flush()
    d = zlib.decompressobj()
    assert d.decompress(path.read_bytes()) == tfrecord.encode_record(b"one")
    for r in RECORDS:
        w.write(r)
    w.close()
    plain = tmp_path / "plain"
    plain.write_bytes(zlib.decompress(path.read_bytes()))
    assert _tensorboard_records(plain) == [b"one"] + RECORDS
    assert list(tf.io.tf_record_iterator(str(path), "ZLIB")) == [b"one"] + RECORDS


def test_options_strings_as_tf():
    opts = tf.io.TFRecordOptions
    assert opts.get_compression_type_string(None) == ""
    assert opts.get_compression_type_string("GZIP") == "GZIP"
    assert opts.get_compression_type_string(tf.io.TFRecordCompressionType.ZLIB) == "ZLIB"
    assert opts.get_compression_type_string(opts("ZLIB")) == "ZLIB"
    with pytest.raises(ValueError, match="compression_type"):
        opts("LZ4")


def test_corrupted_data_is_a_data_loss_error_naming_the_offset(tmp_path):
    path = tmp_path / "c.tfrecord"
    with tf.io.TFRecordWriter(str(path)) as w:
        w.write(b"good")
        w.write(b"will be damaged")
    raw = bytearray(path.read_bytes())
    second = 8 + 4 + 4 + 4
    raw[second + 12 + 2] ^= 0x01
    path.write_bytes(bytes(raw))
    it = tf.io.tf_record_iterator(str(path))
    assert next(it) == b"good"
    with pytest.raises(tf.errors.DataLossError, match=f"corrupted record at {second}"):
        next(it)
    with pytest.raises(tb_errors.DataLossError):
        _tensorboard_records(path)


def test_corrupted_length_and_truncated_tail(tmp_path):
    path = tmp_path / "t.tfrecord"
    with tf.io.TFRecordWriter(str(path)) as w:
        w.write(b"x" * 100)
    raw = path.read_bytes()
    (tmp_path / "len").write_bytes(b"\x07" + raw[1:])
    with pytest.raises(tf.errors.DataLossError, match="corrupted record at 0"):
        list(tf.io.tf_record_iterator(str(tmp_path / "len")))
    (tmp_path / "cut").write_bytes(raw[:50])
    with pytest.raises(tf.errors.DataLossError, match="truncated record at 0"):
        list(tf.io.tf_record_iterator(str(tmp_path / "cut")))
    assert list(tfrecord.read_records(tmp_path / "cut", allow_truncated_tail=True)) == []


def test_missing_file_and_foreign_scheme(tmp_path):
    it = tf.io.tf_record_iterator(str(tmp_path / "nope"))  # a generator: raises at the first next(), as TF
    with pytest.raises(tf.errors.NotFoundError, match="nope"):
        next(it)
    with pytest.raises(tf.errors.UnimplementedError, match="'gs'"):
        tf.io.TFRecordWriter("gs://bucket/x.tfrecord")
    with pytest.raises(tf.errors.NotFoundError):
        tf.io.TFRecordWriter(str(tmp_path / "no_dir" / "x.tfrecord"))


def test_write_after_close_is_an_error(tmp_path):
    w = tf.io.TFRecordWriter(str(tmp_path / "x"))
    w.close()
    with pytest.raises(tf.errors.FailedPreconditionError, match="closed"):
        w.write(b"late")
