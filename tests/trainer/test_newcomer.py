"""Newcomer polish (issue 9, item 9): the Makefile's output, tf.__version__, and docs/trainer.md in step
with the code."""
import os
import re
import shutil
import subprocess
import sys

import pytest

import tensorfleet as tf

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_version_is_tf_115_and_the_package_version_is_separate():
    assert tf.__version__ == tf.VERSION == tf.version.VERSION == tf.compat.v1.__version__ == "1.15.0"
    assert tf.__version__.startswith("1.")  # what TF1 scripts check
    pkg = tf.version.TENSORFLEET_VERSION
    assert re.fullmatch(r"\d+(\.\d+)*([.+-]?\w+)*", pkg), pkg
    assert tf.version.GIT_VERSION == tf.GIT_VERSION == tf.__git_version__ == f"v1.15.0-tensorfleet-{pkg}"
    with pytest.raises(AttributeError):
        tf.version.NO_SUCH_VERSION  # noqa: B018


def test_trainer_reference_page_matches_the_code():
    """docs/trainer.md's listing is regenerated from the package in a fresh interpreter and must be equal."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [os.path.join(ROOT, "trainer"),
                                                                     os.environ.get("PYTHONPATH")])))
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_trainer_reference.py"), "--check"],
                       capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr


def test_trainer_reference_lists_every_namespace_name():
    """Independent of the generator: each name of a few namespaces appears in the page, and vice versa the
    page lists no tf.train name that does not exist."""
    with open(os.path.join(ROOT, "docs", "trainer.md"), encoding="utf-8") as f:
        doc = f.read()
    for ns in (tf.train, tf.nn, tf.debugging, tf.math, tf.losses, tf.layers):
        section = doc.split(f"### `{ns.__name__.replace('tensorfleet', 'tf')}`", 1)[1].split("###", 1)[0]
        listed = set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", section))
        public = {n for n in dir(ns) if not n.startswith("_") and not isinstance(getattr(ns, n), type(os))}
        public = set(getattr(ns, "__all__", public))
        assert public <= listed, sorted(public - listed)
        assert listed <= public | {n for n in dir(ns)}, sorted(listed - public)
    for name in ("check_numerics", "add_check_numerics_ops", "verify_tensor_all_finite", "Saver"):
        assert f"`{name}`" in doc


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_makefile_fetches_once_echoes_no_comments_and_quiets_pip(tmp_path):
    out = subprocess.run(["make", "-n", "-B", "demo", f"VENV={tmp_path / 'venv'}"], cwd=ROOT, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert not [ln for ln in lines if ln.lstrip().startswith("#")], lines
    assert sum("tensorfleet.datasets fetch" in ln for ln in lines) == 1, lines
    pip = [ln for ln in lines if " -m pip " in ln]
    assert pip and all("--disable-pip-version-check" in ln and " -q " in ln for ln in pip), pip
