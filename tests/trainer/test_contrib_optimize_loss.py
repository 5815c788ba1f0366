"""tf.contrib.layers.optimize_loss (optimizer by name/class/instance/function, learning-rate variable and decay,
clipping, multipliers, noise, update ops, the summaries it names) and the summarize_* helpers."""
import numpy as np
import pytest

import tensorfleet as tf

layers = tf.contrib.layers
RNG = np.random.default_rng(0)
XS = RNG.standard_normal((32, 3)).astype(np.float32)
YS = XS @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.25


def _regression():
    tf.set_random_seed(7)   # the same initial weights every run: the tests compare losses across steps
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.placeholder(tf.float32, [None, 1])
    pred = layers.fully_connected(x, 1, activation_fn=None, scope="linear")
    return x, y, tf.reduce_mean(tf.square(pred - y))


def _tags(summary_bytes):
    return {v.tag: v for v in tf.Summary.FromString(summary_bytes).value}


def _train(train_op, feed, steps):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        losses = [float(sess.run(train_op, feed)) for _ in range(steps)]
        return losses, sess


# Adagrad's steps shrink as its accumulator grows (and start from TF's 0.1 accumulator): a larger rate
@pytest.mark.parametrize("optimizer,rate", [("SGD", 0.05), ("Adam", 0.05), ("Adagrad", 0.3), ("Momentum", 0.05),
                                            ("RMSProp", 0.05), ("Ftrl", 0.5), (tf.train.GradientDescentOptimizer, 0.05),
                                            (lambda lr: tf.train.MomentumOptimizer(lr, 0.5), 0.05)])
def test_each_way_of_naming_the_optimizer_trains(optimizer, rate):
    x, y, loss = _regression()
    step = tf.train.get_or_create_global_step()
    train_op = layers.optimize_loss(loss, step, learning_rate=rate, optimizer=optimizer)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        losses = [float(sess.run(train_op, {x: XS, y: YS})) for _ in range(60)]
        assert sess.run(step) == 60
    assert losses[-1] < 0.5 * losses[0], losses[::10]


def test_train_op_is_the_loss_and_the_learning_rate_variable():
    x, y, loss = _regression()
    step = tf.train.get_or_create_global_step()
    train_op = layers.optimize_loss(loss, step, 0.1, tf.train.GradientDescentOptimizer(0.1))
    lr = [v for v in tf.global_variables() if v.op.name == "OptimizeLoss/learning_rate"]
    assert len(lr) == 1 and lr[0] not in tf.trainable_variables()
    w = tf.model_variables()[0]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        before, w0 = sess.run([loss, w], {x: XS, y: YS})
        returned = sess.run(train_op, {x: XS, y: YS})
        w1 = sess.run(w)
    np.testing.assert_allclose(returned, before, rtol=1e-6)  # the loss before this step's update
    # one plain gradient-descent step (the instance's own rate 0.1) against numpy's gradient of the MSE
    b = 0.0
    grad_w = 2 * XS.T @ (XS @ w0 + b - YS) / len(XS)
    np.testing.assert_allclose(w1, w0 - 0.1 * grad_w, rtol=1e-4, atol=1e-6)


def test_default_summaries_and_decay_fn():
    x, y, loss = _regression()
    step = tf.train.get_or_create_global_step()
    decay = lambda lr, gs: tf.train.exponential_decay(lr, gs, 10, 0.5)  # noqa: E731
    train_op = layers.optimize_loss(loss, step, 0.1, "SGD", learning_rate_decay_fn=decay, clip_gradients=1.0)
    merged = tf.summary.merge_all()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(20):
            sess.run(train_op, {x: XS, y: YS})
        tags = _tags(sess.run(merged, {x: XS, y: YS}))
        loss_now = sess.run(loss, {x: XS, y: YS})
    # the tag is the summary's unique name scope, as TF's: the variable OptimizeLoss/learning_rate took the name
    assert set(tags) == {"OptimizeLoss/learning_rate_1", "OptimizeLoss/loss",
                         "OptimizeLoss/global_norm/gradient_norm", "OptimizeLoss/global_norm/clipped_gradient_norm"}
    np.testing.assert_allclose(tags["OptimizeLoss/learning_rate_1"].simple_value, 0.1 * 0.5 ** 2, rtol=1e-6)
    np.testing.assert_allclose(tags["OptimizeLoss/loss"].simple_value, loss_now, rtol=1e-5)
    assert tags["OptimizeLoss/global_norm/clipped_gradient_norm"].simple_value <= 1.0 + 1e-6


def test_named_summaries_without_decay_and_errors():
    x, y, loss = _regression()
    step = tf.train.get_or_create_global_step()
    layers.optimize_loss(loss, step, 0.1, "Adam", summaries=["gradients", "gradient_norm", "learning_rate"],
                         name="opt")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        tags = _tags(sess.run(tf.summary.merge_all(), {x: XS, y: YS}))
    # no decay function: TF 1.15 writes no learning_rate summary
    assert set(tags) == {"opt/global_norm/gradient_norm", "opt/gradients/linear/weights_0",
                         "opt/gradients/linear/biases_0", "opt/gradient_norm/linear/weights_0",
                         "opt/gradient_norm/linear/biases_0"}
    assert tags["opt/gradients/linear/weights_0"].HasField("histo")
    with pytest.raises(ValueError, match="Summaries should be one of"):
        layers.optimize_loss(loss, step, 0.1, "SGD", summaries=["weights"])
    with pytest.raises(ValueError, match="Optimizer name should be one of"):
        layers.optimize_loss(loss, step, 0.1, "Nadam")
    with pytest.raises(ValueError, match="Learning rate is None, but should be specified if optimizer is string"):
        layers.optimize_loss(loss, step, None, "SGD")
    with pytest.raises(ValueError, match="Learning rate should be 0d Tensor or float"):
        layers.optimize_loss(loss, step, 1, "SGD")
    with pytest.raises(ValueError, match="Unknown type <class 'int'> for clip_gradients"):
        layers.optimize_loss(loss, step, 0.1, "SGD", clip_gradients=5)


def test_update_ops_multipliers_noise_and_no_global_step():
    x, y, loss = _regression()
    counter = tf.get_variable("counter", [], initializer=tf.zeros_initializer(), trainable=False)
    tf.add_to_collection(tf.GraphKeys.UPDATE_OPS, tf.assign_add(counter, 1.0))
    w, b = tf.model_variables()
    frozen = layers.optimize_loss(loss, None, 0.1, "SGD", gradient_multipliers={w: 0.0, "linear/biases:0": 0.0},
                                  name="frozen")
    noisy = layers.optimize_loss(loss, None, None, lambda: tf.train.GradientDescentOptimizer(0.0),
                                 gradient_noise_scale=1.0, name="noisy", increment_global_step=False)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        w0, b0 = sess.run([w, b])
        sess.run(frozen, {x: XS, y: YS})
        sess.run(noisy, {x: XS, y: YS})
        np.testing.assert_array_equal(sess.run(w), w0)  # multiplier 0 and a zero learning rate: no change
        np.testing.assert_array_equal(sess.run(b), b0)
        assert sess.run(counter) == 2.0  # the update ops ran with each train op
    assert tf.train.get_global_step() is None
    with pytest.raises(ValueError, match="global_step is required for learning_rate_decay_fn"):
        layers.optimize_loss(loss, None, 0.1, "SGD", learning_rate_decay_fn=lambda lr, gs: lr)


def test_summarize_tensors_activations_and_collections():
    x = tf.placeholder(tf.float32, [None, 3])
    h = layers.fully_connected(x, 4, outputs_collections=tf.GraphKeys.ACTIVATIONS, scope="hidden")
    mean = tf.reduce_mean(h, name="mean")
    ops = layers.summarize_tensors([mean, h, tf.constant([True])])
    assert ops[2] is None  # bool tensors are skipped
    acts = layers.summarize_activations()
    tf.add_to_collection(tf.GraphKeys.WEIGHTS, tf.model_variables()[0])
    layers.summarize_weights()
    layers.summarize_tensor(mean, tag="my_tag")
    xv = np.array([[1.0, -1.0, 2.0], [-3.0, 0.5, 1.0]], np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        tags = _tags(sess.run(tf.summary.merge_all(), {x: xv}))
        pre = sess.run(h.op.inputs[0], {x: xv})
    assert set(tags) == {"mean_summary", "hidden/Relu_summary", "hidden/Relu/zeros", "hidden/Relu/activation",
                         "hidden/weights_summary", "my_tag"}
    assert len(acts) == 1 and tags["hidden/Relu/activation"].HasField("histo")
    np.testing.assert_allclose(tags["hidden/Relu/zeros"].simple_value, (pre < 0).mean(), rtol=1e-6)
    np.testing.assert_allclose(tags["mean_summary"].simple_value, np.maximum(pre, 0).mean(), rtol=1e-5)
