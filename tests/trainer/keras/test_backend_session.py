"""tf.keras.backend: the session Keras runs in, variable initialisation, the learning phase, settings, names."""
import numpy as np
import pytest

import tensorfleet as tf

K = tf.keras.backend


def test_get_session_initialises_keras_variables_once_and_keeps_user_values():
    v = K.variable(np.arange(3.0), name="v")
    sess = K.get_session()
    np.testing.assert_array_equal(sess.run(v), [0.0, 1.0, 2.0])
    sess.run(tf.assign(v, [5.0, 5.0, 5.0]))
    assert K.get_session() is sess  # same graph: the same session
    np.testing.assert_array_equal(K.get_value(v), [5.0, 5.0, 5.0])  # not re-initialised


def test_get_session_prefers_the_default_session_and_set_session():
    v = K.variable(1.0)
    with tf.Session() as sess:
        assert K.get_session() is sess
        assert sess.run(v) == 1.0  # initialised in the default session
    other = tf.Session()
    try:
        K.set_session(other)
        assert K.get_session() is other
    finally:
        other.close()


def test_manual_variable_initialization_leaves_variables_alone():
    K.manual_variable_initialization(True)
    try:
        v = K.variable(2.0)
        with pytest.raises(tf.errors.FailedPreconditionError):
            K.get_session().run(v)
    finally:
        K.manual_variable_initialization(False)


def test_new_graph_gets_a_new_keras_session():
    s1 = K.get_session()
    with tf.Graph().as_default() as g:
        s2 = K.get_session()
        assert s2.graph is g and s2 is not s1


def test_learning_phase_is_a_bool_placeholder_with_default_false():
    phase = K.learning_phase()
    assert phase.op.type == "PlaceholderWithDefault" and phase.name == "keras_learning_phase:0"
    assert phase.dtype == tf.bool and phase.shape.as_list() == []
    assert K.learning_phase() is phase  # one per graph
    out = K.in_train_phase(tf.constant(1.0), tf.constant(0.0))
    sess = K.get_session()
    assert sess.run(out) == 0.0 and sess.run(out, {phase: True}) == 1.0


def test_set_learning_phase_makes_it_static_per_graph():
    K.set_learning_phase(1)
    assert K.learning_phase() == 1
    assert K.in_train_phase(lambda: "train", lambda: "test") == "train"
    with tf.Graph().as_default():
        assert not isinstance(K.learning_phase(), int)  # another graph keeps its placeholder
    with K.learning_phase_scope(0):
        assert K.learning_phase() == 0
    assert K.learning_phase() == 1
    with pytest.raises(ValueError, match="0 or 1"):
        K.set_learning_phase(2)


def test_clear_session_resets_graph_names_and_session():
    tf.keras.layers.Dense(2)
    s = K.get_session()
    K.clear_session()
    assert tf.get_default_graph() is not s.graph
    assert tf.keras.layers.Dense(2).name == "dense"  # name counters restart
    assert tf.get_default_graph().get_operation_by_name("keras_learning_phase").type == "PlaceholderWithDefault"


def test_settings_defaults_and_validation():
    assert (K.floatx(), K.epsilon(), K.image_data_format()) == ("float32", 1e-7, "channels_last")
    K.set_floatx("float64")
    assert K.variable(1.0).dtype == tf.float64 and K.cast_to_floatx([1]).dtype == np.float64
    K.set_epsilon(1e-5)
    assert K.epsilon() == 1e-5
    with pytest.raises(ValueError):
        K.set_floatx("int8")
    with pytest.raises(ValueError):
        K.set_image_data_format("nhwc")


def test_uids_and_unique_names_are_per_graph():
    assert [K.get_uid("x"), K.get_uid("x")] == [1, 2]
    assert [K.unique_object_name("a", zero_based=True) for _ in range(3)] == ["a", "a_1", "a_2"]
    with tf.Graph().as_default():
        assert K.get_uid("x") == 1
    K.reset_uids()
    assert K.get_uid("x") == 1


def test_function_runs_outputs_and_updates_in_one_session_run(monkeypatch):
    x = K.placeholder(shape=(None, 2))
    v = K.variable(0.0)
    f = K.function([x], [K.sum(x) * 2.0], updates=[K.update_add(v, 1.0)])
    sess = K.get_session()
    calls = []
    original = type(sess).run
    monkeypatch.setattr(type(sess), "run", lambda self, *a, **k: calls.append(1) or original(self, *a, **k))
    out = f([np.ones((3, 2))])
    assert out == [12.0] and len(calls) == 1
    f([np.ones((1, 2))])
    assert len(calls) == 2 and K.get_value(v) == 2.0


def test_function_accepts_feed_dict_and_fetches_callbacks():
    x = K.placeholder(shape=())
    y = K.placeholder(shape=())
    seen = []
    f = K.function([x], x + y, feed_dict={y: 10.0}, fetches=[x * 3])
    f.fetch_callbacks[f.fetches[0]] = seen.append
    assert f([1.0]) == 11.0 and seen == [3.0]
    with pytest.raises(ValueError, match="Invalid argument"):
        K.function([x], x, bogus=1)


def test_value_helpers():
    a, b = K.variable(np.zeros((2, 2))), K.variable(1.0)
    K.set_value(a, np.ones((2, 2)))
    K.batch_set_value([(b, 3.0), (a, np.full((2, 2), 2.0))])
    assert K.batch_get_value([a, b])[0].tolist() == [[2, 2], [2, 2]] and K.get_value(b) == 3.0
    assert K.eval(K.constant([1, 2]) * 2).tolist() == [2.0, 4.0]
    assert K.constant(1).dtype == tf.float32
    g = K.gradients(K.sum(K.square(b)), [b])
    assert K.get_value(g[0]) == 6.0
    with pytest.raises(ValueError):
        K.set_value(a, np.ones(3))
