"""Kernels for ops/summary_ops.py: each builds a `Summary` protocol buffer and returns it serialized, as a
0-d object array holding bytes (a string scalar; a fetch gives `bytes`, as TF's). CPU only: they read host
values.

What TF 1.15's C++ kernels do, kept exactly where TensorBoard shows it:
* HistogramSummary: TF's default buckets (limits growing by 10% from 1e-12 to 1e20, mirrored negative, 0 and
  +-DBL_MAX), a value v counted in the first bucket whose limit is > v, runs of empty buckets collapsed into
  the last of the run, min/max/num/sum/sum_squares in double (the sums pairwise, not in TF's order: they
  may differ from TF's in the last bits). NaN or Inf is an
  InvalidArgumentError naming the op.
* ImageSummary: uint8 images as they are; float images scaled per image to [0, 255] (by 255/max when no value
  is negative, else by 127/max|v| around 128; values under 1e-6 count as zero), non-finite pixels painted
  `bad_color`, truncated to uint8, PNG encoded. Tags `tag/image` (max_images 1) or `tag/image/<i>`.
* AudioSummaryV2: samples clamped to 16-bit PCM as round(v * 32768), WAV encoded. Tags `tag/audio[/<i>]`.
* TensorSummaryV2: the tensor as a TensorProto (strings in string_val, numbers in tensor_content, as TF's
  AsProtoField / AsProtoTensorContent) with the op's serialized SummaryMetadata.
* MergeSummary: every value of every input, in order; a tag seen twice is an InvalidArgumentError.
"""
from __future__ import annotations

import io
import struct
import wave
import zlib

import numpy as np

from .. import errors
from ..graph_def import ndarray_to_proto
from ..protos import summary_pb2
from .backend import to_host
from .registry import register_kernel

DBL_MAX = float(np.finfo(np.float64).max)


def _default_bucket_limits() -> np.ndarray:
    pos = []
    v = 1.0e-12
    while v < 1.0e20:
        pos.append(v)
        v *= 1.1
    pos.append(DBL_MAX)
    return np.array([-x for x in reversed(pos)] + [0.0] + pos, dtype=np.float64)


BUCKET_LIMITS = _default_bucket_limits()


def _string_scalar(summary: summary_pb2.Summary) -> np.ndarray:
    out = np.empty((), dtype=object)
    out[()] = summary.SerializeToString()
    return out


def _invalid(ctx, message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, ctx.op, f"{message}\n\t [[node {ctx.op.name}]]")


@register_kernel("ScalarSummary", devices=("CPU",))
def scalar_summary(ctx, values):
    arr = np.asarray(to_host(values))
    if arr.size != 1:
        raise _invalid(ctx, f"tags and values not the same shape: [] != {list(arr.shape)} (tag '{ctx.attrs['tag']}')")
    s = summary_pb2.Summary()
    s.value.add(tag=ctx.attrs["tag"], simple_value=float(arr.reshape(()).astype(np.float64)))
    return _string_scalar(s)


def fill_histogram(histo: summary_pb2.HistogramProto, values: np.ndarray) -> None:
    """TF's histogram::Histogram Add() of every value, then EncodeToProto(preserve_zero_buckets=False)."""
    # Counting through one sort (in the input's own dtype: 6x faster than float64 on float32 weights; the
    # conversion to double keeps the order) and one search per bucket limit; a value v lands in bucket b with
    # limit[b-1] <= v < limit[b], i.e. TF's upper_bound rule. (A value of exactly DBL_MAX, past TF's last
    # bucket, is counted in `num` only.)
    ordered = np.sort(values.ravel()).astype(np.float64)
    counts = np.diff(np.searchsorted(ordered, BUCKET_LIMITS, side="left"), prepend=0)
    histo.min = float(ordered[0]) if ordered.size else DBL_MAX
    histo.max = float(ordered[-1]) if ordered.size else -DBL_MAX
    histo.num = float(ordered.size)
    # in double, as TF; summed pairwise (TF adds in order: the two differ in the last bits, TensorBoard shows
    # neither)
    histo.sum = float(np.sum(ordered))
    histo.sum_squares = float(np.dot(ordered, ordered))
    nonzero = np.flatnonzero(counts)
    limits, buckets = [], []
    i, n = 0, counts.size
    for j in nonzero:  # the empty run before bucket j collapses into one entry at its last limit
        if j > i:
            limits.append(BUCKET_LIMITS[j - 1])
            buckets.append(0.0)
        limits.append(BUCKET_LIMITS[j])
        buckets.append(float(counts[j]))
        i = int(j) + 1
    if i < n:
        limits.append(BUCKET_LIMITS[n - 1])
        buckets.append(0.0)
    histo.bucket_limit.extend(float(v) for v in limits)
    histo.bucket.extend(buckets)


@register_kernel("HistogramSummary", devices=("CPU",))
def histogram_summary(ctx, values):
    arr = np.asarray(to_host(values))
    if arr.dtype.kind == "f":
        bad = np.flatnonzero(~np.isfinite(arr))
        if bad.size:  # the first bad value decides the message, as TF's loop
            kind = "Nan" if np.isnan(arr.flat[bad[0]]) else "Infinity"
            raise _invalid(ctx, f"{kind} in summary histogram for: {ctx.op.name}")
    s = summary_pb2.Summary()
    v = s.value.add(tag=ctx.attrs["tag"])
    fill_histogram(v.histo, arr)
    return _string_scalar(s)


def encode_png(image: np.ndarray) -> bytes:
    """An 8-bit PNG of an [height, width, channels] uint8 array (1 gray, 2 gray+alpha, 3 RGB, 4 RGBA).

    PNG is a fixed format (signature, IHDR, zlib-deflated rows each with filter byte 0, IEND): a few lines
    here instead of a runtime dependency on an imaging library for the trainer.
    """
    h, w, c = image.shape
    color_type = {1: 0, 2: 4, 3: 2, 4: 6}[c]

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = np.concatenate([np.zeros((h, 1), np.uint8), np.ascontiguousarray(image, np.uint8).reshape(h, w * c)],
                          axis=1)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, color_type, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows.tobytes(), 6)) + chunk(b"IEND", b""))


def normalize_float_image(image: np.ndarray, bad_color: np.ndarray) -> np.ndarray:
    """TF's NormalizeFloatImage for one [h, w, depth] float image -> uint8."""
    t = image.dtype.type
    flat = image.reshape(-1, image.shape[-1])
    finite = np.isfinite(flat).all(axis=1)
    good = flat[finite].astype(np.float32)
    lo = float(good.min()) if good.size else np.inf
    hi = float(good.max()) if good.size else -np.inf
    if lo < 0:
        max_val = max(abs(lo), abs(hi))
        scale, offset = t(0.0 if max_val < 1e-6 else np.float32(127.0) / np.float32(max_val)), t(128.0)
    else:
        scale, offset = t(0.0 if hi < 1e-6 else np.float32(255.0) / np.float32(hi)), t(0.0)
    out = np.empty(flat.shape, np.uint8)
    with np.errstate(invalid="ignore", over="ignore"):
        out[finite] = (flat[finite] * scale + offset).astype(np.uint8)
    out[~finite] = bad_color[:flat.shape[1]]
    return out.reshape(image.shape)


@register_kernel("ImageSummary", devices=("CPU",))
def image_summary(ctx, tensor):
    arr = np.asarray(to_host(tensor))
    tag, max_images = ctx.attrs["tag"], ctx.attrs["max_images"]
    if arr.ndim != 4 or arr.shape[3] not in (1, 3, 4):
        raise _invalid(ctx, f"Tensor must be 4-D with last dim 1, 3, or 4, not {list(arr.shape)}")
    bad_color = np.array(ctx.attrs["bad_color"], dtype=np.uint8)
    if bad_color.size < arr.shape[3]:
        raise _invalid(ctx, f"bad_color has {bad_color.size} values, fewer than the image depth {arr.shape[3]}")
    s = summary_pb2.Summary()
    for i in range(min(arr.shape[0], max_images)):
        img = arr[i] if arr.dtype == np.uint8 else normalize_float_image(arr[i], bad_color)
        v = s.value.add(tag=f"{tag}/image/{i}" if max_images > 1 else f"{tag}/image")
        v.image.height, v.image.width, v.image.colorspace = img.shape
        v.image.encoded_image_string = encode_png(img)
    return _string_scalar(s)


def encode_wav(samples: np.ndarray, sample_rate: int) -> bytes:
    """16-bit PCM WAV of a [frames, channels] float array: TF's FloatToInt16Sample, round(v*32768) clamped."""
    v = samples.astype(np.float32) * np.float32(32768.0)
    rounded = np.sign(v) * np.floor(np.abs(v) + np.float32(0.5))  # roundf: halves away from zero
    pcm = np.clip(rounded, -32768, 32767).astype("<i2")
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(samples.shape[1])
        w.setsampwidth(2)
        w.setframerate(sample_rate)
        w.writeframes(pcm.tobytes())
    return buf.getvalue()


@register_kernel("AudioSummaryV2", devices=("CPU",))
def audio_summary(ctx, tensor, sample_rate):
    arr = np.asarray(to_host(tensor), dtype=np.float32)
    rate = float(np.asarray(to_host(sample_rate)).reshape(()))
    tag, max_outputs = ctx.attrs["tag"], ctx.attrs["max_outputs"]
    if arr.ndim not in (2, 3):
        raise _invalid(ctx, f"Tensor must be 3-D or 2-D, got: {list(arr.shape)}")
    if not rate > 0:
        raise _invalid(ctx, f"sample_rate must be > 0, got {rate}")
    if arr.ndim == 2:
        arr = arr[:, :, None]
    s = summary_pb2.Summary()
    for i in range(min(arr.shape[0], max_outputs)):
        v = s.value.add(tag=f"{tag}/audio/{i}" if max_outputs > 1 else f"{tag}/audio")
        v.audio.sample_rate = rate
        v.audio.num_channels = arr.shape[2]
        v.audio.length_frames = arr.shape[1]
        v.audio.content_type = "audio/wav"
        v.audio.encoded_audio_string = encode_wav(arr[i], int(rate))
    return _string_scalar(s)


@register_kernel("TensorSummaryV2", devices=("CPU",))
def tensor_summary(ctx, tensor):
    arr = np.asarray(to_host(tensor))
    s = summary_pb2.Summary()
    v = s.value.add(tag=ctx.attrs["tag"])
    v.tensor.CopyFrom(ndarray_to_proto(arr))
    v.metadata.ParseFromString(ctx.attrs["serialized_summary_metadata"])
    return _string_scalar(s)


@register_kernel("MergeSummary", devices=("CPU",))
def merge_summary(ctx, *inputs):
    merged = summary_pb2.Summary()
    tags: set = set()
    for x in inputs:
        for blob in np.asarray(to_host(x), dtype=object).ravel():
            s = summary_pb2.Summary()
            try:
                s.ParseFromString(bytes(blob))
            except Exception as e:  # protobuf's DecodeError
                raise _invalid(ctx, f"Could not parse one of the summary inputs: {e}") from None
            for value in s.value:
                if value.tag in tags:
                    raise _invalid(ctx, f"Duplicate tag {value.tag} found in summary inputs")
                tags.add(value.tag)
                merged.value.add().CopyFrom(value)
    return _string_scalar(merged)
