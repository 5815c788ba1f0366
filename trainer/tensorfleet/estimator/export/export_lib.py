"""How an Estimator's export outputs become a SavedModel's signatures and directory name (TF 1.15's export_lib).

`get_export_outputs` checks a PREDICT EstimatorSpec's `export_outputs` (a dict of ExportOutput; None: one
PredictOutput of the predictions) and names the default serving signature (`serving_default`: the only output,
else one must have that key). `build_all_signature_defs` makes one SignatureDef per export output (and per
receiver alternative, `<alternative>:<output>`), leaving out, with TF's log lines, the ones TF Serving
cannot serve or whose outputs need a placeholder that is not an input. Exports go to
`<export_dir_base>/<seconds since the epoch>`, written under `temp-<that>` and renamed when whole.
"""
from __future__ import annotations

import os
import time

from ... import tf_logging as logging
from ...graph import Operation
from ...ops.string_ops import SparseTensor
from ...saved_model import signature_constants, signature_def_utils, tag_constants
from .export_output import ExportOutput, PredictOutput
from .serving_input import SINGLE_RECEIVER_DEFAULT_NAME

__all__ = ["get_export_outputs", "build_all_signature_defs", "get_timestamped_export_dir", "get_temp_export_dir"]

SERVING_TAGS = [tag_constants.SERVING]
MAX_DIRECTORY_CREATION_ATTEMPTS = 10
_FRIENDLY = {signature_constants.CLASSIFY_METHOD_NAME: "Classify", signature_constants.REGRESS_METHOD_NAME: "Regress",
             signature_constants.PREDICT_METHOD_NAME: "Predict"}


def get_export_outputs(export_outputs, predictions) -> dict:
    """Checks `export_outputs` or makes the default one; adds `serving_default` when there is one output."""
    if export_outputs is None:
        export_outputs = {signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY: PredictOutput(predictions)}
    if not isinstance(export_outputs, dict):
        raise TypeError(f"export_outputs must be dict, given: {export_outputs}")
    for v in export_outputs.values():
        if not isinstance(v, ExportOutput):
            raise TypeError(f"Values in export_outputs must be ExportOutput objects. Given: {export_outputs}")
    export_outputs = dict(export_outputs)
    if len(export_outputs) == 1:
        (key, value), = export_outputs.items()
        if key != signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY:
            export_outputs[signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY] = value
    if len(export_outputs) > 1 and signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY not in export_outputs:
        raise ValueError("Multiple export_outputs were provided, but none of them is specified as the default.  Do "
                         "this by naming one of them with signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY.")
    return export_outputs


def _ensure_servable(input_tensors, signature) -> None:
    """ValueError when an output needs a placeholder that is not one of the signature's inputs."""
    inputs: set = set()
    for t in input_tensors:  # a SparseTensor input: its three tensors
        inputs.update(tuple(t) if isinstance(t, SparseTensor) else (t,))
    graph = next(iter(inputs)).graph
    stack = [graph.get_tensor_by_name(info.name).op for info in signature.outputs.values() if ":" in info.name]
    seen: set = set()
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        if op.type == "Placeholder" and not all(o in inputs for o in op.outputs):
            raise ValueError(f"The signature's input tensors {sorted(t.name for t in inputs)} are insufficient to "
                             f"compute its outputs because of the dependency on `{op.name}` which is not given as a "
                             f"signature input")
        stack.extend(t.op for t in op.inputs if t not in inputs)
        stack.extend(c for c in op.control_inputs if isinstance(c, Operation))


def _signatures_for(receiver, export_outputs, prefix: str, out: dict, excluded: dict) -> None:
    if not isinstance(receiver, dict):
        receiver = {SINGLE_RECEIVER_DEFAULT_NAME: receiver}
    for key, output in export_outputs.items():
        name = f"{prefix}{key or 'None'}"
        try:
            sig = output.as_signature_def(receiver)
            _ensure_servable(list(receiver.values()), sig)
            out[name] = sig
        except ValueError as e:
            excluded[name] = str(e)


def build_all_signature_defs(receiver_tensors, export_outputs, receiver_tensors_alternatives=None,
                             serving_only=True) -> dict:
    """{signature key: SignatureDef} for every export output (and receiver alternative) TF Serving can serve."""
    if export_outputs is None or not isinstance(export_outputs, dict):
        raise ValueError(f"export_outputs must be a dict and not{type(export_outputs)}")
    signatures: dict = {}
    excluded: dict = {}
    _signatures_for(receiver_tensors, export_outputs, "", signatures, excluded)
    for alt_name, alt in (receiver_tensors_alternatives or {}).items():
        _signatures_for(alt, export_outputs, f"{alt_name or 'None'}:", signatures, excluded)
    _log_signature_report(signatures, excluded)
    if serving_only:
        signatures = {k: v for k, v in signatures.items() if signature_def_utils.is_valid_signature(v)}
    return signatures


def _log_signature_report(signatures: dict, excluded: dict) -> None:
    by_method: dict = {name: [] for name in _FRIENDLY.values()}
    for key, sig in signatures.items():
        by_method.setdefault(_FRIENDLY.get(sig.method_name, sig.method_name), []).append(key)
    for method, keys in by_method.items():
        logging.info("Signatures INCLUDED in export for %s: %s", method, keys if keys else "None")
    if excluded:
        logging.info("Signatures EXCLUDED from export because they cannot be be served via TensorFlow Serving APIs:")
        for key, message in excluded.items():
            logging.info("'%s' : %s", key, message)
    if not signatures:
        logging.warning("Export includes no signatures!")
    elif signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY not in signatures:
        logging.warning("Export includes no default signature!")


def get_timestamped_export_dir(export_dir_base) -> str:
    """`<export_dir_base>/<seconds since the epoch>` that does not exist yet (waits a second on a clash, 10 tries)."""
    for attempt in range(MAX_DIRECTORY_CREATION_ATTEMPTS):
        result = os.path.join(os.fsdecode(export_dir_base), str(int(time.time())))
        if not os.path.exists(result):
            return result
        time.sleep(1)
        logging.warning("Directory %s already exists; retrying (attempt %d/%d)", result, attempt + 1,
                        MAX_DIRECTORY_CREATION_ATTEMPTS)
    raise RuntimeError(f"Failed to obtain a unique export directory name after {MAX_DIRECTORY_CREATION_ATTEMPTS} "
                       f"attempts.")


def get_temp_export_dir(timestamped_export_dir) -> str:
    """`<dir>/temp-<timestamp>`: TF Serving ignores names that are not numbers."""
    dirname, basename = os.path.split(os.fsdecode(timestamped_export_dir))
    return os.path.join(dirname, f"temp-{basename}")
