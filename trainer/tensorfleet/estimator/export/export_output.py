"""`tf.estimator.export.ExportOutput` and its kinds: what a model_fn's `export_outputs` map holds (TF 1.15).

Each turns into one SignatureDef of the exported SavedModel, given the serving input receiver's tensors:
`PredictOutput` (any named tensors: TF Serving's Predict API), `ClassificationOutput` (float scores and/or
string classes for one string input of serialized tf.Examples: Classify), `RegressionOutput` (a float value
for one string input: Regress). Checks and messages as TF's export_output.py.
"""
from __future__ import annotations

from ... import dtypes as _dtypes
from ...graph import Tensor
from ...saved_model import signature_def_utils

__all__ = ["ExportOutput", "PredictOutput", "ClassificationOutput", "RegressionOutput"]

_ONE_STRING_INPUT = ("{kind} signatures can only accept a single tensor input of type tf.string. Please check to "
                     "make sure that you have structured the serving_input_receiver_fn so that it creates a single "
                     "string placeholder. If your model function expects multiple inputs, then use "
                     "`tf.io.parse_example()` to parse the string into multiple tensors.\n Received: {got}")


class ExportOutput:
    """Represents an output of a model that can be served (a head's signature)."""

    _SEPARATOR_CHAR = "/"

    def as_signature_def(self, receiver_tensors):
        raise NotImplementedError

    def _check_output_key(self, key, error_label):
        if isinstance(key, tuple):
            key = self._SEPARATOR_CHAR.join(key)
        if not isinstance(key, str):
            raise ValueError(f"{error_label} output key must be a string; got {key}.")
        return key

    def _wrap_and_check_outputs(self, outputs, single_output_default_name, error_label=None):
        if not isinstance(outputs, dict):
            outputs = {single_output_default_name: outputs}
        out = {}
        for key, value in outputs.items():
            label = error_label or single_output_default_name
            key = self._check_output_key(key, label)
            if not isinstance(value, Tensor):
                raise ValueError(f"{label} output value must be a Tensor; got {value}.")
            out[key] = value
        return out


def _single_string_input(kind: str, receiver_tensors: dict):
    if len(receiver_tensors) != 1:
        raise ValueError(_ONE_STRING_INPUT.format(kind=kind, got=receiver_tensors))
    (_, examples), = receiver_tensors.items()
    if examples.dtype is not _dtypes.string:
        raise ValueError(_ONE_STRING_INPUT.format(kind=kind, got=receiver_tensors))
    return examples


class ClassificationOutput(ExportOutput):
    """`ClassificationOutput(scores=None, classes=None)`: float scores and/or string class labels."""

    def __init__(self, scores=None, classes=None):
        if scores is not None and not (isinstance(scores, Tensor) and scores.dtype.is_floating):
            raise ValueError(f"Classification scores must be a float32 Tensor; got {scores}")
        if classes is not None and not (isinstance(classes, Tensor) and classes.dtype is _dtypes.string):
            raise ValueError(f"Classification classes must be a string Tensor; got {classes}")
        if scores is None and classes is None:
            raise ValueError("At least one of scores and classes must be set.")
        self._scores, self._classes = scores, classes

    scores = property(lambda self: self._scores)
    classes = property(lambda self: self._classes)

    def as_signature_def(self, receiver_tensors):
        examples = _single_string_input("Classification", receiver_tensors)
        return signature_def_utils.classification_signature_def(examples, self.classes, self.scores)


class RegressionOutput(ExportOutput):
    """`RegressionOutput(value)`: a float tensor of predicted values."""

    def __init__(self, value):
        if not (isinstance(value, Tensor) and value.dtype.is_floating):
            raise ValueError(f"Regression output value must be a float32 Tensor; got {value}")
        self._value = value

    value = property(lambda self: self._value)

    def as_signature_def(self, receiver_tensors):
        examples = _single_string_input("Regression", receiver_tensors)
        return signature_def_utils.regression_signature_def(examples, self.value)


class PredictOutput(ExportOutput):
    """`PredictOutput(outputs)`: a Tensor (named `output`) or a dict of string to Tensor."""

    _SINGLE_OUTPUT_DEFAULT_NAME = "output"

    def __init__(self, outputs):
        self._outputs = self._wrap_and_check_outputs(outputs, self._SINGLE_OUTPUT_DEFAULT_NAME,
                                                     error_label="Prediction")

    outputs = property(lambda self: self._outputs)

    def as_signature_def(self, receiver_tensors):
        return signature_def_utils.predict_signature_def(receiver_tensors, self.outputs)
