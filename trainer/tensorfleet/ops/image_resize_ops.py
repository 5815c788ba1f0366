"""TF's resize ops: ResizeBilinear, ResizeNearestNeighbor, ResizeBicubic, ResizeArea (+ their gradients).

`tf.image.resize_bilinear(images, size, align_corners=False, name=None, half_pixel_centers=False)` and the
others take a 4-D batch [batch, height, width, channels] and `size` = [new_height, new_width] (an int32
tensor, computed or not); the kernels (`kernels/image_kernels.py`) do TF 1.15's sampling math.
Bilinear, bicubic and area return float32 for any input dtype; nearest neighbour keeps the input's dtype.
Gradients are TF's: ResizeBilinearGrad / ResizeBicubicGrad (float images only, None otherwise) and
ResizeNearestNeighborGrad. ResizeArea and the gradient ops have none: TF registers none, so TF's
tf.gradients raises LookupError through ResizeArea where tensorfleet gives None (NotDifferentiable).
"""
from __future__ import annotations

from .. import dtypes as _dtypes
from .array_ops import shape as _shape
from .common import (NotDifferentiable, TensorShape, convert_to_tensor, make_tensor, register_gradient, register_op,
                     unknown_shape)
from .shape_util import constant_value

__all__ = ["resize_bilinear", "resize_nearest_neighbor", "resize_bicubic", "resize_area"]

_FLOATS = (_dtypes.float16, _dtypes.float32, _dtypes.float64)


def _resize_shape(op):
    images, size = op.inputs
    dtype = images.dtype if op.type == "ResizeNearestNeighbor" else _dtypes.float32
    if images.shape.ndims is not None and images.shape.ndims != 4:
        raise ValueError(f"Shape must be rank 4 but is rank {images.shape.ndims} for '{op.name}' "
                         f"(op: '{op.type}')")
    if size.shape.ndims is not None and size.shape.as_tuple() not in ((2,), (None,)):
        raise ValueError(f"size must be a 1-D int32 Tensor of 2 elements for '{op.name}', got shape {size.shape}")
    value = constant_value(size)
    out_h, out_w = (None, None) if value is None else (int(v) for v in value)
    if images.shape.ndims is None:
        return [(dtype, TensorShape([None, out_h, out_w, None]))]
    b, _, _, c = images.shape.as_tuple()
    return [(dtype, TensorShape([b, out_h, out_w, c]))]


for _op in ("ResizeBilinear", "ResizeNearestNeighbor", "ResizeBicubic", "ResizeArea"):
    register_op(_op, _resize_shape)
register_op("ResizeBilinearGrad", lambda op: [(op.inputs[1].dtype, op.inputs[1].shape)])
register_op("ResizeBicubicGrad", lambda op: [(op.inputs[1].dtype, op.inputs[1].shape)])
register_op("ResizeNearestNeighborGrad", lambda op: [(op.inputs[0].dtype, _nn_grad_shape(op))])
for _op in ("ResizeArea", "ResizeBilinearGrad", "ResizeBicubicGrad", "ResizeNearestNeighborGrad"):
    NotDifferentiable(_op)  # TF registers no gradient for these


def _nn_grad_shape(op):
    grads, size = op.inputs
    value = constant_value(size)
    if grads.shape.ndims is None:
        return unknown_shape(4)
    b, _, _, c = grads.shape.as_tuple()
    return TensorShape([b, None, None, c] if value is None else [b, int(value[0]), int(value[1]), c])


def _resize(op_type, default_name, images, size, align_corners, half_pixel_centers, name):
    images = convert_to_tensor(images, name="images")
    size = convert_to_tensor(size, dtype=_dtypes.int32, name="size")
    attrs = {"align_corners": bool(align_corners)}
    if half_pixel_centers is not None:
        attrs["half_pixel_centers"] = bool(half_pixel_centers)
    return make_tensor(op_type, [images, size], attrs, name=name, default_name=default_name)


def resize_bilinear(images, size, align_corners=False, name=None, half_pixel_centers=False):
    return _resize("ResizeBilinear", "ResizeBilinear", images, size, align_corners, half_pixel_centers, name)


def resize_nearest_neighbor(images, size, align_corners=False, name=None, half_pixel_centers=False):
    return _resize("ResizeNearestNeighbor", "ResizeNearestNeighbor", images, size, align_corners,
                   half_pixel_centers, name)


def resize_bicubic(images, size, align_corners=False, name=None, half_pixel_centers=False):
    return _resize("ResizeBicubic", "ResizeBicubic", images, size, align_corners, half_pixel_centers, name)


def resize_area(images, size, align_corners=False, name=None):
    return _resize("ResizeArea", "ResizeArea", images, size, align_corners, None, name)


def _attrs(op):
    return {"align_corners": op.attrs.get("align_corners", False),
            "half_pixel_centers": op.attrs.get("half_pixel_centers", False)}


@register_gradient("ResizeBilinear")
def _resize_bilinear_grad(op, grad):
    if op.inputs[0].dtype not in _FLOATS:
        return [None, None]
    return [make_tensor("ResizeBilinearGrad", [grad, op.inputs[0]], _attrs(op), name="ResizeBilinearGrad"), None]


@register_gradient("ResizeBicubic")
def _resize_bicubic_grad(op, grad):
    if op.inputs[0].dtype not in _FLOATS:
        return [None, None]
    return [make_tensor("ResizeBicubicGrad", [grad, op.inputs[0]], _attrs(op), name="ResizeBicubicGrad"), None]


@register_gradient("ResizeNearestNeighbor")
def _resize_nearest_neighbor_grad(op, grad):
    image_shape = op.inputs[0].shape
    if image_shape.ndims == 4 and None not in image_shape.as_tuple()[1:3]:
        size = convert_to_tensor(list(image_shape.as_tuple()[1:3]), dtype=_dtypes.int32)
    else:
        size = _shape(op.inputs[0])[1:3]
    return [make_tensor("ResizeNearestNeighborGrad", [grad, size], _attrs(op), name="ResizeNearestNeighborGrad"),
            None]
