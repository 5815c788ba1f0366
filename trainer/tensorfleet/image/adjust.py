"""`tf.image` adjustments for input pipelines: flips and random flips, per_image_standardization,
convert_image_dtype, brightness, rgb_to_grayscale, central_crop, resize_image_with_crop_or_pad, random_crop.

Part of the `tf.image` package (`image/__init__.py` wires the names): composites of existing ops (so
differentiable where TF's are), for single images [height, width, channels] or batches
[batch, height, width, channels]. Resizing is `image/resize.py`, decoding and encoding `ops/image_codec_ops.py`.
"""
from __future__ import annotations

from .. import dtypes as _dtypes
from ..default_graph import convert_to_tensor, name_scope
from ..ops import array_ops as _a
from ..ops import comparison_ops as _c
from ..ops import math_ops as _m
from ..ops import random_ops as _r

__all__ = ["flip_left_right", "flip_up_down", "random_flip_left_right", "random_flip_up_down",
           "per_image_standardization", "convert_image_dtype", "adjust_brightness", "random_brightness",
           "rgb_to_grayscale", "central_crop", "resize_image_with_crop_or_pad", "random_crop"]


def _image(image):
    x = convert_to_tensor(image)
    if x.shape.ndims not in (3, 4):
        raise ValueError(f"'image' must be 3-D [h, w, c] or 4-D [batch, h, w, c], got shape {x.shape}")
    return x


def _hw_axes(x):
    return (0, 1) if x.shape.ndims == 3 else (1, 2)


def flip_left_right(image):
    x = _image(image)
    return _a.reverse(x, [_hw_axes(x)[1]])


def flip_up_down(image):
    x = _image(image)
    return _a.reverse(x, [_hw_axes(x)[0]])


def _random_flip(image, seed, axis_index, name):
    with name_scope(None, name, [image]):
        x = _image(image)
        flipped = _a.reverse(x, [_hw_axes(x)[axis_index]])
        n = [1] if x.shape.ndims == 3 else _a.shape(x)[:1]
        coin = _c.less(_r.random_uniform(n, seed=seed), 0.5)
        if x.shape.ndims == 3:
            return _c.where_v2(_a.reshape(coin, []), flipped, x)
        return _c.where_v2(_a.reshape(coin, [-1, 1, 1, 1]), flipped, x)


def random_flip_left_right(image, seed=None):
    """Flips each image left-right with probability 1/2."""
    return _random_flip(image, seed, 1, "random_flip_left_right")


def random_flip_up_down(image, seed=None):
    return _random_flip(image, seed, 0, "random_flip_up_down")


def per_image_standardization(image):
    """(x - mean) / max(stddev, 1 / sqrt(number of elements)), per image, as TF."""
    with name_scope(None, "per_image_standardization", [image]):
        x = _m.cast(_image(image), _dtypes.float32)
        axes = [-1, -2, -3]
        n = _m.cast(_m.reduce_prod(_a.shape(x)[-3:]), _dtypes.float32)
        mean = _m.reduce_mean(x, axes, keepdims=True)
        std = _m.sqrt(_m.reduce_mean(_m.square(_m.subtract(x, mean)), axes, keepdims=True))
        return _m.divide(_m.subtract(x, mean), _m.maximum(std, _m.rsqrt(n)))


def convert_image_dtype(image, dtype, saturate=False, name=None):
    """Integer images scale to [0, 1] floats (by the integer type's max) and back; float to float is a cast."""
    with name_scope(name, "convert_image", [image]):
        x = convert_to_tensor(image)
        dtype = _dtypes.as_dtype(dtype)
        if x.dtype is dtype:
            return _a.identity(x)
        if x.dtype.is_integer and dtype.is_floating:
            return _m.multiply(_m.cast(x, dtype), 1.0 / x.dtype.max)
        if x.dtype.is_floating and dtype.is_integer:
            scaled = _m.multiply(x, float(dtype.max) + 0.5)
            if saturate:
                scaled = _m.minimum(_m.maximum(scaled, float(dtype.min)), float(dtype.max))
            return _m.cast(scaled, dtype)
        if x.dtype.is_floating and dtype.is_floating:
            return _m.cast(x, dtype)
        raise ValueError(f"convert_image_dtype: {x.dtype.name} to {dtype.name} is not supported")


def adjust_brightness(image, delta):
    x = _image(image)
    return _m.add(x, _m.cast(delta, x.dtype))


def random_brightness(image, max_delta, seed=None):
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    x = _image(image)
    return adjust_brightness(x, _r.random_uniform([], -max_delta, max_delta, seed=seed, dtype=x.dtype))


def rgb_to_grayscale(images, name=None):
    """ITU-R 601 luma: 0.2989 R + 0.5870 G + 0.1140 B, keeping a channel axis of 1."""
    with name_scope(name, "rgb_to_grayscale", [images]):
        x = convert_to_tensor(images)
        w = _a.constant([0.2989, 0.5870, 0.1140], dtype=x.dtype if x.dtype.is_floating else _dtypes.float32)
        gray = _m.reduce_sum(_m.multiply(_m.cast(x, w.dtype), w), -1, keepdims=True)
        return _m.cast(gray, x.dtype) if not x.dtype.is_floating else gray


def _static_hw(x):
    h, w = (x.shape.as_list()[i] for i in _hw_axes(x))
    if h is None or w is None:
        raise ValueError(f"the image's height and width must be known, got {x.shape}")
    return h, w


def _crop(x, top, left, h, w):
    if x.shape.ndims == 3:
        return x[top:top + h, left:left + w, :]
    return x[:, top:top + h, left:left + w, :]


def central_crop(image, central_fraction):
    """The central `central_fraction` of each side (TF's rounding)."""
    if not 0.0 < central_fraction <= 1.0:
        raise ValueError("central_fraction must be within (0, 1]")
    x = _image(image)
    h, w = _static_hw(x)
    top, left = int((h - h * central_fraction) / 2), int((w - w * central_fraction) / 2)
    return _crop(x, top, left, h - 2 * top, w - 2 * left)


def resize_image_with_crop_or_pad(image, target_height, target_width):
    """Centrally crops and/or zero-pads to target size (TF's offsets: crop (size - target) // 2, pad likewise)."""
    x = _image(image)
    h, w = _static_hw(x)
    th, tw = int(target_height), int(target_width)
    top, left = max(h - th, 0) // 2, max(w - tw, 0) // 2
    x = _crop(x, top, left, min(h, th), min(w, tw))
    ph, pw = max(th - h, 0), max(tw - w, 0)
    pads = [[ph // 2, ph - ph // 2], [pw // 2, pw - pw // 2], [0, 0]]
    return _a.pad(x, pads if x.shape.ndims == 3 else [[0, 0]] + pads)


def random_crop(value, size, seed=None, name=None):
    return _r.random_crop(value, size, seed=seed, name=name)
