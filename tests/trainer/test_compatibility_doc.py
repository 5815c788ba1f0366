"""docs/compatibility.md cannot drift: every TF 1.15 name in tests/trainer/data/tf115_names.txt is either
present in tensorfleet or listed in the doc as missing (and nothing present is listed)."""
import importlib.util
import os
import re

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))


def _generator():
    spec = importlib.util.spec_from_file_location("gen_compatibility",
                                                  os.path.join(ROOT, "scripts", "gen_compatibility.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_name_list_is_well_formed():
    gen = _generator()
    names = gen.load_names()
    assert len(names) == len(set(names)) and len(names) > 1000
    assert {n.rsplit(".", 1)[0] for n in names} == {"tf", "tf.nn", "tf.train", "tf.layers", "tf.losses", "tf.math"}
    for must in ("tf.placeholder", "tf.nn.conv2d", "tf.train.AdamOptimizer", "tf.layers.dense",
                 "tf.losses.softmax_cross_entropy", "tf.math.reduce_sum", "tf.string_split", "tf.arg_max"):
        assert must in names


def test_every_name_is_present_or_listed_as_missing():
    gen = _generator()
    names = gen.load_names()
    with open(gen.DOC, encoding="utf-8") as f:
        doc = f.read()
    section = doc.split(gen.BEGIN, 1)[1].split(gen.END, 1)[0]
    listed = set(re.findall(r"`(tf\.[\w.]+)`", section)) - {n for n in re.findall(r"\| `(tf[\w.]*)` \|", section)}
    missing = set(gen.missing_names(names))
    assert listed == missing, (f"docs/compatibility.md is stale (run python scripts/gen_compatibility.py): "
                               f"now present but listed: {sorted(listed - missing)}; missing but not listed: "
                               f"{sorted(missing - listed)}")


def test_doc_is_exactly_what_the_generator_writes():
    gen = _generator()
    names = gen.load_names()
    with open(gen.DOC, encoding="utf-8") as f:
        current = f.read()
    assert gen.render(current, gen.generated_section(names, gen.missing_names(names))) == current, \
        "docs/compatibility.md is stale: run python scripts/gen_compatibility.py"


def test_present_constants_and_dtypes_are_not_reported_missing():
    """Objects without __name__ (dtypes, tf.AUTO_REUSE, tf.newaxis = None) count as present; only our own
    tensorfleet.metrics exporter module would be excluded for the tf.metrics name, and TF's tf.metrics wins."""
    import tensorfleet as tf
    gen = _generator()
    probe = ["tf.float32", "tf.string", "tf.bool", "tf.AUTO_REUSE", "tf.newaxis", "tf.placeholder"]
    assert all(hasattr(tf, n.split(".")[1]) for n in probe)
    assert gen.missing_names(probe) == []
    import tensorfleet.metrics  # noqa: F401  (our Prometheus exporter module must not shadow TF's tf.metrics)
    assert callable(tf.metrics.accuracy) and gen.missing_names(["tf.metrics"]) == []
