"""TFRecord files: TF's record framing, shared by `tf.data.TFRecordDataset` input and TensorBoard event files.

Beside the runtime, below `summary` and `data` (uses only `errors`). Each record on disk is, as TF writes it
(tensorflow/core/lib/io/record_writer.cc):

    uint64 length (little endian) | uint32 masked_crc32c(length bytes) | data | uint32 masked_crc32c(data)

where masked_crc32c(x) = rotate_right(crc32c(x), 15) + 0xa282ead8 (mod 2**32); CRC32C comes from
`google-crc32c` (Google's C library, with its own pure-Python fallback). A file may be compressed as a whole
("ZLIB": a zlib stream, "GZIP": a gzip stream), as TF's `TFRecordOptions` say. Reading a record whose CRC does
not match raises `tf.errors.DataLossError` ("corrupted record at OFFSET"), a record cut short by the end of the
file "truncated record at OFFSET", both naming the file; a clean end of file ends the iteration.
"""
from __future__ import annotations

import gzip
import os
import struct
import zlib
from typing import Iterator

import google_crc32c

from .. import errors

__all__ = ["TFRecordCompressionType", "TFRecordOptions", "TFRecordWriter", "tf_record_iterator"]

_MASK_DELTA = 0xA282EAD8
_HEADER = struct.Struct("<QI")  # length, masked crc of the length
_FOOTER = struct.Struct("<I")  # masked crc of the data
#: a record longer than this is taken as a corrupt length field rather than read into memory
MAX_RECORD_BYTES = 1 << 31


def crc32c(data: bytes) -> int:
    """The CRC-32C (Castagnoli) of `data`."""
    return google_crc32c.value(bytes(data))


def masked_crc32c(data: bytes) -> int:
    """TF's masked CRC-32C: the CRC rotated right by 15 bits plus 0xa282ead8, modulo 2**32."""
    crc = crc32c(data)
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + _MASK_DELTA) & 0xFFFFFFFF


def encode_record(data: bytes) -> bytes:
    """One framed record: header, data, footer."""
    n = struct.pack("<Q", len(data))
    return n + struct.pack("<I", masked_crc32c(n)) + data + _FOOTER.pack(masked_crc32c(data))


class TFRecordCompressionType:
    """TF's compression types for TFRecord files."""

    NONE = 0
    ZLIB = 1
    GZIP = 2


_TYPE_NAMES = {TFRecordCompressionType.NONE: "", TFRecordCompressionType.ZLIB: "ZLIB",
               TFRecordCompressionType.GZIP: "GZIP"}


class TFRecordOptions:
    """Options for TFRecord files (TF 1.15's arguments; the zlib ones apply to ZLIB and GZIP)."""

    compression_type_map = {TFRecordCompressionType.ZLIB: "ZLIB", TFRecordCompressionType.GZIP: "GZIP",
                            TFRecordCompressionType.NONE: ""}

    def __init__(self, compression_type=None, flush_mode=None, input_buffer_size=None, output_buffer_size=None,
                 window_bits=None, compression_level=None, compression_method=None, mem_level=None,
                 compression_strategy=None):
        self.compression_type = _compression_name(compression_type)
        self.flush_mode = flush_mode
        self.input_buffer_size = input_buffer_size
        self.output_buffer_size = output_buffer_size
        self.window_bits = window_bits
        self.compression_level = compression_level
        self.compression_method = compression_method
        self.mem_level = mem_level
        self.compression_strategy = compression_strategy

    @classmethod
    def get_compression_type_string(cls, options) -> str:
        """"", "ZLIB" or "GZIP" for options given as None, a TFRecordOptions, a type or its name."""
        if isinstance(options, TFRecordOptions):
            return options.compression_type
        return _compression_name(options)


def _compression_name(value) -> str:
    if value is None:
        return ""
    if isinstance(value, TFRecordOptions):
        return value.compression_type
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError(f"compression_type must be None, a TFRecordCompressionType or one of '', 'ZLIB', "
                         f"'GZIP', got {value!r}")
    if isinstance(value, int):
        if value not in _TYPE_NAMES:
            raise ValueError(f"Unknown TFRecordCompressionType {value!r}")
        return _TYPE_NAMES[value]
    if value not in ("", "ZLIB", "GZIP"):
        raise ValueError(f"Unsupported compression_type {value!r}: expected '', 'ZLIB' or 'GZIP'")
    return value


def _local_path(path) -> str:
    p = os.fspath(path)
    if isinstance(p, bytes):
        p = p.decode()
    scheme, sep, rest = p.partition("://")
    if sep and "/" not in scheme:
        if scheme != "file":
            raise errors.UnimplementedError(None, None, f"File system scheme '{scheme}' not implemented "
                                                        f"(file: '{p}')")
        return rest
    return p


def _open_error(e: OSError, path: str) -> errors.OpError:
    if isinstance(e, FileNotFoundError):
        return errors.NotFoundError(None, None, f"{path}; No such file or directory")
    if isinstance(e, PermissionError):
        return errors.PermissionDeniedError(None, None, f"{path}; Permission denied")
    if isinstance(e, (IsADirectoryError, NotADirectoryError)):
        return errors.FailedPreconditionError(None, None, f"{path}; {e.strerror}")
    return errors.UnknownError(None, None, f"{path}; {e}")


def _options(options) -> TFRecordOptions:
    if isinstance(options, TFRecordOptions):
        return options
    return TFRecordOptions(_compression_name(options))


class TFRecordWriter:
    """`tf.io.TFRecordWriter(path, options=None)`: writes records to a new file (truncating one that exists)."""

    def __init__(self, path, options=None):
        self._path = _local_path(path)
        opts = _options(options)
        self._compression = opts.compression_type
        level = -1 if opts.compression_level is None else int(opts.compression_level)
        wbits = 15 if opts.window_bits is None else int(opts.window_bits)
        try:
            self._file = open(self._path, "wb")
        except OSError as e:
            raise _open_error(e, self._path) from e
        self._zlib = None
        if self._compression == "ZLIB":
            self._zlib = zlib.compressobj(level, zlib.DEFLATED, wbits)
        elif self._compression == "GZIP":
            self._zlib = zlib.compressobj(level, zlib.DEFLATED, 16 + wbits)  # gzip header and trailer
        self._closed = False

    def write(self, record) -> None:
        """Appends one record (bytes; a str is written as UTF-8)."""
        if self._closed:
            raise errors.FailedPreconditionError(None, None, f"TFRecordWriter for {self._path} is closed")
        if isinstance(record, str):
            record = record.encode()
        framed = encode_record(bytes(record))
        self._file.write(framed if self._zlib is None else self._zlib.compress(framed))

    def flush(self) -> None:
        """Pushes everything written so far to the file (a full zlib flush point when compressed)."""
        if self._closed:
            return
        if self._zlib is not None:
            self._file.write(self._zlib.flush(zlib.Z_FULL_FLUSH))
        self._file.flush()

    def close(self) -> None:
        """Finishes the compressed stream, if any, and closes the file; closing twice is a no-op."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._zlib is not None:
                self._file.write(self._zlib.flush(zlib.Z_FINISH))
        finally:
            self._file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        if not getattr(self, "_closed", True):
            self.close()


class _ZlibReader:
    """A read(n) view of a zlib stream (TF's ZLIB record files), decompressed as needed."""

    def __init__(self, raw, wbits: int):
        self._raw = raw
        self._d = zlib.decompressobj(wbits)
        self._buf = b""

    def read(self, n: int) -> bytes:
        while len(self._buf) < n and not self._d.eof:
            chunk = self._raw.read(1 << 16)
            if not chunk:
                self._buf += self._d.flush()
                break
            self._buf += self._d.decompress(chunk)
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def close(self) -> None:
        self._raw.close()


def _reader(path: str, options):
    opts = _options(options)
    try:
        raw = open(path, "rb")
    except OSError as e:
        raise _open_error(e, path) from e
    wbits = 15 if opts.window_bits is None else int(opts.window_bits)
    if opts.compression_type == "GZIP":
        return gzip.GzipFile(fileobj=raw, mode="rb"), raw
    if opts.compression_type == "ZLIB":
        return _ZlibReader(raw, wbits), raw
    return raw, raw


def _read(stream, n: int, path: str, offset: int) -> bytes:
    try:
        return stream.read(n)
    except (OSError, EOFError, zlib.error) as e:
        raise errors.DataLossError(None, None, f"{path}: corrupted compressed stream at record offset "
                                               f"{offset}: {e}") from e


def read_records(path, options=None, *, allow_truncated_tail: bool = False) -> Iterator[bytes]:
    """Yields each record's data; DataLossError on a bad CRC or a cut-off record.

    `allow_truncated_tail` ends quietly at a record cut short by the end of the file (a file still being
    written, as TensorBoard's loader treats it) instead of raising.
    """
    p = _local_path(path)
    stream, raw = _reader(p, options)
    offset = 0
    try:
        while True:
            header = _read(stream, _HEADER.size, p, offset)
            if not header:
                return
            length, length_crc = _HEADER.unpack(header) if len(header) == _HEADER.size else (0, None)
            if length_crc is not None and (masked_crc32c(header[:8]) != length_crc or length > MAX_RECORD_BYTES):
                raise errors.DataLossError(None, None, f"corrupted record at {offset} in {p} (length CRC)")
            body = _read(stream, length + _FOOTER.size, p, offset) if length_crc is not None else b""
            if len(body) < length + _FOOTER.size:
                if allow_truncated_tail:
                    return
                raise errors.DataLossError(None, None, f"truncated record at {offset} in {p}")
            data = body[:length]
            if masked_crc32c(data) != _FOOTER.unpack(body[length:])[0]:
                raise errors.DataLossError(None, None, f"corrupted record at {offset} in {p} (data CRC)")
            yield data
            offset += _HEADER.size + length + _FOOTER.size
    finally:
        stream.close()
        raw.close()


def tf_record_iterator(path, options=None) -> Iterator[bytes]:
    """`tf.io.tf_record_iterator(path, options=None)`: an iterator over the records of a TFRecord file.

    As TF's, a generator: the file is opened (and a missing one raises NotFoundError) at the first `next()`.
    """
    return read_records(path, options)


def read_all(path, options=None) -> list:
    """Every record of a file as a list (small files, tests)."""
    return list(read_records(path, options))
