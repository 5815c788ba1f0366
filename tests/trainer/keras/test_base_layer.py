"""tf.keras.layers.Layer: building, weights (TF 1.15 names and collections), losses, updates, input specs,
configs, names, and the Keras history on output tensors."""
import numpy as np
import pytest

import tensorfleet as tf

K = tf.keras.backend
L = tf.keras.layers


class Scale(L.Layer):
    """A layer with a trainable and a non-trainable weight, a regularizer and an update."""

    def __init__(self, units=2, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape):
        self.w = self.add_weight("w", shape=[int(input_shape[-1]), self.units], initializer="ones",
                                 regularizer=tf.keras.regularizers.l2(0.5))
        self.count = self.add_weight("count", shape=[], initializer="zeros", trainable=False)
        super().build(input_shape)

    def call(self, inputs):
        self.add_update(K.update_add(self.count, 1.0))
        self.add_update(K.update_add(self.count, K.sum(inputs) * 0.0))
        return K.dot(inputs, self.w)

    def get_config(self):
        return {**super().get_config(), "units": self.units}


def test_names_are_unique_per_graph_and_snake_case():
    assert [L.Dense(1).name, L.Dense(1).name, Scale().name, L.Dense(1, name="mine").name] == \
        ["dense", "dense_1", "scale", "mine"]
    assert L.Dropout(0.1).name == "dropout" and L.ActivityRegularization().name == "activity_regularization"
    with tf.Graph().as_default():
        assert L.Dense(1).name == "dense"


def test_weights_are_named_in_the_call_scope_also_inside_variable_scope():
    x = tf.placeholder(tf.float32, [None, 3])
    layer = Scale()
    with tf.variable_scope("outer"):
        y = layer(x)
    y2 = layer(x)  # a second call reuses the weights, its ops get their own scope
    assert [v.name for v in layer.weights] == ["outer/scale/w:0", "outer/scale/count:0"]
    assert y.op.name.startswith("outer/scale/") and y2.op.name.startswith("scale/")
    assert layer.trainable_weights == [layer.w] and layer.non_trainable_weights == [layer.count]
    assert tf.trainable_variables() == [layer.w]
    assert set(tf.global_variables()) == {layer.w, layer.count}


def test_frozen_layer_weights_are_non_trainable_everywhere():
    layer = L.Dense(2, trainable=False)
    layer(tf.placeholder(tf.float32, [None, 3]))
    assert layer.trainable_weights == [] and len(layer.non_trainable_weights) == 2
    assert tf.trainable_variables() == []  # the variables are created outside TRAINABLE_VARIABLES


def test_get_set_weights_and_count_params():
    layer = Scale(units=3)
    with pytest.raises(ValueError, match="isn't built"):
        layer.count_params()
    layer(tf.placeholder(tf.float32, [None, 2]))
    assert layer.count_params() == 7
    w = np.arange(6.0).reshape(2, 3)
    layer.set_weights([w, np.array(4.0)])
    np.testing.assert_array_equal(layer.get_weights()[0], w)
    with pytest.raises(ValueError, match="expecting 2 weights"):
        layer.set_weights([w])
    with pytest.raises(ValueError, match="not compatible"):
        layer.set_weights([np.zeros((3, 3)), np.array(0.0)])


def test_regularization_losses_and_add_loss():
    layer = Scale()
    x = tf.placeholder(tf.float32, [None, 3])
    layer(x)
    (reg,) = layer.losses
    assert reg.op.name.startswith("scale/w/Regularizer")
    assert K.get_session().run(reg) == pytest.approx(0.5 * 6)  # l2 * sum(ones(3, 2) ** 2)
    assert layer.losses == [reg]  # evaluated once
    layer.add_loss(K.sum(x), inputs=x)
    layer.add_loss(tf.constant(1.0))
    assert len(layer.get_losses_for(None)) == 2 and len(layer.get_losses_for(x)) == 1
    assert tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES) == []  # Keras keeps them on the layer


def test_activity_regularizer_divides_by_the_batch_size():
    layer = L.Dense(2, kernel_initializer="ones", activity_regularizer=tf.keras.regularizers.l1(0.1))
    x = tf.placeholder(tf.float32, [None, 3])
    layer(x)
    (loss,) = layer.get_losses_for(x)
    value = K.get_session().run(loss, {x: np.ones((4, 3))})
    assert value == pytest.approx(0.1 * (4 * 2 * 3) / 4)


def test_updates_conditional_on_inputs():
    layer = Scale()
    x = tf.placeholder(tf.float32, [None, 3])
    layer(x)
    unconditional, conditional = layer.get_updates_for(None), layer.get_updates_for(x)
    assert len(unconditional) == 1 and len(conditional) == 1 and len(layer.updates) == 2
    layer.trainable = False
    assert layer.updates == []


def test_input_spec_checks_name_the_layer():
    dense = L.Dense(2)
    dense(tf.placeholder(tf.float32, [None, 3]))
    with pytest.raises(ValueError, match="Input 0 of layer dense is incompatible with the layer: expected axis -1"):
        dense(tf.placeholder(tf.float32, [None, 4]))
    with pytest.raises(ValueError, match="expected min_ndim=2, found ndim=1"):
        L.Dense(2)(tf.placeholder(tf.float32, [3]))
    with pytest.raises(ValueError, match="last dimension of the inputs to `Dense` should be defined"):
        L.Dense(2)(tf.placeholder(tf.float32, [None, None]))
    spec = L.InputSpec(shape=(None, 3))
    assert spec.ndim == 2 and "shape=(None, 3)" in repr(spec)


def test_config_round_trip_and_missing_get_config():
    layer = Scale(units=4, name="s", trainable=False)
    config = layer.get_config()
    assert config == {"name": "s", "trainable": False, "dtype": None, "units": 4}
    clone = Scale.from_config(config)
    assert (clone.name, clone.units, clone.trainable) == ("s", 4, False)

    class NoConfig(L.Layer):
        def __init__(self, a, **kwargs):
            super().__init__(**kwargs)

    with pytest.raises(NotImplementedError, match="must override `get_config`"):
        NoConfig(1).get_config()
    with pytest.raises(TypeError, match="Keyword argument not understood"):
        L.Dense(2, foo=1)


def test_dtype_from_first_input_and_numpy_inputs():
    layer = L.Dense(2)
    out = layer(np.ones((2, 3)))  # numpy (float64) inputs are converted
    assert layer.dtype == "float64" and out.dtype == tf.float64 and layer.kernel.dtype == tf.float64


def test_keras_history_and_nodes():
    inp = tf.keras.Input((3,), name="in")
    dense = L.Dense(2)
    out = dense(inp)
    assert out._keras_history == (dense, 0, 0) and inp._keras_history.layer.name == "in"
    out2 = dense(inp)
    assert out2._keras_history.node_index == 1
    assert len(dense.inbound_nodes) == 2 and dense.get_output_at(1) is out2
    assert dense.input is inp and dense.output is out
    assert dense.input_shape == (None, 3) and dense.output_shape == (None, 2)
    plain = dense(tf.placeholder(tf.float32, [None, 3]))
    assert not hasattr(plain, "_keras_history") and len(dense.inbound_nodes) == 2


def test_training_argument_propagates_from_the_outer_call():
    seen = []

    class Inner(L.Layer):
        def call(self, inputs, training=None):
            seen.append(training)
            return inputs

    class Outer(L.Layer):
        def __init__(self):
            super().__init__()
            self.inner = Inner()

        def call(self, inputs, training=None):
            return self.inner(inputs)

    x = tf.placeholder(tf.float32, [None, 2])
    Outer()(x, training=True)
    Outer()(x)
    assert seen == [True, None]


def test_sublayers_assigned_as_attributes_are_tracked():
    class Block(L.Layer):
        def __init__(self):
            super().__init__()
            self.a = L.Dense(2)
            self.stack = [L.Dense(2), L.Dense(1, use_bias=False)]

        def call(self, inputs):
            return self.stack[1](self.stack[0](self.a(inputs)))

    block = Block()
    block(tf.placeholder(tf.float32, [None, 3]))
    assert [v.name for v in block.weights] == ["block/dense/kernel:0", "block/dense/bias:0",
                                               "block/dense_1/kernel:0", "block/dense_1/bias:0",
                                               "block/dense_2/kernel:0"]
