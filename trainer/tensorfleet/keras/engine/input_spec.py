"""`tf.keras.layers.InputSpec` and the check a layer runs on its inputs before building/calling
(TF 1.15's keras/engine/input_spec.py; the error messages are TF's)."""
from __future__ import annotations

from ... import dtypes as _dtypes
from ...ops.functional_ops import nest_flatten


class InputSpec:
    """What a layer accepts: `dtype`, `shape`, `ndim`, `max_ndim`, `min_ndim`, `axes` ({axis: size})."""

    def __init__(self, dtype=None, shape=None, ndim=None, max_ndim=None, min_ndim=None, axes=None):
        self.dtype = _dtypes.as_dtype(dtype).name if dtype is not None else None
        if shape is not None:
            self.ndim = len(shape)
            self.shape = shape
        else:
            self.ndim = ndim
            self.shape = None
        self.max_ndim = max_ndim
        self.min_ndim = min_ndim
        self.axes = axes or {}

    def __repr__(self):
        spec = [("dtype=" + str(self.dtype)) if self.dtype else "",
                ("shape=" + str(self.shape)) if self.shape else "",
                ("ndim=" + str(self.ndim)) if self.ndim else "",
                ("max_ndim=" + str(self.max_ndim)) if self.max_ndim else "",
                ("min_ndim=" + str(self.min_ndim)) if self.min_ndim else "",
                ("axes=" + str(self.axes)) if self.axes else ""]
        return "InputSpec(%s)" % ", ".join(x for x in spec if x)

    def get_config(self):
        return {"dtype": self.dtype, "shape": self.shape, "ndim": self.ndim, "max_ndim": self.max_ndim,
                "min_ndim": self.min_ndim, "axes": self.axes}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _incompatible(index, layer_name, detail):
    return ValueError(f"Input {index} of layer {layer_name} is incompatible with the layer: {detail}")


def assert_input_compatibility(input_spec, inputs, layer_name):
    """Raises ValueError naming the layer and the input when `inputs` do not match `input_spec`."""
    if not input_spec:
        return
    inputs = nest_flatten(inputs)
    for x in inputs:
        if not hasattr(x, "shape"):
            raise TypeError(f"Inputs to a layer should be tensors. Got: {x}")
    input_spec = nest_flatten(input_spec)
    if len(inputs) != len(input_spec):
        raise ValueError(f"Layer {layer_name} expects {len(input_spec)} inputs, but it received {len(inputs)} "
                         f"input tensors. Inputs received: {inputs}")
    for i, (x, spec) in enumerate(zip(inputs, input_spec)):
        if spec is None:
            continue
        ndim = x.shape.ndims
        if (spec.ndim is not None or spec.min_ndim is not None or spec.max_ndim is not None) and ndim is None:
            raise _incompatible(i, layer_name, "its rank is undefined, but the layer requires a defined rank.")
        if spec.ndim is not None and ndim != spec.ndim:
            raise _incompatible(i, layer_name, f"expected ndim={spec.ndim}, found ndim={ndim}. Full shape "
                                               f"received: {x.shape.as_list()}")
        if spec.max_ndim is not None and ndim is not None and ndim > spec.max_ndim:
            raise _incompatible(i, layer_name, f"expected max_ndim={spec.max_ndim}, found ndim={ndim}")
        if spec.min_ndim is not None and ndim is not None and ndim < spec.min_ndim:
            raise _incompatible(i, layer_name, f"expected min_ndim={spec.min_ndim}, found ndim={ndim}. Full shape "
                                               f"received: {x.shape.as_list()}")
        if spec.dtype is not None and x.dtype.name != spec.dtype:
            raise _incompatible(i, layer_name, f"expected dtype={spec.dtype}, found dtype={x.dtype.name}")
        shape = x.shape.as_list() if ndim is not None else None
        if spec.axes and shape is not None:
            for axis, value in spec.axes.items():
                if value is not None and shape[int(axis)] not in {value, None}:
                    raise _incompatible(i, layer_name, f"expected axis {axis} of input shape to have value {value} "
                                                       f"but received input with shape {shape}")
        if spec.shape is not None and shape is not None:
            for spec_dim, dim in zip(spec.shape, shape):
                if spec_dim is not None and dim is not None and spec_dim != dim:
                    raise ValueError(f"Input {i} is incompatible with layer {layer_name}: expected "
                                     f"shape={spec.shape}, found shape={shape}")
