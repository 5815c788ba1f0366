"""tf.cond / tf.case / tf.while_loop: forward values against numpy, gradients against finite differences.

Oracles: numpy loops computing the same recurrences, `gradcheck.check_gradients` (central differences in
float64), and TF 1.15's documented semantics (only the taken branch's stateful ops run, shape-invariant
errors, maximum_iterations, single loop variables returned bare).
"""
import collections

import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import check_gradients
from helpers import run


def test_cond_takes_one_branch_by_the_fed_predicate():
    x = tf.placeholder(tf.float32, [3])
    p = tf.placeholder(tf.bool, [])
    y = tf.cond(p, lambda: tf.square(x), lambda: x - 1.0)
    xv = np.array([1.0, -2.0, 3.0], np.float32)
    with tf.Session() as s:
        np.testing.assert_allclose(s.run(y, {x: xv, p: True}), xv ** 2)
        np.testing.assert_allclose(s.run(y, {x: xv, p: False}), xv - 1)


def test_cond_nested_structures_and_singleton_unpacking():
    a = tf.constant(2.0)
    pair = tf.cond(tf.constant(False), lambda: (a, {"k": a * 3}), lambda: (a + 1, {"k": a * 5}))
    one = tf.cond(tf.constant(True), lambda: [a * 7], lambda: [a])
    strict = tf.cond(tf.constant(True), lambda: [a * 7], lambda: [a], strict=True)
    v_pair, v_one, v_strict = run(pair, one, strict)
    assert v_pair[0] == 3.0 and v_pair[1]["k"] == 10.0
    assert v_one == 14.0 and v_strict == [14.0]


def test_cond_stateful_ops_run_only_in_the_taken_branch():
    v = tf.Variable(0.0)
    p = tf.placeholder(tf.bool, [])

    def bump(amount):
        def fn():
            with tf.control_dependencies([tf.assign_add(v, amount)]):
                return tf.identity(tf.constant(amount))
        return fn

    out = tf.cond(p, bump(1.0), bump(10.0))
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        assert s.run(out, {p: True}) == 1.0
        assert s.run(v) == 1.0  # the false branch's assign did not run
        s.run(out, {p: False})
        s.run(out, {p: True})
        assert s.run(v) == 12.0


def test_cond_print_only_on_taken_side(capfd):
    x = tf.constant([1.0, 2.0])
    p = tf.placeholder(tf.bool, [])
    out = tf.cond(p, lambda: tf.Print(x, [x], "TAKEN-TRUE"), lambda: tf.Print(x, [x], "TAKEN-FALSE"))
    with tf.Session() as s:
        s.run(out, {p: False})
    err = capfd.readouterr().err
    assert "TAKEN-FALSE" in err and "TAKEN-TRUE" not in err


def test_cond_respects_outer_control_dependencies():
    v = tf.Variable(1.0)
    with tf.control_dependencies([tf.assign(v, 5.0)]):
        out = tf.cond(tf.constant(True), lambda: tf.identity(tf.constant(1.0)), lambda: tf.constant(2.0))
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        s.run(out)
        assert s.run(v) == 5.0


def test_cond_rejects_python_bool_and_mismatched_branches():
    with pytest.raises(TypeError, match="Python bool"):
        tf.cond(True, lambda: tf.constant(1), lambda: tf.constant(2))
    with pytest.raises(TypeError, match="same type"):
        tf.cond(tf.constant(True), lambda: tf.constant(1), lambda: tf.constant(2.0))
    with pytest.raises(ValueError, match="same nested structure"):
        tf.cond(tf.constant(True), lambda: (tf.constant(1), tf.constant(1)), lambda: tf.constant(2))
    with pytest.raises(TypeError, match="callable"):
        tf.cond(tf.constant(True), 1, lambda: 2)


def test_cond_gradient_matches_finite_differences_on_both_sides():
    for flag in (True, False):
        def build(x, w, flag=flag):
            return tf.cond(tf.constant(flag), lambda: tf.tanh(tf.matmul(x, w)), lambda: x * tf.reduce_sum(w))
        check_gradients(build, [np.random.RandomState(1).randn(2, 2), np.random.RandomState(2).randn(2, 2)])


def test_nested_cond_gradient():
    def build(x):
        inner = lambda: tf.cond(tf.reduce_sum(x) > 0, lambda: tf.sin(x), lambda: tf.cos(x) * x)  # noqa: E731
        return tf.cond(tf.reduce_max(x) < 10.0, inner, lambda: x)
    check_gradients(build, [np.array([0.3, -0.7, 1.1])])
    check_gradients(build, [np.array([-0.3, -0.7, 0.1])])


def test_case_picks_first_true_and_default():
    x = tf.placeholder(tf.int32, [])
    out = tf.case([(tf.less(x, 0), lambda: tf.constant(-1)), (tf.equal(x, 0), lambda: tf.constant(0))],
                  default=lambda: tf.constant(1))
    with tf.Session() as s:
        assert [s.run(out, {x: v}) for v in (-5, 0, 7)] == [-1, 0, 1]


def test_case_without_default_asserts_last_predicate_and_exclusive():
    x = tf.placeholder(tf.int32, [])
    out = tf.case([(tf.less(x, 0), lambda: tf.constant(-1)), (tf.greater(x, 0), lambda: tf.constant(1))])
    excl = tf.case([(tf.less(x, 5), lambda: tf.constant(1)), (tf.less(x, 10), lambda: tf.constant(2))],
                   default=lambda: tf.constant(3), exclusive=True)
    with tf.Session() as s:
        assert s.run(out, {x: 3}) == 1 and s.run(out, {x: -3}) == -1
        with pytest.raises(tf.errors.InvalidArgumentError, match="None of conditions evaluated as True"):
            s.run(out, {x: 0})
        assert s.run(excl, {x: 7}) == 2
        with pytest.raises(tf.errors.InvalidArgumentError, match="exclusive"):
            s.run(excl, {x: 1})


def test_while_loop_matches_numpy_recurrence():
    x = tf.placeholder(tf.float32, [2, 2])
    w = tf.constant([[0.5, -0.2], [0.1, 0.9]], tf.float32)
    i, y = tf.while_loop(lambda i, y: i < 6, lambda i, y: (i + 1, tf.tanh(tf.matmul(y, w))), (tf.constant(0), x))
    xv = np.array([[1.0, 2.0], [-1.0, 0.5]], np.float32)
    ref = xv
    for _ in range(6):
        ref = np.tanh(ref @ np.array([[0.5, -0.2], [0.1, 0.9]], np.float32))
    with tf.Session() as s:
        iv, yv = s.run([i, y], {x: xv})
    assert iv == 6
    np.testing.assert_allclose(yv, ref, rtol=1e-5)


def test_while_loop_single_var_namedtuple_and_dict_structures():
    one = tf.while_loop(lambda v: v < 100, lambda v: v * 3, tf.constant(1))
    one_list = tf.while_loop(lambda v: v < 100, lambda v: [v * 3], [tf.constant(1)])
    Pt = collections.namedtuple("Pt", "a b")
    nt = tf.while_loop(lambda p: p.a < 5, lambda p: Pt(p.a + 1, p.b * 2.0), [Pt(tf.constant(0), tf.constant(1.0))])
    d = tf.while_loop(lambda s: s["n"] < 4, lambda s: {"n": s["n"] + 1, "acc": s["acc"] + tf.cast(s["n"], tf.float32)},
                      [{"n": tf.constant(0), "acc": tf.constant(0.0)}])
    same = tf.while_loop(lambda v: v < 2, lambda v: v + 1, [tf.constant(0)], return_same_structure=True)
    v_one, v_list, v_nt, v_d, v_same = run(one, one_list, nt, d, same)
    assert v_one == 243 and v_list == 243 and v_same == [2]
    assert v_nt[0] == 5 and v_nt[1] == 32.0
    assert v_d["n"] == 4 and v_d["acc"] == 6.0


def test_while_loop_maximum_iterations_and_zero_iterations():
    n = tf.placeholder(tf.int32, [])
    capped = tf.while_loop(lambda v: v < 1000, lambda v: v + 1, [tf.constant(0)], maximum_iterations=n)
    never = tf.while_loop(lambda v: v > 0, lambda v: v + 1, [tf.constant(-3)])
    with tf.Session() as s:
        assert s.run(capped, {n: 7}) == 7
        assert s.run(capped, {n: 0}) == 0
        assert s.run(never) == -3
    with pytest.raises(ValueError, match="maximum_iterations must be a scalar"):
        tf.while_loop(lambda v: v < 2, lambda v: v + 1, [tf.constant(0)], maximum_iterations=tf.constant([1, 2]))


def test_while_loop_shape_invariants():
    grow = lambda i, x: (i + 1, tf.concat([x, x], 0))  # noqa: E731
    with pytest.raises(ValueError, match="shape_invariants"):
        tf.while_loop(lambda i, x: i < 3, grow, [tf.constant(0), tf.ones([1])])
    with pytest.raises(ValueError, match="not compatible with the initial shape"):
        tf.while_loop(lambda i, x: i < 3, grow, [tf.constant(0), tf.ones([1])],
                      shape_invariants=[tf.TensorShape([]), tf.TensorShape([2])])
    i, x = tf.while_loop(lambda i, x: i < 3, grow, [tf.constant(0), tf.ones([1])],
                         shape_invariants=[tf.TensorShape([]), tf.TensorShape([None])], parallel_iterations=1,
                         swap_memory=True)
    assert x.shape.as_list() == [None]
    np.testing.assert_array_equal(run(x), np.ones(8))


def test_shape_invariant_must_cover_the_entry_shape_even_when_unknown():
    x = tf.placeholder(tf.float32, None)  # TF 1.15: an unknown entry shape is not <= a rank-1 invariant
    with pytest.raises(ValueError, match="enters the loop with shape <unknown>"):
        tf.while_loop(lambda i, x: i < 2, lambda i, x: (i + 1, tf.concat([x, x], 0)), [tf.constant(0), x],
                      shape_invariants=[tf.TensorShape([]), tf.TensorShape([None])], name="grower")
    _, y = tf.while_loop(lambda i, x: i < 2, lambda i, x: (i + 1, tf.concat([x, x], 0)), [tf.constant(0), x])
    assert run(y, feed={x: np.ones([2, 3], np.float32)}).shape == (8, 3)


def test_error_inside_a_body_names_the_body_node_and_the_loop():
    x = tf.placeholder(tf.float32, [None])
    out = tf.while_loop(lambda i, x: i < 3,
                        lambda i, x: (i + 1, tf.check_numerics(tf.log(x), "bad log")), [tf.constant(0), x],
                        name="logloop")
    with tf.Session() as s:
        with pytest.raises(tf.errors.InvalidArgumentError, match="bad log") as e:
            s.run(out, {x: np.array([-1.0], np.float32)})
    assert "logloop" in str(e.value)


def test_while_loop_reads_variables_and_outer_tensors():
    w = tf.Variable([[2.0]])
    x = tf.placeholder(tf.float32, [1, 1])
    out = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, tf.matmul(y, w) + x), [0, x])[1]
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        # y0 = 1; y <- 2y + 1 three times: 3, 7, 15
        assert s.run(out, {x: [[1.0]]})[0, 0] == 15.0


def test_while_gradient_matches_finite_differences():
    def build(x, w):
        _, y = tf.while_loop(lambda i, y: i < 4, lambda i, y: (i + 1, tf.sin(tf.matmul(y, w)) + x), [0, x])
        return y
    rs = np.random.RandomState(3)
    check_gradients(build, [rs.randn(2, 2) * 0.5, rs.randn(2, 2) * 0.5])


def test_while_gradient_with_maximum_iterations_and_dynamic_count():
    def build(x):
        return tf.while_loop(lambda y: tf.reduce_sum(y) < 50.0, lambda y: y * 1.7 + 0.1, [x],
                             maximum_iterations=5)
    check_gradients(build, [np.array([0.5, 0.2])])
    check_gradients(build, [np.array([20.0, 10.0])])  # stops by cond after 2 iterations


def test_nested_while_gradient_and_cond_inside_while():
    def build(x, w):
        def outer_body(i, y):
            _, z = tf.while_loop(lambda j, z: j < 3, lambda j, z: (j + 1, tf.tanh(z * w) + 0.1 * y), [0, y])
            z = tf.cond(tf.reduce_sum(z) > 0, lambda: z * w, lambda: z - w)
            return i + 1, z
        return tf.while_loop(lambda i, y: i < 3, outer_body, [0, x])[1]
    rs = np.random.RandomState(4)
    check_gradients(build, [rs.randn(3), rs.randn(3)])


def test_back_prop_false_stops_the_gradient():
    x = tf.placeholder(tf.float32, [])
    y = tf.while_loop(lambda v: v < 100.0, lambda v: v * 2.0, [x], back_prop=False)
    assert tf.gradients(y, x)[0] is None


def test_training_through_a_while_loop_lowers_the_loss():
    w = tf.Variable(0.1)
    y = tf.while_loop(lambda i, a: i < 5, lambda i, a: (i + 1, a * w + 1.0), [0, tf.constant(0.0)])[1]
    loss = tf.square(y - 3.0)
    step = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        first = s.run(loss)
        for _ in range(30):
            s.run(step)
        assert s.run(loss) < first * 0.1


def test_variables_created_inside_a_branch_live_outside_it():
    """TF's init_scope: get_variable / tf.layers inside a branch create the variable in the outer graph."""
    x = tf.placeholder(tf.float32, [2, 3])
    p = tf.placeholder(tf.bool, [])
    with tf.control_dependencies([tf.no_op(name="outer_dep")]):
        out = tf.cond(p, lambda: tf.layers.dense(x, 4, name="head"),
                      lambda: tf.matmul(x, tf.get_variable("alt", [3, 4], initializer=tf.ones_initializer())))
    names = sorted(v.op.name for v in tf.global_variables())
    assert names == ["alt", "head/bias", "head/kernel"]
    assert all(not v.initializer.control_inputs for v in tf.global_variables())
    xv = np.arange(6, dtype=np.float32).reshape(2, 3)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        k, b = s.run(["head/kernel:0", "head/bias:0"])
        np.testing.assert_allclose(s.run(out, {x: xv, p: True}), xv @ k + b, rtol=1e-5)
        np.testing.assert_allclose(s.run(out, {x: xv, p: False}), xv @ np.ones((3, 4)), rtol=1e-5)


def test_variable_whose_initial_value_depends_on_the_body_is_a_clear_error():
    with pytest.raises(ValueError, match="depends on that function"):
        tf.while_loop(lambda i: i < 2, lambda i: i + tf.cast(tf.Variable(tf.cast(i, tf.float32)), tf.int32), [0])


def test_control_dependency_on_an_outer_op_inside_a_branch():
    v = tf.Variable(0.0)
    bump = tf.assign_add(v, 1.0)

    def branch():
        with tf.control_dependencies([bump]):
            return tf.constant(3.0)
    out = tf.cond(tf.constant(True), branch, lambda: tf.constant(4.0))
    assert bump.op in out.op.control_inputs
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        assert s.run(out) == 3.0
        assert s.run(v) == 1.0


def test_second_derivative_through_cond():
    def build(x):
        return tf.cond(tf.reduce_sum(x) > 0, lambda: tf.sin(x) * x, lambda: x * x * x)
    from gradcheck import vjp
    check_gradients(vjp(build), [np.array([0.4, 0.3]), np.array([1.0, -2.0])])
    check_gradients(vjp(build), [np.array([-0.4, 0.3]), np.array([1.0, -2.0])])


def test_compat_v1_names():
    assert tf.compat.v1.while_loop is tf.while_loop and tf.compat.v1.cond is tf.cond
    assert tf.compat.v1.map_fn is tf.map_fn and tf.compat.v1.case is tf.case


def test_switch_case_runs_the_indexed_branch_or_default():
    i = tf.placeholder(tf.int32, [])
    fns = [lambda k=k: tf.constant(k * 10) for k in range(3)]
    plain = tf.switch_case(i, fns)
    with_default = tf.switch_case(i, fns, default=lambda: tf.constant(-1))
    with tf.Session() as s:
        assert [s.run(plain, {i: k}) for k in (0, 1, 2, 7, -1)] == [0, 10, 20, 20, 20]  # TF: out of range -> last
        assert [s.run(with_default, {i: k}) for k in (0, 2, 3)] == [0, 20, -1]


def test_error_inside_a_branch_names_the_branch_node_and_the_cond():
    x = tf.placeholder(tf.float32, [2])
    out = tf.cond(tf.constant(True), lambda: tf.check_numerics(x / 0.0, "inf in branch"), lambda: x, name="picker")
    with tf.Session() as s:
        with pytest.raises(tf.errors.InvalidArgumentError, match="inf in branch") as e:
            s.run(out, {x: [1.0, 2.0]})
    assert "then_branch of If 'picker'" in str(e.value)


def test_training_through_cond_with_layers_in_each_branch():
    x = tf.placeholder(tf.float32, [8, 2])
    p = tf.placeholder(tf.bool, [])
    y = tf.cond(p, lambda: tf.layers.dense(x, 1, name="a"), lambda: tf.layers.dense(x, 1, name="b"))
    target = tf.reduce_sum(x, axis=1, keepdims=True)
    loss = tf.reduce_mean(tf.square(y - target))
    grads = tf.gradients(loss, tf.trainable_variables())
    step = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    xv = np.random.RandomState(5).randn(8, 2).astype(np.float32)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        g_true = dict(zip([v.op.name for v in tf.trainable_variables()], s.run(grads, {x: xv, p: True})))
        assert not np.any(g_true["b/kernel"]) and np.any(g_true["a/kernel"])  # the untaken branch gets zeros
        first = s.run(loss, {x: xv, p: True})
        for _ in range(50):
            s.run(step, {x: xv, p: True})
        assert s.run(loss, {x: xv, p: True}) < 0.05 * first
