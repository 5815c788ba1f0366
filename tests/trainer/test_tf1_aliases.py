"""TF1 names old scripts trip on: tf.arg_max/arg_min, tf.to_float & co, tf.NodeDef with Operation.node_def in
device functions, and the tutorials' `input_data` import path."""
import warnings

import numpy as np
import pytest

import tensorfleet as tf


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default():
        yield


def test_arg_max_arg_min_match_numpy_and_default_to_int64():
    x = np.random.RandomState(0).randn(4, 5).astype(np.float32)
    amax, amin = tf.arg_max(x, 1), tf.arg_min(x, dimension=0, output_type=tf.int32)
    assert amax.dtype is tf.int64 and amin.dtype is tf.int32
    with tf.Session() as s:
        a, b = s.run([amax, amin])
    np.testing.assert_array_equal(a, np.argmax(x, 1))
    np.testing.assert_array_equal(b, np.argmin(x, 0))
    with pytest.raises(TypeError):
        tf.arg_max(x)  # dimension is required in TF 1.15


@pytest.mark.parametrize("fn,dtype", [("to_float", np.float32), ("to_double", np.float64), ("to_int32", np.int32),
                                      ("to_int64", np.int64)])
def test_to_casts(fn, dtype):
    t = getattr(tf, fn)(tf.constant([1.7, -2.2]))
    assert t.dtype.as_numpy_dtype is dtype
    with tf.Session() as s:
        np.testing.assert_array_equal(s.run(t), np.array([1.7, -2.2], np.float32).astype(dtype))


def test_device_function_reading_node_def_like_multi_gpu_examples():
    """The classic `assign_to_device` from TF1 multi-GPU examples."""
    ps_ops = ["Variable", "VariableV2", "AutoReloadVariable"]

    def assign_to_device(device, ps_device="/cpu:0"):
        def _assign(op):
            node_def = op if isinstance(op, tf.NodeDef) else op.node_def
            return ps_device if node_def.op in ps_ops else device
        return _assign

    with tf.device(assign_to_device("/gpu:1")):
        w = tf.Variable(np.ones(2, np.float32), name="w")
        y = tf.multiply(w, 3.0, name="y")
    assert w.op.device == "/device:CPU:0" and y.op.device == "/device:GPU:1"
    nd = y.op.node_def
    assert isinstance(nd, tf.NodeDef) and not isinstance(y.op, tf.NodeDef)
    assert (nd.name, nd.op, nd.device) == ("y", "Mul", "/device:GPU:1")
    assert list(nd.input)[0] == "w"


def test_tutorials_input_data_import_path(tmp_path):
    from tensorfleet.examples.tutorials.mnist import input_data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mnist = input_data.read_data_sets(str(tmp_path / "MNIST_data"), one_hot=True)
    xs, ys = mnist.train.next_batch(32)
    assert xs.shape == (32, 784) and xs.dtype == np.float32 and 0.0 <= xs.min() and xs.max() <= 1.0
    assert ys.shape == (32, 10) and np.all(ys.sum(1) == 1.0)
    assert mnist.test.images.shape[1] == 784
    assert not any(tmp_path.iterdir()) or not (tmp_path / "MNIST_data").exists() or \
        not any((tmp_path / "MNIST_data").iterdir())  # nothing downloaded into train_dir


def test_static_assertions_and_small_aliases():
    x = tf.constant([1.0, 2.0])
    assert tf.assert_type(x, tf.float32).type == "NoOp"
    with pytest.raises(TypeError, match="must be of type"):
        tf.assert_type(x, tf.int32)
    with pytest.raises(TypeError, match="integer type"):
        tf.assert_integer(x)
    assert tf.assert_scalar(tf.constant(3)).shape.ndims == 0
    with pytest.raises(ValueError, match="Expected scalar"):
        tf.assert_scalar(x)
    assert tf.assert_same_float_dtype([x, tf.constant(1.0)]) is tf.float32
    with pytest.raises(ValueError, match="same floating point type"):
        tf.assert_same_float_dtype([x, tf.constant(1.0, tf.float64)])
    with pytest.raises(TypeError, match="proper"):
        tf.assert_proper_iterable("abc")
    tf.assert_proper_iterable([1, 2])
    a, b = tf.identity_n([x, tf.constant(5)])
    s = tf.parallel_stack([x, x * 2])
    with tf.Session() as sess:
        sess.run(tf.tables_initializer())
        av, bv, sv, fv = sess.run([a, b, s, tf.floor_div(7, 2)])
    np.testing.assert_array_equal(av, [1.0, 2.0])
    assert bv == 5 and fv == 3
    np.testing.assert_array_equal(sv, [[1.0, 2.0], [2.0, 4.0]])
    assert issubclass(tf.errors.InvalidArgumentError, tf.OpError) and tf.get_logger().name == "tensorflow"
    with tf.op_scope([x], "outer", "default"):
        assert tf.identity(x).op.name == "outer/Identity"
    with tf.variable_op_scope([x], None, "vscope"):
        assert tf.get_variable("v", [1]).op.name == "vscope/v"
    with tf.container("c"):
        pass
    assert tf.AggregationMethod.DEFAULT == tf.AggregationMethod.ADD_N
