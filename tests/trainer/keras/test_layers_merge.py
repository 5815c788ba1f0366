"""Merge layers and their functional forms against numpy, with gradients by finite differences."""
import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import check_gradients

K = tf.keras.backend
L = tf.keras.layers
rng = np.random.default_rng(2)
A, B, C = (rng.standard_normal((3, 4)) for _ in range(3))


@pytest.mark.parametrize("layer,fn", [
    (L.Add, lambda a, b, c: a + b + c), (L.Multiply, lambda a, b, c: a * b * c),
    (L.Average, lambda a, b, c: (a + b + c) / 3), (L.Maximum, lambda a, b, c: np.maximum(np.maximum(a, b), c)),
    (L.Minimum, lambda a, b, c: np.minimum(np.minimum(a, b), c))])
def test_elementwise_merges(layer, fn):
    out = layer(dtype="float64")([K.constant(v, "float64") for v in (A, B, C)])
    np.testing.assert_allclose(K.get_session().run(out), fn(A, B, C))
    check_gradients(lambda a, b: layer()([a, b]), [A, B])


def test_functional_forms_and_subtract():
    a, b = K.constant(A, "float64"), K.constant(B, "float64")
    run = K.get_session().run
    np.testing.assert_allclose(run(L.add([a, b])), A + B)
    np.testing.assert_allclose(run(L.subtract([a, b])), A - B)
    np.testing.assert_allclose(run(L.multiply([a, b])), A * B)
    np.testing.assert_allclose(run(L.average([a, b])), (A + B) / 2)
    np.testing.assert_allclose(run(L.maximum([a, b])), np.maximum(A, B))
    np.testing.assert_allclose(run(L.minimum([a, b])), np.minimum(A, B))
    with pytest.raises(ValueError, match="exactly 2 inputs"):
        L.subtract([a, b, a])
    with pytest.raises(ValueError, match="at least 2 inputs"):
        L.add([a])


def test_broadcasting_of_different_ranks():
    x, y = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 4))
    out = L.Add()([K.constant(x, "float64"), K.constant(y, "float64")])
    np.testing.assert_allclose(K.get_session().run(out), x + y[:, None, :])
    assert L.Add().compute_output_shape([(None, 3, 4), (None, 4)]) == (None, 3, 4)
    with pytest.raises(ValueError, match="could not be broadcast"):
        L.Add()([K.constant(np.ones((2, 3))), K.constant(np.ones((2, 4)))])


def test_concatenate():
    out = L.concatenate([K.constant(A, "float64"), K.constant(B[:, :2], "float64")])
    np.testing.assert_allclose(K.get_session().run(out), np.concatenate([A, B[:, :2]], -1))
    out0 = L.Concatenate(axis=0)([K.constant(A), K.constant(B)])
    assert out0.shape.as_list() == [6, 4]
    assert L.Concatenate().compute_output_shape([(None, 3), (None, 5)]) == (None, 8)
    with pytest.raises(ValueError, match="matching shapes except for the concat axis"):
        L.Concatenate(axis=1)([K.ones((2, 3)), K.ones((3, 3))])
    check_gradients(lambda a, b: L.Concatenate()([a, b]), [A, B])


def test_dot():
    run = K.get_session().run
    out = L.Dot(axes=1)([K.constant(A, "float64"), K.constant(B, "float64")])
    np.testing.assert_allclose(run(out), np.sum(A * B, 1, keepdims=True))
    x, y = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 5, 4))
    out = L.dot([K.constant(x, "float64"), K.constant(y, "float64")], axes=(2, 2))
    np.testing.assert_allclose(run(out), np.einsum("bik,bjk->bij", x, y))
    assert L.Dot(axes=(2, 2)).compute_output_shape([(None, 3, 4), (None, 5, 4)]) == (None, 3, 5)
    cos = L.Dot(axes=-1, normalize=True)([K.constant(A, "float64"), K.constant(B, "float64")])
    ref = np.sum(A * B, 1) / np.linalg.norm(A, axis=1) / np.linalg.norm(B, axis=1)
    np.testing.assert_allclose(run(cos)[:, 0], ref, rtol=1e-6)
    with pytest.raises(ValueError, match="Dimension incompatibility"):
        L.Dot(axes=1)([K.ones((2, 3)), K.ones((2, 4))])
    check_gradients(lambda a, b: L.Dot(axes=1)([a, b]), [A, B])
