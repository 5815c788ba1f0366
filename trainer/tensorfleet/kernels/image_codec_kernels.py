"""Kernels of the image codec ops (`ops/image_codec_ops.py`) on Pillow (a well-kept libjpeg/libpng/GIF binding).

Host-only (CPU), as TF's. Decoding follows TF 1.15's DecodeImageOp: the format comes from the bytes' magic
(DecodeJpeg and DecodePng decode JPEG and PNG alike; DecodeBmp only BMP; DecodeGif GIF, to [frames, h, w, 3]),
and `channels` converts as TF's libraries do:
- JPEG through libjpeg itself: `channels=1` decodes the luma channel (Pillow's draft mode, as TF's
  JCS_GRAYSCALE), `ratio` 2/4/8 is libjpeg's DCT scaling (Pillow's draft size), both bit-exact with TF's
  `dct_method="INTEGER_ACCURATE"`. TF's default `dct_method` ("" = INTEGER_FAST, libjpeg's IFAST) is not
  reachable through Pillow: decoded values may differ from TF's default by a few levels (up to 3 seen).
- PNG: palette images expand to RGB(A), `channels=1` of a color image is libpng's rgb_to_gray with TF's
  coefficients ((9798 R + 19235 G + 3735 B) >> 15), added alpha is opaque, `dtype=uint16` scales 8-bit
  values by 257, a 16-bit file decoded to uint8 keeps the high byte (libpng's strip_16). Pillow reads
  16-bit color PNGs only as 8 bit: decoding one to uint16 raises UnimplementedError naming the op.
- GIF: every frame composited on the canvas by Pillow (GIF disposal rules; TF fills uncovered areas of later
  frames from the previous frame, which agrees for frames that cover the canvas).
Bad input raises InvalidArgumentError naming the op, with TF's messages ("Expected image (JPEG, PNG, or
GIF), got unknown format starting with ...").
"""
from __future__ import annotations

import io

import numpy as np

from .. import errors
from .backend import to_host
from .registry import register_kernel

_CPU = ("CPU",)
_MAGIC = ((b"\xff\xd8\xff", "jpeg"), (b"\x89PNG\r\n\x1a\n", "png"), (b"GIF8", "gif"), (b"BM", "bmp"))


def _bytes(ctx, contents) -> bytes:
    value = np.asarray(to_host(contents))
    if value.ndim != 0:
        raise errors.InvalidArgumentError(None, ctx.op, f"contents must be scalar, got shape {list(value.shape)}")
    v = value.item()
    return v.encode() if isinstance(v, str) else bytes(v)


def _format(data: bytes) -> str:
    for magic, name in _MAGIC:
        if data.startswith(magic):
            return name
    return ""


def _unknown(ctx, data: bytes, expected="JPEG, PNG, or GIF") -> errors.InvalidArgumentError:
    if not data:
        return errors.InvalidArgumentError(None, ctx.op, f"Expected image ({expected}), got empty file")
    head = data[:16].decode("latin-1").encode("unicode_escape").decode("ascii")
    return errors.InvalidArgumentError(None, ctx.op, f"Expected image ({expected}), got unknown format starting "
                                                     f"with '{head}'")


def _open(ctx, data: bytes):
    from PIL import Image, UnidentifiedImageError  # late: only runs that decode load Pillow

    try:
        return Image.open(io.BytesIO(data))
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as e:
        raise _invalid(ctx, data, e) from None


def _invalid(ctx, data: bytes, e: Exception) -> errors.InvalidArgumentError:
    kind = _format(data).upper() or "image"
    what = "JPEG data or crop window" if kind == "JPEG" else f"{kind} data"
    return errors.InvalidArgumentError(None, ctx.op, f"Invalid {what} ({e}), data size {len(data)}")


def _load(ctx, img, data):
    try:
        img.load()
    except (OSError, ValueError, SyntaxError) as e:
        raise _invalid(ctx, data, e) from None
    return img


def _check_channels(ctx, channels, allowed):
    if channels not in allowed:
        raise errors.InvalidArgumentError(None, ctx.op, f"channels must be {', '.join(map(str, allowed[:-1]))} or "
                                                        f"{allowed[-1]}, got {channels}")


def _decode_jpeg(ctx, data, channels, ratio):
    img = _open(ctx, data)
    if ratio not in (1, 2, 4, 8):
        raise errors.InvalidArgumentError(None, ctx.op, f"ratio must be 1, 2, 4, or 8, got {ratio}")
    w, h = img.size
    mode = "L" if channels == 1 else "RGB" if img.mode != "L" or channels == 3 else "L"
    if ratio > 1 or mode == "L":
        img.draft(mode, (max(1, w // ratio), max(1, h // ratio)))
    img = _load(ctx, img, data)
    if img.mode != mode:
        img = img.convert(mode)
    arr = np.asarray(img, dtype=np.uint8)
    return arr[:, :, None] if arr.ndim == 2 else arr


def _gray(rgb: np.ndarray) -> np.ndarray:
    wide = rgb.astype(np.int64)
    return ((9798 * wide[..., 0] + 19235 * wide[..., 1] + 3735 * wide[..., 2]) >> 15).astype(rgb.dtype)


def _png_array(ctx, img, data, want_u16: bool) -> np.ndarray:
    """The PNG's pixels as [h, w, c], 8 or 16 bit as in the file (palette expanded)."""
    img = _load(ctx, img, data)
    if img.mode == "P":
        img = img.convert("RGBA" if "transparency" in img.info else "RGB")
    if img.mode in ("I;16", "I;16B", "I"):
        return np.asarray(img).astype(np.uint16)[:, :, None]
    if img.mode == "1":
        img = img.convert("L")
    bit16 = data[24:25] == b"\x10"  # IHDR bit depth
    if bit16 and want_u16:
        raise errors.UnimplementedError(None, ctx.op, "decoding a 16-bit color PNG to uint16 is not supported "
                                                      "(Pillow reads it as 8 bit); decode it as uint8")
    arr = np.asarray(img, dtype=np.uint8)
    return arr[:, :, None] if arr.ndim == 2 else arr


def _set_channels(arr: np.ndarray, channels: int) -> np.ndarray:
    have = arr.shape[2]
    if channels in (0, have):
        return arr
    opaque = np.iinfo(arr.dtype).max
    color = arr[:, :, :3] if have >= 3 else arr[:, :, :1]
    alpha = arr[:, :, 3 if have == 4 else 1:][:, :, :1] if have in (2, 4) else None
    if channels in (1, 2):
        gray = _gray(color) if color.shape[2] == 3 else color[:, :, 0]
        out = [gray[:, :, None]]
    else:
        out = [color if color.shape[2] == 3 else np.repeat(color, 3, axis=2)]
    if channels in (2, 4):
        out.append(alpha if alpha is not None else np.full(arr.shape[:2] + (1,), opaque, arr.dtype))
    return np.concatenate(out, axis=2)


def _decode_png(ctx, data, channels, dtype):
    arr = _png_array(ctx, _open(ctx, data), data, dtype == np.uint16)
    arr = _set_channels(arr, channels)
    if dtype == np.uint16 and arr.dtype == np.uint8:
        return arr.astype(np.uint16) * np.uint16(257)
    if dtype == np.uint8 and arr.dtype == np.uint16:
        return (arr >> 8).astype(np.uint8)
    return arr


def _decode_gif(ctx, data):
    from PIL import ImageSequence

    img = _load(ctx, _open(ctx, data), data)
    frames = [np.asarray(f.convert("RGB"), dtype=np.uint8) for f in ImageSequence.Iterator(img)]
    return np.stack(frames)


def _decode_bmp(ctx, data, channels):
    if _format(data) != "bmp":
        raise _unknown(ctx, data, "BMP")
    img = _load(ctx, _open(ctx, data), data)
    mode = {0: "RGBA" if img.mode == "RGBA" else "RGB", 3: "RGB", 4: "RGBA"}[channels]
    return np.asarray(img.convert(mode), dtype=np.uint8)


def decode(ctx, data: bytes, kind: str, channels: int, dtype=np.uint8, ratio: int = 1, frames: bool = True):
    """The decoded array of `data` for an op of `kind` ("jpeg"/"png" accept JPEG, PNG and, for a GIF, its
    first frame unless `frames`; "gif" only GIF; "bmp" only BMP; "any" every format)."""
    fmt = _format(data)
    if kind == "bmp" or (kind == "any" and fmt == "bmp"):
        return _decode_bmp(ctx, data, channels)
    if kind == "gif" and fmt != "gif":
        raise _unknown(ctx, data, "GIF")
    if fmt == "gif":
        arr = _decode_gif(ctx, data)
        if kind == "gif" or frames:
            return arr
        return _set_channels(arr[0], channels)
    if fmt == "jpeg":
        arr = _decode_jpeg(ctx, data, channels, ratio)
        return arr.astype(np.uint16) * np.uint16(257) if dtype == np.uint16 else arr
    if fmt == "png":
        return _decode_png(ctx, data, channels, dtype)
    raise _unknown(ctx, data, "BMP, GIF, JPEG, or PNG" if kind == "any" else "JPEG, PNG, or GIF")


@register_kernel("DecodeJpeg", devices=_CPU)
def decode_jpeg(ctx, contents):
    a = ctx.attrs
    _check_channels(ctx, a["channels"], (0, 1, 3))
    return decode(ctx, _bytes(ctx, contents), "jpeg", a["channels"], ratio=a["ratio"], frames=False)


@register_kernel("DecodePng", devices=_CPU)
def decode_png(ctx, contents):
    a = ctx.attrs
    _check_channels(ctx, a["channels"], (0, 1, 2, 3, 4))
    return decode(ctx, _bytes(ctx, contents), "png", a["channels"], a["dtype"].np_dtype, frames=False)


@register_kernel("DecodeBmp", devices=_CPU)
def decode_bmp(ctx, contents):
    _check_channels(ctx, ctx.attrs["channels"], (0, 3, 4))
    return decode(ctx, _bytes(ctx, contents), "bmp", ctx.attrs["channels"])


@register_kernel("DecodeGif", devices=_CPU)
def decode_gif(ctx, contents):
    return decode(ctx, _bytes(ctx, contents), "gif", 0)


@register_kernel("DecodeImage", devices=_CPU)
def decode_image(ctx, contents):
    a = ctx.attrs
    _check_channels(ctx, a["channels"], (0, 1, 3, 4))
    return decode(ctx, _bytes(ctx, contents), "any", a["channels"], a["dtype"].np_dtype,
                  frames=a["expand_animations"])


@register_kernel("ExtractJpegShape", devices=_CPU)
def extract_jpeg_shape(ctx, contents):
    data = _bytes(ctx, contents)
    if _format(data) != "jpeg":
        raise errors.InvalidArgumentError(None, ctx.op, f"Invalid JPEG data, size {len(data)}")
    img = _open(ctx, data)
    w, h = img.size
    return np.array([h, w, 1 if img.mode == "L" else 3], dtype=ctx.attrs["output_type"].np_dtype)


def _image_arg(ctx, image, dtypes) -> np.ndarray:
    arr = np.asarray(to_host(image))
    if arr.ndim != 3:
        raise errors.InvalidArgumentError(None, ctx.op, f"image must be 3-dimensional{list(arr.shape)}")
    if arr.dtype not in dtypes:
        raise errors.InvalidArgumentError(None, ctx.op, f"image must be {' or '.join(map(str, dtypes))}, got "
                                                        f"{arr.dtype}")
    return arr


@register_kernel("EncodeJpeg", devices=_CPU)
def encode_jpeg(ctx, image):
    from PIL import Image

    a = ctx.attrs
    arr = _image_arg(ctx, image, (np.uint8,))
    channels = {"": arr.shape[2], "grayscale": 1, "rgb": 3}[a["format"]]
    if arr.shape[2] != channels or channels not in (1, 3):
        raise errors.InvalidArgumentError(None, ctx.op, f"image must have 1 or 3 channels (format "
                                                        f"'{a['format']}'), got {list(arr.shape)}")
    if not 0 <= a["quality"] <= 100:
        raise errors.InvalidArgumentError(None, ctx.op, f"quality must be in [0,100], got {a['quality']}")
    img = Image.fromarray(arr[:, :, 0] if channels == 1 else arr, "L" if channels == 1 else "RGB")
    buf = io.BytesIO()
    options = dict(quality=a["quality"], progressive=a["progressive"], optimize=a["optimize_size"],
                   subsampling=2 if a["chroma_downsampling"] else 0, dpi=(a["x_density"], a["y_density"]))
    if a["xmp_metadata"]:
        options["xmp"] = a["xmp_metadata"].encode()
    img.save(buf, "JPEG", **options)
    out = bytearray(buf.getvalue())
    if a["density_unit"] == "cm" and out[6:11] == b"JFIF\x00":
        out[13] = 2  # JFIF density units: 2 = dots per cm (Pillow writes per inch)
    return np.array(bytes(out), dtype=object)


@register_kernel("EncodePng", devices=_CPU)
def encode_png(ctx, image):
    from PIL import Image

    arr = _image_arg(ctx, image, (np.uint8, np.uint16))
    channels = arr.shape[2]
    if channels not in (1, 2, 3, 4):
        raise errors.InvalidArgumentError(None, ctx.op, f"image must have 1, 2, 3, or 4 channels, got {channels}")
    if arr.dtype == np.uint16 and channels != 1:
        raise errors.UnimplementedError(None, ctx.op, "encoding a 16-bit PNG with more than one channel is not "
                                                      "supported (Pillow writes 16-bit grayscale only)")
    if arr.dtype == np.uint16:
        img = Image.fromarray(np.ascontiguousarray(arr[:, :, 0]))  # uint16 2-D: Pillow's "I;16"
    else:
        img = Image.fromarray(arr[:, :, 0] if channels == 1 else arr, {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}[channels])
    level = ctx.attrs["compression"]
    buf = io.BytesIO()
    img.save(buf, "PNG", compress_level=6 if level < 0 else min(level, 9))
    return np.array(buf.getvalue(), dtype=object)
