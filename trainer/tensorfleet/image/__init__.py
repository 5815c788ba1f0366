"""`tf.image`: TF 1.15's image namespace, wired onto the ops.

Adjustments for input pipelines (`adjust.py`: flips, standardization, dtype conversion, brightness,
grayscale, crops and pads), resizing (`resize.py`: `resize_images` in TF 1.15's four methods, and the
resize ops `resize_bilinear`, `resize_nearest_neighbor`, `resize_bicubic`, `resize_area` of
`ops/image_resize_ops.py`), and decoding/encoding (`ops/image_codec_ops.py`, on Pillow: `decode_jpeg`,
`decode_png`, `decode_bmp`, `decode_gif`, `decode_image`, `encode_jpeg`, `encode_png`,
`extract_jpeg_shape`, `is_jpeg`). Sits above ops (composites and op wrappers), beside `layers`.
"""
from ..ops.image_codec_ops import (decode_bmp, decode_gif, decode_image, decode_jpeg, decode_png, encode_jpeg,
                                   encode_png, extract_jpeg_shape, is_jpeg)
from ..ops.image_resize_ops import resize_area, resize_bicubic, resize_bilinear, resize_nearest_neighbor
from .adjust import *  # noqa: F403
from .adjust import __all__ as _adjust_all
from .adjust import resize_image_with_crop_or_pad
from .resize import ResizeMethod, resize, resize_images

resize_with_crop_or_pad = resize_image_with_crop_or_pad

__all__ = sorted(_adjust_all + ["ResizeMethod", "resize", "resize_images", "resize_with_crop_or_pad",
                                "resize_bilinear", "resize_nearest_neighbor", "resize_bicubic", "resize_area",
                                "decode_jpeg", "decode_png", "decode_bmp", "decode_gif", "decode_image",
                                "encode_jpeg", "encode_png", "extract_jpeg_shape", "is_jpeg"])
