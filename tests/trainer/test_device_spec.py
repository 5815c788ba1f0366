"""DeviceSpec grammar, merging, and tf.device / colocate_with scopes at op creation."""
import numpy as np
import pytest

import tensorfleet as tf
from tensorfleet.device_spec import DeviceSpec, merge


@pytest.mark.parametrize("text,fields,canonical", [
    ("/job:ps/replica:0/task:1/device:GPU:0", ("ps", 0, 1, "GPU", 0), "/job:ps/replica:0/task:1/device:GPU:0"),
    ("/cpu:0", (None, None, None, "CPU", 0), "/device:CPU:0"),
    ("/gpu:1", (None, None, None, "GPU", 1), "/device:GPU:1"),
    ("/GPU:1", (None, None, None, "GPU", 1), "/device:GPU:1"),
    ("/device:CPU:0", (None, None, None, "CPU", 0), "/device:CPU:0"),
    ("/device:gpu:3", (None, None, None, "GPU", 3), "/device:GPU:3"),
    ("/job:worker", ("worker", None, None, None, None), "/job:worker"),
    ("/job:worker/task:2", ("worker", None, 2, None, None), "/job:worker/task:2"),
    ("/task:2/job:worker", ("worker", None, 2, None, None), "/job:worker/task:2"),
    ("/job:ps/cpu:0", ("ps", None, None, "CPU", 0), "/job:ps/device:CPU:0"),
    ("/device:GPU:*", (None, None, None, "GPU", None), "/device:GPU:*"),
    ("/gpu", (None, None, None, "GPU", None), "/device:GPU:*"),
    ("cpu:0", (None, None, None, "CPU", 0), "/device:CPU:0"),
    ("", (None, None, None, None, None), ""),
    ("/replica:3", (None, 3, None, None, None), "/replica:3"),
])
def test_parse_and_to_string(text, fields, canonical):
    spec = DeviceSpec.from_string(text)
    assert (spec.job, spec.replica, spec.task, spec.device_type, spec.device_index) == fields
    assert spec.to_string() == canonical
    assert DeviceSpec.parse(canonical) == spec  # round trip


@pytest.mark.parametrize("text", ["/job:ps/task:x", "/gpu:a", "/device:GPU:0:1", "/foo:1", "/job:ps//foo:1",
                                  "/job:", "/task:-1", "/device:GPU:1.5", "/job:1ps"])
def test_malformed_names_raise_value_error_naming_the_text(text):
    with pytest.raises(ValueError) as e:
        DeviceSpec.from_string(text)
    assert repr(text) in str(e.value)


@pytest.mark.parametrize("text,same_as", [("//cpu:0", "/cpu:0"), ("/job:ps//task:0", "/job:ps/task:0"),
                                          ("/cpu:0/", "/cpu:0"), ("///", ""), ("/job:worker//replica:0//gpu:1",
                                                                            "/job:worker/replica:0/gpu:1")])
def test_empty_components_are_ignored_as_tf_does(text, same_as):
    """TF's DeviceSpec.parse_from_string skips empty components (a multi-GPU CNN builds '/' + '/cpu:0')."""
    assert DeviceSpec.from_string(text) == DeviceSpec.from_string(same_as)


def test_device_scope_with_an_empty_component_places_the_op():
    with tf.device("/" + "/cpu:0"):
        c = tf.constant(1.0)
    assert c.device == "/device:CPU:0"
    with tf.Session() as sess:
        assert sess.run(c) == 1.0


def test_case_insensitive_device_type():
    assert DeviceSpec.from_string("/Device:Gpu:0") == DeviceSpec.from_string("/device:GPU:0")
    assert DeviceSpec(device_type="cpu", device_index=0).to_string() == "/device:CPU:0"


def test_merge_inner_fields_override_outer():
    outer = DeviceSpec.from_string("/job:ps/replica:0/task:1/device:CPU:0")
    inner = DeviceSpec.from_string("/gpu:1")
    assert outer.merge(inner).to_string() == "/job:ps/replica:0/task:1/device:GPU:1"
    assert merge("/job:ps/task:1", "/job:worker").to_string() == "/job:worker/task:1"
    assert merge("/job:ps/task:1", "").to_string() == "/job:ps/task:1"
    assert merge(None, "/cpu:0").to_string() == "/device:CPU:0"


def test_matches_partial_spec():
    full = DeviceSpec.from_string("/job:localhost/replica:0/task:0/device:GPU:1")
    assert DeviceSpec.from_string("/gpu:1").matches(full)
    assert DeviceSpec.from_string("/job:localhost").matches(full)
    assert not DeviceSpec.from_string("/gpu:0").matches(full)
    assert not DeviceSpec.from_string("/job:ps").matches(full)


# -- device scopes ---------------------------------------------------------------
def test_nested_scopes_innermost_wins_field_by_field():
    with tf.device("/job:ps/task:1/cpu:0"):
        a = tf.constant(1.0, name="a")
        with tf.device("/gpu:0"):
            b = tf.constant(1.0, name="b")
            with tf.device("/job:worker"):
                c = tf.constant(1.0, name="c")
        with tf.device(""):  # an empty spec changes nothing
            d = tf.constant(1.0, name="d")
    assert a.device == "/job:ps/task:1/device:CPU:0"
    assert b.device == "/job:ps/task:1/device:GPU:0"
    assert c.device == "/job:worker/task:1/device:GPU:0"
    assert d.device == "/job:ps/task:1/device:CPU:0"


def test_device_function_receives_the_op():
    seen = []

    def fn(op):
        seen.append(op.type)
        return "/gpu:1" if op.type == "MatMul" else "/cpu:0"

    with tf.device("/job:worker"):
        with tf.device(fn):
            x = tf.constant(np.ones((2, 2), np.float32), name="x")
            y = tf.matmul(x, x, name="y")
    assert "Const" in seen and "MatMul" in seen
    assert x.device == "/job:worker/device:CPU:0"  # the outer string scope still merges under the function
    assert y.device == "/job:worker/device:GPU:1"


def test_device_none_clears_outer_scopes():
    with tf.device("/job:ps/gpu:0"):
        with tf.device(None):
            a = tf.constant(1.0, name="a")
            with tf.device("/cpu:0"):
                b = tf.constant(1.0, name="b")
    assert a.device == ""
    assert b.device == "/device:CPU:0"


def test_colocate_with_shares_group_and_device():
    with tf.device("/gpu:1"):
        a = tf.constant(1.0, name="a")
    with tf.device("/cpu:0"):
        with tf.colocate_with(a):
            b = tf.identity(a, name="b")
    assert b.op.colocation_groups() == [b"loc:@a"]
    assert b.device == "/device:GPU:1"
    assert a.op.colocation_groups() == [b"loc:@a"]
    # TF keeps the group as the `_class` attr (a list of bytes) of the colocated op only
    assert b.op.get_attr("_class") == [b"loc:@a"]
    with pytest.raises(ValueError, match="_class"):
        a.op.get_attr("_class")


def test_variable_read_assign_initializer_colocated_with_variable():
    with tf.device("/gpu:0"):
        v = tf.Variable(np.zeros(3, np.float32), name="v")
    with tf.device("/cpu:0"):
        read = v.read_value()
        upd = v.assign_add(np.ones(3, np.float32))
        asg = tf.assign(v, np.ones(3, np.float32))
    for op in (v.initializer, read.op, upd.op, asg.op):
        assert op.colocation_groups() == [b"loc:@v"], op.name
        assert op.device == "/device:GPU:0", op.name
