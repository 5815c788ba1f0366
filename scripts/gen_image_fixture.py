"""Writes tests/trainer/data/tf_image_ops.npz: TF 1.15-API image resizing and codec results from real TensorFlow.

Run with the `tf1` extra (real TensorFlow, `tf.compat.v1` with v2 behaviour disabled):
    python scripts/gen_image_fixture.py [--out FILE]

Contents (the test, tests/trainer/test_image_resize_codecs.py, rebuilds the same inputs from the same seeds):
- `resize/<method>/<align>/<h>x<w>`: `tf.compat.v1.image.resize_images(x, (h, w), method, align_corners)` of
  `x = RandomState(0).rand(2, 5, 7, 2)` as float32, for the four v1 methods, align_corners False/True and
  sizes down, up, same, 1x1 and mixed;
- `half/<op>/<h>x<w>`: `resize_bilinear/nearest_neighbor/bicubic(..., half_pixel_centers=True)`;
- `u8/<method>`: the same on `RandomState(1).randint(0, 256, (5, 7, 3))` as uint8 (dtype rules);
- `grad/<op>/<mode>`: d/dx sum(resize(x) * w), `w = RandomState(2).rand(...)` (TF's resize gradients);
- `png/<c>`, `png16`, `jpeg`, `jpeg_decoded/<variant>`: bytes TF encoded and what TF decodes from them.
"""
from __future__ import annotations

import argparse
import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "trainer" / "data" / "tf_image_ops.npz"
METHODS = {"bilinear": 0, "nearest": 1, "bicubic": 2, "area": 3}
SIZES = [(3, 4), (8, 11), (5, 7), (1, 1), (10, 3)]
HALF_PIXEL_OPS = ("resize_bilinear", "resize_nearest_neighbor", "resize_bicubic")


def resize_input() -> np.ndarray:
    return np.random.RandomState(0).rand(2, 5, 7, 2).astype(np.float32)


def uint8_input() -> np.ndarray:
    return np.random.RandomState(1).randint(0, 256, (5, 7, 3)).astype(np.uint8)


def codec_image() -> np.ndarray:
    """A 13x17 RGB image: smooth ramps plus noise (something JPEG compresses imperfectly)."""
    yy, xx = np.mgrid[0:13, 0:17]
    rng = np.random.RandomState(3)
    img = np.stack([yy * 19, xx * 15, (yy + xx) * 8], axis=-1) + rng.randint(0, 30, (13, 17, 3))
    return np.clip(img, 0, 255).astype(np.uint8)


def grad_weights(shape) -> np.ndarray:
    return np.random.RandomState(2).rand(*shape).astype(np.float32)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=pathlib.Path, default=OUT)
    args = ap.parse_args(argv)
    import tensorflow.compat.v1 as tf  # the tf1 extra

    tf.disable_v2_behavior()
    out: dict = {}
    x = tf.constant(resize_input())
    u8 = tf.constant(uint8_input())
    fetch: dict = {}
    for name, method in METHODS.items():
        for align in (False, True):
            for h, w in SIZES:
                fetch[f"resize/{name}/{int(align)}/{h}x{w}"] = tf.image.resize_images(x, (h, w), method, align)
        fetch[f"u8/{name}"] = tf.image.resize_images(u8, (4, 9), method)
    for op in HALF_PIXEL_OPS:
        for h, w in SIZES:
            fetch[f"half/{op}/{h}x{w}"] = getattr(tf.image, op)(x, (h, w), half_pixel_centers=True)
    grad_cases = [(op, mode) for op in HALF_PIXEL_OPS for mode in ("legacy", "align", "half")]
    for op, mode in grad_cases:
        y = getattr(tf.image, op)(x, (4, 10), align_corners=mode == "align", half_pixel_centers=mode == "half")
        fetch[f"grad/{op}/{mode}"] = tf.gradients(tf.reduce_sum(y * grad_weights((2, 4, 10, 2))), x)[0]
    img = tf.constant(codec_image())
    fetch["png/3"] = tf.image.encode_png(img)
    fetch["png/1"] = tf.image.encode_png(img[:, :, :1])
    fetch["png/4"] = tf.image.encode_png(tf.concat([img, img[:, :, :1]], -1))
    fetch["png16"] = tf.image.encode_png(tf.cast(img, tf.uint16) * 257 + tf.cast(img[:, :, ::-1], tf.uint16))
    fetch["jpeg"] = tf.image.encode_jpeg(img, quality=90)
    with tf.Session() as sess:
        out.update(sess.run(fetch))
        jpeg = tf.constant(out["jpeg"])
        decoded = {
            "default": tf.image.decode_jpeg(jpeg),
            "accurate": tf.image.decode_jpeg(jpeg, dct_method="INTEGER_ACCURATE"),
            "gray": tf.image.decode_jpeg(jpeg, channels=1, dct_method="INTEGER_ACCURATE"),
            "ratio2": tf.image.decode_jpeg(jpeg, ratio=2, dct_method="INTEGER_ACCURATE"),
            "ratio4": tf.image.decode_jpeg(jpeg, ratio=4, dct_method="INTEGER_ACCURATE"),
            "png16_as_u16": tf.image.decode_png(tf.constant(out["png16"]), dtype=tf.uint16),
            "png16_as_u8": tf.image.decode_png(tf.constant(out["png16"])),
            "png3_as_gray": tf.image.decode_png(tf.constant(out["png/3"]), channels=1),
            "png1_as_rgba": tf.image.decode_png(tf.constant(out["png/1"]), channels=4),
            "png3_as_u16": tf.image.decode_png(tf.constant(out["png/3"]), dtype=tf.uint16),
        }
        for k, v in sess.run(decoded).items():
            out[f"decoded/{k}"] = v
    out = {k: (np.frombuffer(v, np.uint8) if isinstance(v, bytes) else v) for k, v in out.items()}
    out["tf_version"] = np.array(tf.__version__)
    np.savez_compressed(args.out, **out)
    print(args.out, len(out), "arrays")
    return 0


if __name__ == "__main__":
    sys.exit(main())
