"""dtype names: exactly TF 1.15's `tf.as_dtype` table (tensorflow/python/framework/dtypes.py, r1.15), with TF's
meanings ("float" is float32, not numpy's float64) and TF's error for anything else."""
import numpy as np
import pytest

import tensorfleet as tf

# TF 1.15 _TYPE_TO_STRING (non-ref) with each name's DataType enum number (types.proto), as the oracle.
TF115_CANONICAL = {
    "float16": 19, "float32": 1, "float64": 2, "int32": 3, "uint8": 4, "uint16": 17, "uint32": 22, "uint64": 23,
    "int16": 5, "int8": 6, "string": 7, "complex64": 8, "complex128": 18, "int64": 9, "bool": 10, "qint8": 11,
    "quint8": 12, "qint16": 15, "quint16": 16, "qint32": 13, "bfloat16": 14, "resource": 20, "variant": 21,
}
# TF 1.15's "non-canonical aliases" added to _STRING_TO_TF
TF115_ALIASES = {"half": "float16", "float": "float32", "double": "float64"}
NOT_IMPLEMENTED = {"qint8", "quint8", "qint16", "quint16", "qint32", "bfloat16", "resource", "variant"}
NUMPY_OF = {"float16": np.float16, "float32": np.float32, "float64": np.float64, "int32": np.int32,
            "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64, "int16": np.int16,
            "int8": np.int8, "string": np.object_, "complex64": np.complex64, "complex128": np.complex128,
            "int64": np.int64, "bool": np.bool_}


@pytest.mark.parametrize("name", sorted(set(TF115_CANONICAL) - NOT_IMPLEMENTED))
def test_canonical_names_map_to_themselves(name):
    d = tf.as_dtype(name)
    assert d.name == name and d.as_datatype_enum == TF115_CANONICAL[name]
    assert d.as_numpy_dtype is NUMPY_OF[name]
    assert tf.as_dtype(TF115_CANONICAL[name]) is d  # the enum number converts too
    assert getattr(tf, "bool" if name == "bool" else name) is d


@pytest.mark.parametrize("alias,canonical", sorted(TF115_ALIASES.items()))
def test_tf_aliases_keep_tf_meaning(alias, canonical):
    assert tf.as_dtype(alias) is tf.as_dtype(canonical)
    if alias != "float":  # TF has tf.half and tf.double, but no tf.float
        assert getattr(tf, alias) is tf.as_dtype(canonical)
    else:
        assert not hasattr(tf, "float")


@pytest.mark.parametrize("name", sorted(NOT_IMPLEMENTED | {n + "_ref" for n in list(TF115_CANONICAL) + list(
    TF115_ALIASES)}))
def test_tf_names_without_kernels_say_so(name):
    with pytest.raises(TypeError, match="TensorFlow DType that tensorfleet does not support"):
        tf.as_dtype(name)


@pytest.mark.parametrize("value", ["int", "f4", "f8", "float_", "Float", "FLOAT32", "str", "unicode", "long",
                                   "complex", "", int, complex, str, bytes, None, 99, [1]])
def test_everything_else_gets_tfs_error(value):
    with pytest.raises(TypeError, match=r"^Cannot convert value .* to a TensorFlow DType\.$"):
        tf.as_dtype(value)


def test_python_and_numpy_types():
    assert tf.as_dtype(float) is tf.float32 and tf.as_dtype(bool) is tf.bool and tf.as_dtype(object) is tf.string
    assert tf.as_dtype(np.float64) is tf.float64 and tf.as_dtype(np.dtype("<f4")) is tf.float32
    assert tf.as_dtype(np.dtype("S5")) is tf.string and tf.as_dtype(np.dtype("U3")) is tf.string
    assert tf.as_dtype(np.dtype(object)) is tf.string


def test_dtype_equality_converts_like_tf():
    assert tf.float32 == "float32" and tf.float32 == "float" and tf.float32 == np.float32
    assert tf.float64 != "float" and tf.int32 != "int" and tf.float32 != None  # noqa: E711
    assert {tf.float32: 1}[tf.as_dtype("float")] == 1


def test_dtype_properties_follow_tf():
    assert tf.float32.is_floating and not tf.complex64.is_floating and tf.complex64.is_complex
    assert tf.uint16.is_integer and tf.uint16.is_unsigned and not tf.int8.is_unsigned
    assert not tf.string.is_numeric and not tf.bool.is_integer
    with pytest.raises(TypeError):
        _ = tf.string.min
    with pytest.raises(TypeError):
        _ = tf.bool.max
    assert tf.int16.max == 32767 and tf.float16.max == np.finfo(np.float16).max


def test_placeholder_float_is_float32_and_matmuls_with_float32_variables():
    """The TF1 idiom that used to fail: tf.placeholder("float", ...) against float32 weights."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder("float", [None, 3])
        w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2))
        y = tf.matmul(x, w)
        z = tf.cast(tf.constant([1, 2]), "double")
        assert x.dtype is tf.float32 and y.dtype is tf.float32 and z.dtype is tf.float64
        assert tf.zeros([2], dtype="half").dtype is tf.float16
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            xv = np.ones((2, 3), np.float32)
            out = s.run(y, {x: xv})
    np.testing.assert_allclose(out, xv @ np.arange(6, dtype=np.float32).reshape(3, 2))
    assert out.dtype == np.float32


def test_placeholder_with_a_bad_dtype_name_fails_at_build_time():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="Cannot convert value 'int' to a TensorFlow DType"):
            tf.placeholder("int", [2])
