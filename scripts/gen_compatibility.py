"""Generates docs/compatibility.md's list of TF 1.15 names tensorfleet does not have.

Input: tests/trainer/data/tf115_names.txt (TF 1.15's public names in tf.*, tf.nn.*, tf.train.*, tf.layers.*,
tf.losses.*, tf.math.*; see its header for the source). A name is present when the attribute exists on the
imported package. Every missing name is listed under the first matching reason in REASONS. The part of the doc
between the BEGIN/END markers is generated; the rest is hand-written. tests/trainer/test_compatibility_doc.py
fails when the doc is stale. Usage: `python scripts/gen_compatibility.py [--check]`.
"""
from __future__ import annotations

import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir))
NAMES = os.path.join(ROOT, "tests", "trainer", "data", "tf115_names.txt")
DOC = os.path.join(ROOT, "docs", "compatibility.md")
BEGIN = "<!-- BEGIN GENERATED: scripts/gen_compatibility.py -->"
END = "<!-- END GENERATED -->"

# (heading, regular expression on the full name "tf.ns.name"); the first match wins, the last one matches all.
REASONS = [
    ("Control flow and RNN extras not built yet (docs/control-flow.md and docs/rnn.md say what is)",
     r"^tf\.(cond|case|while_loop|switch_case|map_fn|scan|foldl|foldr|vectorized_map|TensorArray)$"
     r"|^tf\.nn\.(dynamic_rnn|static_rnn|bidirectional_dynamic_rnn|static_bidirectional_rnn|raw_rnn"
     r"|static_state_saving_rnn|rnn_cell)$"),
    ("Sequence examples and summary_iterator: not built yet",
     r"^tf\.(summary|python_io|Summary|SummaryMetadata|Event|HistogramProto|SessionLog|FixedLenFeature"
     r"|VarLenFeature|FixedLenSequenceFeature|parse_example|parse_single_example|parse_single_sequence_example"
     r"|GraphDef|import_graph_def|AttrValue|NameAttrList)$"
     r"|^tf\.train\.(Example|Feature|Features|FeatureList|FeatureLists|BytesList|FloatList|Int64List"
     r"|SequenceExample|Server|ClusterSpec|ClusterDef|JobDef|ServerDef|replica_device_setter"
     r"|summary_iterator)$"),
    ("Eager execution and TF2 machinery: tensorfleet runs graphs only",
     r"^tf\.(GradientTape|Module|TensorSpec|function|wrap_function|enable_eager_execution|enable_v2_behavior"
     r"|enable_v2_tensorshape|disable_v2_tensorshape|init_scope|variable_creator_scope|autograph"
     r"|custom_gradient|resource_variables_enabled|disable_resource_variables|VariableAggregation"
     r"|VariableSynchronization|CriticalSection|nondifferentiable_batch_function|experimental"
     r"|UnconnectedGradients|py_function)$|^tf\.train\.(Checkpoint|CheckpointManager|experimental)$"
     r"|^tf\.layers\.experimental$"),
    ("Queue-based input pipelines: LMDB files and priority queues (queues, readers, producers and batching are"
     " built: docs/train-loop.md)",
     r"Queue|Reader$|^tf\.train\.(batch|batch_join|maybe_.*|shuffle_batch.*|.*input_producer|limit_epochs"
     r"|match_filenames_once|start_queue_runners|add_queue_runner|queue_runner|Coordinator|LooperThread)$"
     r"|^tf\.(queue|ConditionalAccumulator.*|SparseConditionalAccumulator|matching_files|read_file|write_file)$"),
    ("Quantization and bfloat16",
     r"quantiz|fake_quant|^tf\.(qint\d+|quint\d+|dequantize|QUANTIZED_DTYPES|bfloat16|to_bfloat16)$"
     r"|^tf\.train\.do_quantize"),
    ("Complex numbers, FFT and signal processing",
     r"^tf\.(math\.)?(complex|conj|real|imag|angle|fft\w*|ifft\w*|to_complex\w+|spectral|signal)$"),
    ("Linear algebra not built yet (docs/trainer.md lists what is)",
     r"^tf\.(cholesky\w*|qr|svd|self_adjoint_eig\w*|matrix_(?!transpose)\w+|norm|cross|linalg)$"),
    ("Sparse and ragged tensors beyond tf.SparseTensor and its dense form",
     r"sparse|^tf\.(SparseFeature|IndexedSlices|convert_to_tensor_or_\w+|edit_distance|RaggedTensor|ragged"
     r"|serialize_\w+|deserialize_\w+)$|^tf\.nn\.embedding_lookup_sparse$"),
    ("Hooks, session helpers and checkpoint utilities beyond those docs/train-loop.md lists",
     r"^tf\.train\.(\w*Hook|\w*Session\w*|Scaffold|Supervisor|SecondOrStepTimer|basic_train_loop"
     r"|NanLossDuringTrainingError|CheckpointSaverListener|SaverDef|NewCheckpointReader|checkpoints_iterator"
     r"|generate_checkpoint_state_proto|get_checkpoint_mtimes|init_from_checkpoint|list_variables"
     r"|load_checkpoint|load_variable|remove_checkpoint|update_checkpoint_state|warm_start|VocabInfo"
     r"|export_meta_graph|import_meta_graph|write_graph)$"),
    ("Protocol buffers, build information and native-library loading",
     r"^tf\.(LogMessage|MetaGraphDef|TensorInfo|COMPILER_VERSION|CXX11_ABI_FLAG|GIT_VERSION"
     r"|GRAPH_DEF_VERSION\w*|MONOLITHIC_BUILD|VERSION|version|sysconfig|pywrap_tensorflow|user_ops|raw_ops"
     r"|load_\w*library|resource_loader|make_tensor_proto|make_ndarray|parse_tensor|serialize_tensor)$"),
    ("Other TF packages that are not goals (TPU, XLA, Lite, distribution strategies, ...)",
     r"^tf\.(estimator|lite|tpu|xla|distribute|distributions|profiler|feature_column|audio"
     r"|lookup|metrics|sets|test|graph_util|manip|bitwise|nest)$"),
    ("Optimizers and decays not implemented yet",
     r"^tf\.train\.(\w+Optimizer|sdca_\w+|\w+_decay\w*)$"),
    ("Not implemented yet (no reason beyond time: ask, or add it)", r".*"),
]


def load_names(path: str = NAMES) -> list:
    with open(path, encoding="utf-8") as f:
        return [line.strip() for line in f if line.strip() and not line.startswith("#")]


# Our own modules that Python binds on the package when they are imported and that share a TF name
# without being that API (tensorfleet.metrics is the Prometheus exporter, not TF's tf.metrics).
_INTERNAL_MODULES = {"tf.metrics": "tensorfleet.metrics"}


def _internal_module(obj, full: str) -> bool:
    return full in _INTERNAL_MODULES and getattr(obj, "__name__", None) == _INTERNAL_MODULES[full]


def missing_names(names: list) -> list:
    sys.path.insert(0, os.path.join(ROOT, "trainer"))
    import tensorfleet
    out, absent = [], object()
    for full in names:
        obj = tensorfleet
        for part in full.split(".")[1:]:
            obj = getattr(obj, part, absent)  # (a sentinel: tf.newaxis is None and present)
            if obj is absent or _internal_module(obj, full):
                obj = absent
                break
        if obj is absent:
            out.append(full)
    return out


def generated_section(names: list, missing: list) -> str:
    groups: dict = {heading: [] for heading, _ in REASONS}
    for full in missing:
        heading = next(h for h, rx in REASONS if re.search(rx, full))
        groups[heading].append(full)
    namespaces = sorted({n.rsplit(".", 1)[0] for n in names}, key=lambda s: (s != "tf", s))
    lines = [BEGIN, "", "| namespace | TF 1.15 names | in tensorfleet | missing |", "| --- | ---: | ---: | ---: |"]
    for ns in namespaces:
        total = sum(1 for n in names if n.rsplit(".", 1)[0] == ns)
        miss = sum(1 for n in missing if n.rsplit(".", 1)[0] == ns)
        lines.append(f"| `{ns}` | {total} | {total - miss} | {miss} |")
    lines.append(f"| all | {len(names)} | {len(names) - len(missing)} | {len(missing)} |")
    for heading, members in groups.items():
        if not members:
            continue
        lines += ["", f"### {heading}", "", ", ".join(f"`{m}`" for m in members)]
    lines += ["", END]
    return "\n".join(lines)


def render(doc_text: str, section: str) -> str:
    if BEGIN not in doc_text or END not in doc_text:
        raise SystemExit(f"{DOC} lacks the generated-section markers {BEGIN!r} / {END!r}")
    head, rest = doc_text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return head + section + tail


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    names = load_names()
    with open(DOC, encoding="utf-8") as f:
        current = f.read()
    wanted = render(current, generated_section(names, missing_names(names)))
    if "--check" in argv:
        if wanted != current:
            print(f"{DOC} is stale: run python scripts/gen_compatibility.py", file=sys.stderr)
            return 1
        return 0
    with open(DOC, "w", encoding="utf-8") as f:
        f.write(wanted)
    return 0


if __name__ == "__main__":
    sys.exit(main())
