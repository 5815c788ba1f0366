"""`tf.image.resize_images` (also `tf.image.resize`, TF 1.15's v1 function) and `tf.image.ResizeMethod`.

TF 1.15's rules (`image_ops_impl.resize_images` / `_resize_images_common`): a 3-D image is resized as a
batch of one; `size` is an int32 [new_height, new_width] (a computed tensor too); when the static size is
already the image's, the image is returned as it is (even its dtype); `preserve_aspect_ratio` scales by the
smaller of the two ratios (rounded); the methods are the four ops of `ops/image_resize_ops.py` with
`align_corners` and TF's legacy (not half-pixel) sampling, so bilinear, bicubic and area give float32 and
nearest neighbour the input's dtype. The result's static height and width are set from a constant `size`.
"""
from __future__ import annotations

from .. import dtypes as _dtypes
from ..default_graph import convert_to_tensor, name_scope
from ..ops import array_ops as _a
from ..ops import math_ops as _m
from ..ops import image_resize_ops as _ops
from ..ops.shape_util import constant_value

__all__ = ["ResizeMethod", "resize_images", "resize"]


class ResizeMethod:
    """TF 1.15's `tf.image.ResizeMethod` (ResizeMethodV1): the v1 integers."""

    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


_BY_METHOD = {ResizeMethod.BILINEAR: _ops.resize_bilinear, "bilinear": _ops.resize_bilinear,
              ResizeMethod.NEAREST_NEIGHBOR: _ops.resize_nearest_neighbor, "nearest": _ops.resize_nearest_neighbor,
              ResizeMethod.BICUBIC: _ops.resize_bicubic, "bicubic": _ops.resize_bicubic,
              ResizeMethod.AREA: _ops.resize_area, "area": _ops.resize_area}


def _scaled_size(images, size):
    """TF's preserve_aspect_ratio: both sides scaled by min(new_h / h, new_w / w), rounded."""
    dims = _a.shape(images)
    h, w = (_m.cast(dims[i], _dtypes.float32) for i in (1, 2))
    factor = _m.minimum(_m.cast(size[0], _dtypes.float32) / h, _m.cast(size[1], _dtypes.float32) / w)
    return convert_to_tensor([_m.cast(_m.round(factor * h), _dtypes.int32),
                              _m.cast(_m.round(factor * w), _dtypes.int32)], _dtypes.int32, name="size")


def resize_images(images, size, method=ResizeMethod.BILINEAR, align_corners=False, preserve_aspect_ratio=False,
                  name=None):
    """Resizes [height, width, channels] or [batch, height, width, channels] images to `size`."""
    resizer = _BY_METHOD.get(method)
    if resizer is None:
        raise ValueError("Resize method is not implemented.")
    with name_scope(name, "resize"):
        images = convert_to_tensor(images, name="images")
        if images.shape.ndims is None:
            raise ValueError("'images' contains no shape.")
        if images.shape.ndims not in (3, 4):
            raise ValueError("'images' must have either 3 or 4 dimensions.")
        is_batch = images.shape.ndims == 4
        if not is_batch:
            images = _a.expand_dims(images, 0)
        _, height, width, _ = images.shape.as_list()
        try:
            size = convert_to_tensor(size, _dtypes.int32, name="size")
        except (TypeError, ValueError):
            raise ValueError("'size' must be a 1-D int32 Tensor") from None
        if not size.shape.is_compatible_with([2]):
            raise ValueError("'size' must be a 1-D Tensor of 2 elements: new_height, new_width")
        if preserve_aspect_ratio:
            size = _scaled_size(images, size)
        value = constant_value(size)
        new_h, new_w = (None, None) if value is None else (int(v) for v in value)
        if None not in (new_h, new_w, height, width) and (new_h, new_w) == (height, width):
            return images if is_batch else _a.squeeze(images, axis=[0])
        out = resizer(images, size, align_corners=align_corners)
        return out if is_batch else _a.squeeze(out, axis=[0])


resize = resize_images
