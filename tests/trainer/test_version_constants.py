"""TF 1.15's build constants (`tensorflow/python/framework/versions.py`): names, types and the form of values."""
import re

import tensorfleet as tf


def test_build_constants_have_tf_115_names_and_types():
    assert tf.VERSION == tf.version.VERSION == tf.__version__ == "1.15.0"
    assert tf.COMPILER_VERSION == tf.version.COMPILER_VERSION == tf.__compiler_version__
    assert isinstance(tf.COMPILER_VERSION, str) and tf.COMPILER_VERSION
    # TF 1.15's pip builds: ints 0, not bools
    assert tf.CXX11_ABI_FLAG == tf.__cxx11_abi_flag__ == 0 and type(tf.CXX11_ABI_FLAG) is int
    assert tf.MONOLITHIC_BUILD == tf.__monolithic_build__ == 0 and type(tf.MONOLITHIC_BUILD) is int
    assert (tf.GRAPH_DEF_VERSION, tf.GRAPH_DEF_VERSION_MIN_CONSUMER, tf.GRAPH_DEF_VERSION_MIN_PRODUCER) == (119, 0, 0)
    assert tf.version.GRAPH_DEF_VERSION == 119


def test_git_version_has_git_describe_form_and_names_the_runtime():
    """TF's is `git describe` of its build, "v1.15.0-rc3-22-g590d6ee"; Kubeflow's tf_smoke.py logs it first."""
    assert tf.__git_version__ == tf.GIT_VERSION == tf.version.GIT_VERSION
    assert re.fullmatch(r"v1\.15\.0-tensorfleet-\S+", tf.GIT_VERSION), tf.GIT_VERSION
    assert tf.GIT_VERSION.endswith(tf.version.TENSORFLEET_VERSION)


def test_graph_defs_carry_the_producer_version():
    tf.constant(1.0)
    assert tf.get_default_graph().as_graph_def().versions.producer == tf.GRAPH_DEF_VERSION
