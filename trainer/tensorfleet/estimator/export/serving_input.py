"""What an `Estimator.export_saved_model` `serving_input_receiver_fn` returns, and TF's two builders (TF 1.15).

`ServingInputReceiver(features, receiver_tensors, receiver_tensors_alternatives=None)`: the features the
model_fn gets and the tensors a client feeds (a bare tensor becomes `{"feature": t}` / `{"input": t}`);
`TensorServingInputReceiver` hands a single feature tensor through as is.
`build_parsing_serving_input_receiver_fn(feature_spec)`: a string placeholder `input_example_tensor` of
serialized tf.Examples (receiver key `examples`) parsed with `tf.parse_example`;
`build_raw_serving_input_receiver_fn(features)`: one placeholder per feature, named like it, with a
batch dimension of `default_batch_size`.
"""
from __future__ import annotations

import collections

from ... import dtypes as _dtypes
from ...graph import Tensor
from ...ops import array_ops
from ...ops.parsing_ops import parse_example
from ...ops.string_ops import SparseTensor
from ...tensor_shape import TensorShape

__all__ = ["ServingInputReceiver", "TensorServingInputReceiver", "build_parsing_serving_input_receiver_fn",
           "build_raw_serving_input_receiver_fn"]

SINGLE_FEATURE_DEFAULT_NAME = "feature"
SINGLE_RECEIVER_DEFAULT_NAME = "input"
_DEFAULT_NAMES = {"feature": SINGLE_FEATURE_DEFAULT_NAME, "receiver_tensor": SINGLE_RECEIVER_DEFAULT_NAME,
                  "receiver_tensors_alternative": SINGLE_RECEIVER_DEFAULT_NAME}


def _check_tensor(tensor, name, error_label="feature"):
    if not isinstance(tensor, (Tensor, SparseTensor)):
        fmt_name = f" {name}" if name else ""
        raise ValueError(f"{error_label}{fmt_name} must be a Tensor or SparseTensor.")


def _check_key(name, error_label, allow_ints):
    if not isinstance(name, str):
        if not allow_ints:
            raise ValueError(f"{error_label} keys must be strings: {name}.")
        if not isinstance(name, int):
            raise ValueError(f"{error_label} keys must be strings or ints: {name}.")


def wrap_and_check_input_tensors(tensors, field_name, allow_int_keys=False) -> dict:
    if tensors is None:
        raise ValueError(f"{field_name}s must be defined.")
    if not isinstance(tensors, dict):
        tensors = {_DEFAULT_NAMES[field_name]: tensors}
    for name, tensor in tensors.items():
        _check_key(name, field_name, allow_int_keys)
        _check_tensor(tensor, name, field_name)
    return tensors


class ServingInputReceiver(collections.namedtuple("ServingInputReceiver", ["features", "receiver_tensors",
                                                                           "receiver_tensors_alternatives"])):
    """`tf.estimator.export.ServingInputReceiver(features, receiver_tensors, receiver_tensors_alternatives=None)`."""

    def __new__(cls, features, receiver_tensors, receiver_tensors_alternatives=None):
        features = wrap_and_check_input_tensors(features, "feature", allow_int_keys=True)
        receiver_tensors = wrap_and_check_input_tensors(receiver_tensors, "receiver_tensor")
        if receiver_tensors_alternatives is not None:
            if not isinstance(receiver_tensors_alternatives, dict):
                raise ValueError(f"receiver_tensors_alternatives must be a dict: {receiver_tensors_alternatives}.")
            for name, alt in list(receiver_tensors_alternatives.items()):
                receiver_tensors_alternatives[name] = wrap_and_check_input_tensors(alt, "receiver_tensors_alternative")
        return super().__new__(cls, features, receiver_tensors, receiver_tensors_alternatives)


class TensorServingInputReceiver(collections.namedtuple("TensorServingInputReceiver", [
        "features", "receiver_tensors", "receiver_tensors_alternatives"])):
    """`tf.estimator.export.TensorServingInputReceiver`: one feature tensor, passed to the model_fn as is."""

    def __new__(cls, features, receiver_tensors, receiver_tensors_alternatives=None):
        if features is None:
            raise ValueError("features must be defined.")
        _check_tensor(features, None)
        receiver = ServingInputReceiver(features, receiver_tensors, receiver_tensors_alternatives)
        return super().__new__(cls, receiver.features[SINGLE_FEATURE_DEFAULT_NAME], receiver.receiver_tensors,
                               receiver.receiver_tensors_alternatives)


def build_parsing_serving_input_receiver_fn(feature_spec, default_batch_size=None):
    """A serving_input_receiver_fn that parses serialized tf.Examples fed as `examples` by `feature_spec`."""

    def serving_input_receiver_fn():
        serialized = array_ops.placeholder(_dtypes.string, [default_batch_size], name="input_example_tensor")
        return ServingInputReceiver(parse_example(serialized, feature_spec), {"examples": serialized})

    return serving_input_receiver_fn


def _placeholder_from_tensor(t, default_batch_size=None):
    shape = TensorShape([default_batch_size]).concatenate(t.shape[1:])
    name = t.op.name if isinstance(t, Tensor) else None
    return array_ops.placeholder(t.dtype, shape, name=name)


def build_raw_serving_input_receiver_fn(features, default_batch_size=None):
    """A serving_input_receiver_fn whose receiver tensors are placeholders shaped like `features` (a dict of
    string to Tensor), fed directly."""

    def serving_input_receiver_fn():
        receiver = {name: _placeholder_from_tensor(t, default_batch_size) for name, t in features.items()}
        return ServingInputReceiver(receiver, receiver)

    return serving_input_receiver_fn
