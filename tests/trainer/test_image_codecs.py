"""tf.image decoding and encoding: against what real TensorFlow decodes from bytes it encoded
(tests/trainer/data/tf_image_ops.npz, scripts/gen_image_fixture.py), and against known pixel arrays."""
import io
import os

import numpy as np
import pytest

import tensorfleet as tf
from helpers import run

PIL_Image = pytest.importorskip("PIL.Image")
HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = np.load(os.path.join(HERE, "data", "tf_image_ops.npz"))


def _tf_bytes(key) -> bytes:
    return FIXTURE[key].tobytes()


def _source_image():
    yy, xx = np.mgrid[0:13, 0:17]
    rng = np.random.RandomState(3)
    img = np.stack([yy * 19, xx * 15, (yy + xx) * 8], axis=-1) + rng.randint(0, 30, (13, 17, 3))
    return np.clip(img, 0, 255).astype(np.uint8)  # scripts/gen_image_fixture.py's codec_image


def test_decode_jpeg_is_bit_exact_with_tfs_accurate_dct_and_close_to_its_default():
    jpeg = _tf_bytes("jpeg")
    cases = {"accurate": tf.image.decode_jpeg(jpeg, dct_method="INTEGER_ACCURATE"),
             "gray": tf.image.decode_jpeg(jpeg, channels=1, dct_method="INTEGER_ACCURATE"),
             "ratio2": tf.image.decode_jpeg(jpeg, ratio=2, dct_method="INTEGER_ACCURATE"),
             "ratio4": tf.image.decode_jpeg(jpeg, ratio=4, dct_method="INTEGER_ACCURATE")}
    got = dict(zip(cases, run(*cases.values())))
    for key, value in got.items():
        np.testing.assert_array_equal(value, FIXTURE[f"decoded/{key}"], err_msg=key)
    assert cases["gray"].shape.as_list() == [None, None, 1] and cases["accurate"].dtype == tf.uint8
    # TF's default dct_method ("" = libjpeg's INTEGER_FAST) is not reachable through Pillow: a few levels off
    default = run(tf.image.decode_jpeg(jpeg))
    assert np.abs(default.astype(int) - FIXTURE["decoded/default"]).max() <= 4


def test_decode_png_channels_and_dtypes_as_tf():
    cases = {"png16_as_u8": tf.image.decode_png(_tf_bytes("png16")),
             "png3_as_gray": tf.image.decode_png(_tf_bytes("png/3"), channels=1),
             "png1_as_rgba": tf.image.decode_png(_tf_bytes("png/1"), channels=4),
             "png3_as_u16": tf.image.decode_png(_tf_bytes("png/3"), dtype=tf.uint16)}
    got = dict(zip(cases, run(*cases.values())))
    for key, value in got.items():
        want = FIXTURE[f"decoded/{key}"]
        assert value.dtype == want.dtype, key
        np.testing.assert_array_equal(value, want, err_msg=key)
    np.testing.assert_array_equal(run(tf.image.decode_png(_tf_bytes("png/3"))), _source_image())
    with tf.Session() as sess, pytest.raises(tf.errors.UnimplementedError, match="16-bit color PNG"):
        sess.run(tf.image.decode_png(_tf_bytes("png16"), dtype=tf.uint16))


@pytest.mark.parametrize("channels", [1, 2, 3, 4])
def test_encode_png_round_trips_every_channel_count(channels):
    img = _source_image()
    src = np.concatenate([img, img[:, :, :1]], -1)[:, :, :channels] if channels == 4 else \
        (img[:, :, :channels] if channels != 2 else np.stack([img[:, :, 0], img[:, :, 1]], -1))
    encoded = tf.image.encode_png(src)
    assert encoded.dtype == tf.string and encoded.shape.as_list() == []
    blob = run(encoded)
    assert blob.startswith(b"\x89PNG\r\n\x1a\n")
    np.testing.assert_array_equal(run(tf.image.decode_png(blob)), src)
    color_type = blob[25]  # IHDR: 0 gray, 4 gray+alpha, 2 RGB, 6 RGBA
    assert color_type == {1: 0, 2: 4, 3: 2, 4: 6}[channels] and blob[24] == 8


def test_encode_png_16_bit_grayscale_keeps_16_bits():
    src = (np.arange(12, dtype=np.uint16) * 5000).reshape(3, 4, 1)
    blob = run(tf.image.encode_png(src))
    assert blob[24] == 16  # bit depth
    np.testing.assert_array_equal(run(tf.image.decode_png(blob, dtype=tf.uint16)), src)
    np.testing.assert_array_equal(run(tf.image.decode_png(blob)), (src >> 8).astype(np.uint8))


def test_encode_jpeg_defaults_and_options():
    img = _source_image()
    blob = run(tf.image.encode_jpeg(img))
    assert blob[:3] == b"\xff\xd8\xff" and blob[6:11] == b"JFIF\x00"
    assert blob[13] == 1 and blob[14:18] == b"\x01\x2c\x01\x2c"  # TF's 300 x 300 dots per inch
    # libjpeg through Pillow with TF's settings: the very bytes TF's encode_jpeg(quality=90) wrote
    assert run(tf.image.encode_jpeg(img, quality=90)) == _tf_bytes("jpeg")
    small = run(tf.image.encode_jpeg(img, quality=20, density_unit="cm", x_density=10, y_density=20))
    assert small[13] == 2 and small[14:18] == b"\x00\x0a\x00\x14" and len(small) < len(blob)
    gray = run(tf.image.encode_jpeg(img[:, :, :1]))
    assert run(tf.image.decode_jpeg(gray)).shape == (13, 17, 1)
    np.testing.assert_array_equal(run(tf.image.extract_jpeg_shape(blob)), [13, 17, 3])
    assert run(tf.image.is_jpeg(blob)) and not run(tf.image.is_jpeg(_tf_bytes("png/3")))


def _pillow_bytes(array, fmt, **kw):
    buf = io.BytesIO()
    PIL_Image.fromarray(array).save(buf, fmt, **kw)
    return buf.getvalue()


def test_decode_gif_frames_and_bmp_give_the_drawn_pixels():
    palette = np.array([[0, 0, 0], [255, 0, 0], [0, 255, 0], [10, 20, 30]], np.uint8)
    idx = [np.random.RandomState(i).randint(0, 4, (6, 5)).astype(np.uint8) for i in range(3)]
    frames = [PIL_Image.fromarray(i, "P") for i in idx]
    for f in frames:
        f.putpalette(palette.ravel().tolist() + [0] * (768 - palette.size))
    buf = io.BytesIO()
    frames[0].save(buf, "GIF", save_all=True, append_images=frames[1:], disposal=1, optimize=False)
    gif = tf.image.decode_gif(buf.getvalue())
    assert gif.shape.as_list() == [None, None, None, 3]
    np.testing.assert_array_equal(run(gif), np.stack([palette[i] for i in idx]))
    img = np.random.RandomState(7).randint(0, 256, (4, 6, 3)).astype(np.uint8)
    bmp = _pillow_bytes(img, "BMP")
    np.testing.assert_array_equal(run(tf.image.decode_bmp(bmp)), img)
    np.testing.assert_array_equal(run(tf.image.decode_image(bmp)), img)


def test_decode_image_detects_the_format_and_converts_dtype():
    png, jpeg = _tf_bytes("png/3"), _tf_bytes("jpeg")
    as_float = tf.image.decode_image(png, dtype=tf.float32)
    np.testing.assert_allclose(run(as_float), _source_image() / 255.0, rtol=1e-6)
    np.testing.assert_array_equal(run(tf.image.decode_image(jpeg, channels=3)), run(tf.image.decode_jpeg(jpeg)))
    assert tf.image.decode_image(png).shape.ndims is None  # a GIF would be 4-D: no static rank, as TF 1.15
    assert tf.image.decode_image(png, channels=3, expand_animations=False).shape.as_list() == [None, None, 3]
    np.testing.assert_array_equal(run(tf.image.decode_jpeg(png)), _source_image())  # TF's DecodeJpeg reads PNG
    assert tf.io.decode_jpeg is tf.image.decode_jpeg and tf.io.encode_png is tf.image.encode_png


def test_bad_bytes_raise_tfs_errors_naming_the_op():
    bad = tf.image.decode_jpeg(b"not an image at all", name="my_decode")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Expected image .JPEG, PNG, or GIF.") as e:
            sess.run(bad)
        assert e.value.op is bad.op
        with pytest.raises(tf.errors.InvalidArgumentError, match="empty file"):
            sess.run(tf.image.decode_png(b""))
        truncated = _tf_bytes("jpeg")[:60]
        with pytest.raises(tf.errors.InvalidArgumentError, match="JPEG"):
            sess.run(tf.image.decode_jpeg(truncated))
    with pytest.raises(ValueError, match="dct_method"):
        tf.image.decode_jpeg(b"", dct_method="FASTEST")
    with pytest.raises(TypeError, match="uint8"):
        tf.image.encode_jpeg(tf.zeros([2, 2, 3]))


def test_input_pipeline_reads_decodes_and_resizes_files(tmp_path):
    """The image-folder pattern: tf.data over file names, read_file, decode_jpeg, resize_images, batch."""
    names = []
    for i in range(3):
        path = tmp_path / f"img{i}.jpg"
        path.write_bytes(_pillow_bytes(np.full((10 + i, 12, 3), 40 * i, np.uint8), "JPEG", quality=95))
        names.append(str(path))

    def load(name):
        image = tf.image.decode_jpeg(tf.read_file(name), channels=3)
        return tf.image.resize_images(image, [8, 8])

    batch = tf.data.Dataset.from_tensor_slices(names).map(load).batch(3).make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        out = sess.run(batch)
    assert out.shape == (3, 8, 8, 3) and out.dtype == np.float32
    np.testing.assert_allclose(out.mean(axis=(1, 2, 3)), [0, 40, 80], atol=2)
