"""TF's image codec ops: DecodeJpeg, DecodePng, DecodeBmp, DecodeGif, DecodeImage, EncodeJpeg, EncodePng,
ExtractJpegShape (kernels on Pillow: `kernels/image_codec_kernels.py`), with TF 1.15's Python signatures.

Shapes are TF's: a decode gives [height, width, channels] with the channel count known when `channels` is
set, DecodeGif [frames, height, width, 3]; `decode_image` gives an unknown rank when GIFs may expand to 4-D
(`expand_animations=True`, TF 1.15's composite has no static rank either). `decode_image(dtype=float32)`
converts as `convert_image_dtype` (uint8 / 255). None of these has a gradient (TF registers none).
"""
from __future__ import annotations

from .. import dtypes as _dtypes
from ..default_graph import name_scope
from .common import NotDifferentiable, TensorShape, convert_to_tensor, make_tensor, register_op, unknown_shape

__all__ = ["decode_jpeg", "decode_png", "decode_bmp", "decode_gif", "decode_image", "encode_jpeg", "encode_png",
           "extract_jpeg_shape", "is_jpeg"]


def _scalar_string(op):
    contents = op.inputs[0]
    if contents.dtype is not _dtypes.string:
        raise TypeError(f"Input 'contents' of '{op.type}' Op has type {contents.dtype.name} that does not match "
                        f"expected type of string.")
    if contents.shape.ndims not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {contents.shape.ndims} for '{op.name}' "
                         f"(op: '{op.type}')")


def _decoded_shape(dtype_of):
    def fn(op):
        _scalar_string(op)
        channels = op.get_attr("channels")
        return [(dtype_of(op), TensorShape([None, None, channels or None]))]
    return fn


register_op("DecodeJpeg", _decoded_shape(lambda op: _dtypes.uint8))
register_op("DecodePng", _decoded_shape(lambda op: op.get_attr("dtype")))
register_op("DecodeBmp", _decoded_shape(lambda op: _dtypes.uint8))


def _gif_shape(op):
    _scalar_string(op)
    return [(_dtypes.uint8, TensorShape([None, None, None, 3]))]


register_op("DecodeGif", _gif_shape)


def _image_shape(op):
    _scalar_string(op)
    channels = op.get_attr("channels") or None
    if op.get_attr("expand_animations"):
        return [(op.get_attr("dtype"), unknown_shape())]
    return [(op.get_attr("dtype"), TensorShape([None, None, channels]))]


register_op("DecodeImage", _image_shape)


def _encoded_shape(op):
    image = op.inputs[0]
    if image.shape.ndims not in (None, 3):
        raise ValueError(f"Shape must be rank 3 but is rank {image.shape.ndims} for '{op.name}' (op: '{op.type}')")
    return [(_dtypes.string, TensorShape([]))]


register_op("EncodeJpeg", _encoded_shape)
register_op("EncodePng", _encoded_shape)


def _jpeg_shape_shape(op):
    _scalar_string(op)
    return [(op.get_attr("output_type"), TensorShape([3]))]


register_op("ExtractJpegShape", _jpeg_shape_shape)
for _op in ("DecodeJpeg", "DecodePng", "DecodeBmp", "DecodeGif", "DecodeImage", "EncodeJpeg", "EncodePng",
            "ExtractJpegShape"):
    NotDifferentiable(_op)


def _contents(contents):
    return convert_to_tensor(contents, dtype=_dtypes.string, name="contents")


def decode_jpeg(contents, channels=0, ratio=1, fancy_upscaling=True, try_recover_truncated=False,
                acceptable_fraction=1, dct_method="", name=None):
    """`tf.image.decode_jpeg`: uint8 [height, width, channels]; `channels` 0 (as in the file), 1 or 3."""
    if dct_method not in ("", "INTEGER_FAST", "INTEGER_ACCURATE"):
        raise ValueError(f"dct_method must be one of '', 'INTEGER_FAST', 'INTEGER_ACCURATE', got {dct_method!r}")
    attrs = {"channels": int(channels), "ratio": int(ratio), "fancy_upscaling": bool(fancy_upscaling),
             "try_recover_truncated": bool(try_recover_truncated), "acceptable_fraction": float(acceptable_fraction),
             "dct_method": dct_method}
    return make_tensor("DecodeJpeg", [_contents(contents)], attrs, name=name, default_name="DecodeJpeg")


def decode_png(contents, channels=0, dtype=_dtypes.uint8, name=None):
    """`tf.image.decode_png`: uint8 or uint16 [height, width, channels]; `channels` 0, 1, 2, 3 or 4."""
    dtype = _dtypes.as_dtype(dtype)
    if dtype not in (_dtypes.uint8, _dtypes.uint16):
        raise TypeError(f"decode_png: dtype must be uint8 or uint16, got {dtype.name}")
    return make_tensor("DecodePng", [_contents(contents)], {"channels": int(channels), "dtype": dtype}, name=name,
                       default_name="DecodePng")


def decode_bmp(contents, channels=0, name=None):
    return make_tensor("DecodeBmp", [_contents(contents)], {"channels": int(channels)}, name=name,
                       default_name="DecodeBmp")


def decode_gif(contents, name=None):
    """`tf.image.decode_gif`: uint8 [num_frames, height, width, 3]."""
    return make_tensor("DecodeGif", [_contents(contents)], {}, name=name, default_name="DecodeGif")


def decode_image(contents, channels=None, dtype=_dtypes.uint8, name=None, expand_animations=True):
    """`tf.image.decode_image`: BMP, GIF, JPEG or PNG by the bytes' magic; uint8 (16-bit PNGs as uint16 when
    `dtype=uint16`), or float in [0, 1] for a float `dtype` (TF's convert_image_dtype)."""
    from ..image.adjust import convert_image_dtype  # late: the tf.image package sits above ops

    if channels not in (None, 0, 1, 3, 4):
        raise ValueError("channels must be in (None, 0, 1, 3, 4)")
    dtype = _dtypes.as_dtype(dtype)
    with name_scope(name, "decode_image"):
        raw = _dtypes.uint16 if dtype is _dtypes.uint16 else _dtypes.uint8
        image = make_tensor("DecodeImage", [_contents(contents)],
                            {"channels": int(channels or 0), "dtype": raw,
                             "expand_animations": bool(expand_animations)}, name="DecodeImage")
        return image if dtype is raw else convert_image_dtype(image, dtype)


def encode_jpeg(image, format="", quality=95, progressive=False, optimize_size=False,  # noqa: A002 (TF's name)
                chroma_downsampling=True, density_unit="in", x_density=300, y_density=300, xmp_metadata="",
                name=None):
    """`tf.image.encode_jpeg`: a 0-D string from a uint8 [height, width, 1 or 3] image (TF's defaults: quality
    95, 4:2:0 chroma downsampling, 300 dpi)."""
    if format not in ("", "grayscale", "rgb"):
        raise ValueError(f"format must be '', 'grayscale' or 'rgb', got {format!r}")
    if density_unit not in ("in", "cm"):
        raise ValueError(f"density_unit must be 'in' or 'cm', got {density_unit!r}")
    image = convert_to_tensor(image, name="image")
    if image.dtype is not _dtypes.uint8:
        raise TypeError(f"Input 'image' of 'EncodeJpeg' Op has type {image.dtype.name} that does not match expected "
                        f"type of uint8.")
    attrs = {"format": format, "quality": int(quality), "progressive": bool(progressive),
             "optimize_size": bool(optimize_size), "chroma_downsampling": bool(chroma_downsampling),
             "density_unit": density_unit, "x_density": int(x_density), "y_density": int(y_density),
             "xmp_metadata": xmp_metadata}
    return make_tensor("EncodeJpeg", [image], attrs, name=name, default_name="EncodeJpeg")


def encode_png(image, compression=-1, name=None):
    """`tf.image.encode_png`: a 0-D string from a uint8 or uint16 [height, width, channels] image."""
    image = convert_to_tensor(image, name="image")
    if image.dtype not in (_dtypes.uint8, _dtypes.uint16):
        raise TypeError(f"Input 'image' of 'EncodePng' Op has type {image.dtype.name} that is not uint8 or uint16")
    if not -1 <= int(compression) <= 9:
        raise ValueError(f"compression must be in [-1, 9], got {compression}")
    return make_tensor("EncodePng", [image], {"compression": int(compression)}, name=name, default_name="EncodePng")


def extract_jpeg_shape(contents, output_type=_dtypes.int32, name=None):
    """`tf.image.extract_jpeg_shape`: [height, width, channels] from the JPEG header, without decoding."""
    return make_tensor("ExtractJpegShape", [_contents(contents)], {"output_type": _dtypes.as_dtype(output_type)},
                       name=name, default_name="ExtractJpegShape")


def is_jpeg(contents, name=None):
    """`tf.image.is_jpeg`: whether the bytes start with JPEG's magic (TF's substr comparison)."""
    from .comparison_ops import equal
    from .string_ops import substr

    with name_scope(name, "is_jpeg"):
        return equal(substr(_contents(contents), 0, 3), b"\xff\xd8\xff", name="is_jpeg")
