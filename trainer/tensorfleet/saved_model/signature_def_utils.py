"""`tf.saved_model.signature_def_utils`: SignatureDef builders and TF Serving's validity rules (TF 1.15).

`predict_signature_def` (any inputs/outputs), `classification_signature_def` (string examples in; string
classes and/or float scores out), `regression_signature_def` (string examples in; float predictions out),
`build_signature_def`, `is_valid_signature` (whether TF Serving's Predict, Classify or Regress API can serve
it). Argument checks and messages as TF's signature_def_utils_impl.py.
"""
from __future__ import annotations

from ..graph import Tensor
from ..protos import types_pb2
from ..protos.meta_graph_pb2 import SignatureDef
from . import signature_constants as sc
from .utils import build_tensor_info, build_tensor_info_from_op

__all__ = ["build_signature_def", "classification_signature_def", "predict_signature_def",
           "regression_signature_def", "is_valid_signature"]


def build_signature_def(inputs=None, outputs=None, method_name=None) -> SignatureDef:
    """A SignatureDef from maps of names to TensorInfo and a method name."""
    sig = SignatureDef()
    for key, info in (inputs or {}).items():
        sig.inputs[key].CopyFrom(info)
    for key, info in (outputs or {}).items():
        sig.outputs[key].CopyFrom(info)
    if method_name is not None:
        sig.method_name = method_name
    return sig


def regression_signature_def(examples, predictions) -> SignatureDef:
    if examples is None:
        raise ValueError("Regression examples cannot be None.")
    if not isinstance(examples, Tensor):
        raise ValueError("Regression examples must be a string Tensor.")
    if predictions is None:
        raise ValueError("Regression predictions cannot be None.")
    inp = build_tensor_info(examples)
    if inp.dtype != types_pb2.DT_STRING:
        raise ValueError("Regression examples must be a string Tensor.")
    out = build_tensor_info(predictions)
    if out.dtype != types_pb2.DT_FLOAT:
        raise ValueError("Regression output must be a float Tensor.")
    return build_signature_def({sc.REGRESS_INPUTS: inp}, {sc.REGRESS_OUTPUTS: out}, sc.REGRESS_METHOD_NAME)


def classification_signature_def(examples, classes, scores) -> SignatureDef:
    if examples is None:
        raise ValueError("Classification examples cannot be None.")
    if not isinstance(examples, Tensor):
        raise ValueError("Classification examples must be a string Tensor.")
    if classes is None and scores is None:
        raise ValueError("Classification classes and scores cannot both be None.")
    inp = build_tensor_info(examples)
    if inp.dtype != types_pb2.DT_STRING:
        raise ValueError("Classification examples must be a string Tensor.")
    outputs = {}
    if classes is not None:
        info = build_tensor_info(classes)
        if info.dtype != types_pb2.DT_STRING:
            raise ValueError("Classification classes must be a string Tensor.")
        outputs[sc.CLASSIFY_OUTPUT_CLASSES] = info
    if scores is not None:
        info = build_tensor_info(scores)
        if info.dtype != types_pb2.DT_FLOAT:
            raise ValueError("Classification scores must be a float Tensor.")
        outputs[sc.CLASSIFY_OUTPUT_SCORES] = info
    return build_signature_def({sc.CLASSIFY_INPUTS: inp}, outputs, sc.CLASSIFY_METHOD_NAME)


def predict_signature_def(inputs, outputs) -> SignatureDef:
    if not inputs:
        raise ValueError("Prediction inputs cannot be None or empty.")
    if not outputs:
        raise ValueError("Prediction outputs cannot be None or empty.")
    return build_signature_def({k: build_tensor_info(t) for k, t in inputs.items()},
                               {k: build_tensor_info(t) for k, t in outputs.items()}, sc.PREDICT_METHOD_NAME)


def op_signature_def(op, key: str) -> SignatureDef:
    """A signature whose one output names `op` (the init/train op signatures)."""
    return build_signature_def(outputs={key: build_tensor_info_from_op(op)})


def _is_valid_predict(sig) -> bool:
    return sig.method_name == sc.PREDICT_METHOD_NAME and bool(sig.inputs) and bool(sig.outputs)


def _is_valid_regression(sig) -> bool:
    return (sig.method_name == sc.REGRESS_METHOD_NAME and set(sig.inputs) == {sc.REGRESS_INPUTS}
            and sig.inputs[sc.REGRESS_INPUTS].dtype == types_pb2.DT_STRING
            and set(sig.outputs) == {sc.REGRESS_OUTPUTS}
            and sig.outputs[sc.REGRESS_OUTPUTS].dtype == types_pb2.DT_FLOAT)


def _is_valid_classification(sig) -> bool:
    if sig.method_name != sc.CLASSIFY_METHOD_NAME or set(sig.inputs) != {sc.CLASSIFY_INPUTS}:
        return False
    if sig.inputs[sc.CLASSIFY_INPUTS].dtype != types_pb2.DT_STRING:
        return False
    allowed = {sc.CLASSIFY_OUTPUT_CLASSES: types_pb2.DT_STRING, sc.CLASSIFY_OUTPUT_SCORES: types_pb2.DT_FLOAT}
    if not sig.outputs or set(sig.outputs) - set(allowed):
        return False
    return all(sig.outputs[k].dtype == dt for k, dt in allowed.items() if k in sig.outputs)


def is_valid_signature(signature_def) -> bool:
    """Whether TF Serving can serve this SignatureDef (Classify, Regress or Predict)."""
    if signature_def is None:
        return False
    return (_is_valid_classification(signature_def) or _is_valid_regression(signature_def)
            or _is_valid_predict(signature_def))
