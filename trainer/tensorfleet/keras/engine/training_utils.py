"""Data handling of `fit`/`evaluate`/`predict` on numpy arrays (TF 1.15's keras/engine/training_utils.py).

- `standardize_input_data` turns x / y (an array, a list or a dict by input/output name) into one array per
  model input/output, 1-D arrays becoming (n, 1), and checks their ranks and shapes (TF's messages).
- `standardize_weights` turns `class_weight` ({class: weight}, classes from argmax of one-hot targets, or the
  integer targets) and `sample_weight` into one weight per sample (their product when both are given).
- `make_batches`, `slice_arrays`, `batch_shuffle` (shuffle='batch': whole batches permuted, the last partial
  batch kept last).
- The aggregators: the epoch loss is the batch-size-weighted mean of the batch losses; metrics (stateful)
  are their last value; `predict` concatenates the batch outputs.
"""
from __future__ import annotations

import numpy as np

from ...graph import Tensor


def _is_tensor(x):
    return isinstance(x, Tensor)


def standardize_single_array(x, expected_shape=None):
    if x is None:
        return None
    if _is_tensor(x):
        return x
    x = np.asarray(x)
    if x.ndim == 1 and (expected_shape is None or len(expected_shape) != 1):
        x = np.expand_dims(x, 1)
    return x


def standardize_input_data(data, names, shapes=None, check_batch_axis=True, exception_prefix=""):
    """One array per name (see the module doc); ValueError naming the input/output on a mismatch."""
    if not names:
        if data is not None and hasattr(data, "__len__") and len(data) and not isinstance(data, dict):
            raise ValueError(f"Error when checking model {exception_prefix}: expected no data, but got: {data}")
        return []
    if data is None:
        return [None for _ in names]
    if isinstance(data, dict):
        try:
            data = [data[x] for x in names]
        except KeyError as e:
            raise ValueError(f'No data provided for "{e.args[0]}". Need data for each key in: {names}') from None
    elif isinstance(data, (list, tuple)):
        if isinstance(data[0], (list, tuple)):
            data = [np.asarray(d) for d in data]
        elif len(names) == 1 and isinstance(data[0], (float, int)):
            data = [np.asarray(data)]
        else:
            data = list(data)
    else:
        data = [data]
    if shapes is not None:
        data = [standardize_single_array(x, shape) for x, shape in zip(data, shapes)] + \
            [standardize_single_array(x) for x in data[len(shapes):]]
    else:
        data = [standardize_single_array(x) for x in data]
    if len(data) != len(names):
        if data and hasattr(data[0], "shape"):
            raise ValueError(f"Error when checking model {exception_prefix}: the list of Numpy arrays that you are "
                             f"passing to your model is not the size the model expected. Expected to see "
                             f"{len(names)} array(s), but instead got the following list of {len(data)} arrays: "
                             f"{str(data)[:200]}...")
        if len(names) > 1:
            raise ValueError(f"Error when checking model {exception_prefix}: you are passing a list as input to "
                             f"your model, but the model expects a list of {len(names)} Numpy arrays instead. The "
                             f"list you passed was: {str(data)[:200]}")
        raise TypeError(f"Error when checking model {exception_prefix}: data should be a Numpy array, or "
                        f"list/dict of Numpy arrays. Found: {str(data)[:200]}...")
    if shapes:
        _check_shapes(data, names, shapes, check_batch_axis, exception_prefix)
    return data


def _check_shapes(data, names, shapes, check_batch_axis, exception_prefix):
    for i, name in enumerate(names):
        if shapes[i] is None or data[i] is None:
            continue
        data_shape = tuple(data[i].shape.as_list()) if _is_tensor(data[i]) else data[i].shape
        shape = tuple(shapes[i])
        if len(data_shape) != len(shape):
            raise ValueError(f"Error when checking {exception_prefix}: expected {name} to have {len(shape)} "
                             f"dimensions, but got array with shape {data_shape}")
        ds, rs = (data_shape, shape) if check_batch_axis else (data_shape[1:], shape[1:])
        for dim, ref_dim in zip(ds, rs):
            if ref_dim != dim and ref_dim is not None and dim is not None:
                raise ValueError(f"Error when checking {exception_prefix}: expected {name} to have shape {rs} but "
                                 f"got array with shape {ds}")


def check_array_lengths(inputs, targets, weights=None):
    def lengths(arrays):
        return {y.shape[0] for y in arrays or [] if y is not None and not _is_tensor(y)}

    set_x, set_y, set_w = lengths(inputs), lengths(targets), lengths(weights)
    if len(set_x) > 1:
        raise ValueError("All input arrays (x) should have the same number of samples. Got array shapes: "
                         + str([x.shape for x in inputs]))
    if len(set_y) > 1:
        raise ValueError("All target arrays (y) should have the same number of samples. Got array shapes: "
                         + str([y.shape for y in targets]))
    if set_x and set_y and list(set_x)[0] != list(set_y)[0]:
        raise ValueError(f"Input arrays should have the same number of samples as target arrays. Found "
                         f"{list(set_x)[0]} input samples and {list(set_y)[0]} target samples.")
    if len(set_w) > 1:
        raise ValueError("All sample_weight arrays should have the same number of samples. Got array shapes: "
                         + str([w.shape for w in weights]))
    if set_y and set_w and list(set_y)[0] != list(set_w)[0]:
        raise ValueError(f"Sample_weight arrays should have the same number of samples as target arrays. Got "
                         f"{list(set_y)[0]} input samples and {list(set_w)[0]} target samples.")


def standardize_sample_or_class_weights(x_weight, output_names, weight_type):
    if x_weight is None or (isinstance(x_weight, (list, tuple)) and len(x_weight) == 0):
        return [None for _ in output_names]
    if len(output_names) == 1:
        if isinstance(x_weight, (list, tuple)) and len(x_weight) == 1:
            return list(x_weight)
        if isinstance(x_weight, dict) and output_names[0] in x_weight:
            return [x_weight[output_names[0]]]
        return [x_weight]
    if isinstance(x_weight, (list, tuple)):
        if len(x_weight) != len(output_names):
            raise ValueError(f"Provided `{weight_type}` was a list of {len(x_weight)} elements, but the model has "
                             f"{len(output_names)} outputs. You should provide one `{weight_type}`array per model "
                             f"output.")
        return list(x_weight)
    if isinstance(x_weight, dict):
        unknown = set(x_weight) - set(output_names)
        if unknown:
            raise ValueError(f"Unknown entries in {weight_type} dictionary: {sorted(unknown)}. Only expected "
                             f"following keys: {output_names}")
        return [x_weight.get(name) for name in output_names]
    raise TypeError(f"The model has multiple outputs, so `{weight_type}` should be either a list or a dict. "
                    f"Provided `{weight_type}` type not understood: {x_weight}")


def standardize_weights(y, sample_weight=None, class_weight=None, sample_weight_mode=None):
    """Per-sample weights from `sample_weight` and/or `class_weight` (None when neither is given)."""
    if isinstance(sample_weight, tuple):
        sample_weight = sample_weight[0]
    if sample_weight is not None:
        sample_weight = np.asarray(sample_weight)
    if sample_weight_mode is not None and sample_weight_mode != "samplewise":
        if sample_weight_mode != "temporal":
            raise ValueError('"sample_weight_mode should be None or "temporal". Found: ' + str(sample_weight_mode))
        if len(y.shape) < 3:
            raise ValueError(f"Found a sample_weight array for an input with shape {y.shape}. Timestep-wise sample "
                             "weighting (use of sample_weight_mode=\"temporal\") is restricted to outputs that are at "
                             "least 3D, i.e. that have a time dimension.")
        if sample_weight is not None and len(sample_weight.shape) != 2:
            raise ValueError(f"Found a sample_weight array with shape {sample_weight.shape}. In order to use "
                             "timestep-wise sample weighting, you should pass a 2D sample_weight array.")
    elif sample_weight is not None and len(sample_weight.shape) != 1:
        raise ValueError(f"Found a sample_weight array with shape {sample_weight.shape}. In order to use "
                         "timestep-wise sample weighting, you should pass a 2D sample_weight array.")
    if y is not None and sample_weight is not None and not _is_tensor(y):
        if len(sample_weight.shape) > len(y.shape):
            raise ValueError(f"Found a sample_weight with shape{sample_weight.shape}.Expected sample_weight with "
                             f"rank less than or equal to {len(y.shape)}")
        if y.shape[:sample_weight.ndim] != sample_weight.shape:
            raise ValueError(f"Found a sample_weight array with shape {sample_weight.shape} for an input with shape "
                             f"{y.shape}. sample_weight cannot be broadcast.")
    class_sample_weight = None
    if isinstance(class_weight, dict):
        if len(y.shape) > 2:
            raise ValueError("`class_weight` not supported for 3+ dimensional targets.")
        if len(y.shape) == 2:
            y_classes = np.argmax(y, axis=1) if y.shape[1] > 1 else np.reshape(y, y.shape[0])
        else:
            y_classes = y
        class_sample_weight = np.asarray([class_weight[cls] for cls in y_classes if cls in class_weight])
        if len(class_sample_weight) != len(y_classes):
            missing = set(y_classes.tolist()) - set(class_weight)
            raise ValueError(f"`class_weight` must contain all classes in the data. The classes {missing} exist in "
                             f"the data but not in `class_weight`.")
    if class_sample_weight is not None and sample_weight is not None:
        return class_sample_weight * sample_weight
    if sample_weight is not None:
        return sample_weight
    return class_sample_weight


def make_batches(size, batch_size):
    """[(start, end)] of ceil(size / batch_size) batches."""
    num_batches = int(np.ceil(size / float(batch_size)))
    return [(i * batch_size, min(size, (i + 1) * batch_size)) for i in range(num_batches)]


def slice_arrays(arrays, start=None, stop=None):
    """arrays[start:stop] (or arrays[indices] when `start` is a list/array of indices), None kept."""
    if arrays is None:
        return [None]
    if isinstance(start, (list, np.ndarray)):
        return [None if x is None else x[start] for x in arrays]
    return [None if x is None else x[start:stop] for x in arrays]


def batch_shuffle(index_array, batch_size):
    """Shuffles whole batches of indices; the trailing partial batch stays at the end."""
    batch_count = int(len(index_array) / batch_size)
    last_batch = index_array[batch_count * batch_size:]
    index_array = index_array[:batch_count * batch_size].reshape((batch_count, batch_size))
    np.random.shuffle(index_array)
    return np.append(index_array.flatten(), last_batch)


def check_num_samples(ins, batch_size=None, steps=None, steps_name="steps"):
    if steps is not None and batch_size is not None:
        raise ValueError(f"If {steps_name} is set, the `batch_size` must be None.")
    if steps is not None:
        return None
    if ins and hasattr(ins[0], "shape"):
        return int(ins[0].shape[0])
    return None


class MetricsAggregator:
    """Epoch results of a train/test loop: weighted mean loss, last value of each (stateful) metric."""

    def __init__(self, use_steps, num_samples=None, steps=None):
        self.use_steps, self.num_samples, self.steps = use_steps, num_samples, steps
        self.results: list = []

    def create(self, batch_outs):
        self.results = [0.0] * len(batch_outs)

    def aggregate(self, batch_outs, batch_start=None, batch_end=None):
        if self.use_steps:
            self.results[0] += float(batch_outs[0])
        else:
            self.results[0] += float(batch_outs[0]) * (batch_end - batch_start)
        self.results[1:] = batch_outs[1:]

    def finalize(self):
        if not self.results:
            raise ValueError("Empty training data.")
        self.results[0] /= (self.num_samples or self.steps)


class OutputsAggregator:
    """`predict`'s outputs: batch outputs written into preallocated arrays (or concatenated for steps)."""

    def __init__(self, use_steps, num_samples=None, steps=None):
        self.use_steps, self.num_samples, self.steps = use_steps, num_samples, steps
        self.results: list = []

    def create(self, batch_outs):
        if self.use_steps:
            self.results = [[] for _ in batch_outs]
        else:
            self.results = [np.zeros((self.num_samples,) + out.shape[1:], dtype=out.dtype) for out in batch_outs]

    def aggregate(self, batch_outs, batch_start=None, batch_end=None):
        for i, out in enumerate(batch_outs):
            if self.use_steps:
                self.results[i].append(out)
            else:
                self.results[i][batch_start:batch_end] = out

    def finalize(self):
        if self.use_steps:
            self.results = [np.concatenate(r) for r in self.results]
