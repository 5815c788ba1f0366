"""Layer wrappers (TF 1.15's keras/layers/wrappers.py): `TimeDistributed` and `Bidirectional`.

TimeDistributed applies its layer to every time step: as one call on [batch * time, ...] (a reshape) when the
batch size is unknown, else per step with `backend.rnn`, as TF. The inner layer's weights are built in the
wrapper's scope (`time_distributed/kernel:0`). Bidirectional runs a forward copy and a `go_backwards` copy of an
RNN layer (both re-created from its config: `bidirectional/forward_lstm/kernel:0`,
`bidirectional/backward_lstm/kernel:0`), reverses the backward sequence and merges ('concat', 'sum', 'mul',
'ave' or None for both); with `return_sequences` the masked steps of both directions output zeros.
"""
from __future__ import annotations

from ...ops import array_ops, join_ops
from ...tensor_shape import TensorShape
from .. import backend as K
from ..backend.rnn import rnn as K_rnn
from ..engine.base_layer import Layer
from ..engine.input_spec import InputSpec
from ..utils.generic_utils import has_arg
from .serialization import deserialize


class Wrapper(Layer):
    """A layer holding another layer (its weights are the wrapper's)."""

    def __init__(self, layer, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError(f"Please initialize `{type(self).__name__}` layer with a `Layer` instance. You passed: "
                             f"{layer}")
        super().__init__(**kwargs)
        self.layer = layer  # tracked: its weights are the wrapper's

    def build(self, input_shape=None):
        if not self.layer.built:
            self.layer.build(input_shape)
            self.layer.built = True
        self.built = True

    def get_config(self):
        return {**super().get_config(),
                "layer": {"class_name": self.layer.__class__.__name__, "config": self.layer.get_config()}}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        layer = deserialize(config.pop("layer"), custom_objects=custom_objects)
        return cls(layer, **config)


class TimeDistributed(Wrapper):
    """Applies `layer` to each time step of [batch, time, ...] inputs."""

    def __init__(self, layer, **kwargs):
        super().__init__(layer, **kwargs)
        self.supports_masking = True

    def build(self, input_shape):
        shape = TensorShape(input_shape).as_list()
        if len(shape) < 3:
            raise ValueError("`TimeDistributed` Layer should be passed an `input_shape ` with at least 3 dimensions, "
                             f"received: {shape}")
        self.input_spec = InputSpec(shape=shape)
        super().build(TensorShape([shape[0]] + shape[2:]))

    def compute_output_shape(self, input_shape):
        shape = TensorShape(input_shape).as_list()
        child = TensorShape(self.layer.compute_output_shape(TensorShape([shape[0]] + shape[2:]))).as_list()
        return TensorShape([child[0], shape[1]] + child[1:])

    def call(self, inputs, training=None, mask=None):
        kwargs = {"training": training} if has_arg(self.layer.call, "training") else {}
        shape = K.int_shape(inputs)
        if shape[0]:
            def step(x, _):
                return self.layer.call(x, **kwargs), []

            _, outputs, _ = K_rnn(step, inputs, initial_states=[], input_length=shape[1], unroll=False)
            return outputs
        dyn = array_ops.shape(inputs)
        length = shape[1] if shape[1] is not None else dyn[1]
        inner = array_ops.reshape(inputs, join_ops.stack([-1] + [shape[i] if shape[i] is not None else dyn[i]
                                                                for i in range(2, len(shape))]))
        if has_arg(self.layer.call, "mask") and mask is not None:
            kwargs["mask"] = array_ops.reshape(mask, [-1] + list(K.int_shape(mask)[2:]))
        y = self.layer.call(inner, **kwargs)
        out_shape = self.compute_output_shape(TensorShape(shape)).as_list()
        y_dyn = array_ops.shape(y)
        tail = [out_shape[i] if out_shape[i] is not None else y_dyn[i - 1] for i in range(2, len(out_shape))]
        y = array_ops.reshape(y, join_ops.stack([-1, length] + tail))
        y.set_shape(out_shape)
        return y

    def compute_mask(self, inputs, mask=None):
        return mask


class Bidirectional(Wrapper):
    """A forward and a backward copy of an RNN layer over the same inputs, merged."""

    def __init__(self, layer, merge_mode="concat", weights=None, backward_layer=None, **kwargs):
        if merge_mode not in ("sum", "mul", "ave", "concat", None):
            raise ValueError('Invalid merge mode. Merge mode should be one of {"sum", "mul", "ave", "concat", None}')
        super().__init__(layer, **kwargs)
        self._layers.remove(layer)  # only the two copies below hold weights
        self.forward_layer = self._recreate(layer)
        self._backward_layer_config = None
        if backward_layer is None:
            self.backward_layer = self._recreate(layer, go_backwards=True)
        else:
            self.backward_layer = backward_layer
            self._backward_layer_config = {"class_name": backward_layer.__class__.__name__,
                                           "config": backward_layer.get_config()}
        self.forward_layer._name = "forward_" + self.forward_layer.name
        self.backward_layer._name = "backward_" + self.backward_layer.name
        for sub in (self.forward_layer, self.backward_layer):
            if getattr(sub, "zero_output_for_mask", None) is not None:
                sub.zero_output_for_mask = sub.return_sequences
        self.merge_mode = merge_mode
        if weights:
            n = len(weights)
            self.forward_layer._initial_weights = weights[:n // 2]
            self.backward_layer._initial_weights = weights[n // 2:]
        self.stateful = layer.stateful
        self.return_sequences = layer.return_sequences
        self.return_state = layer.return_state
        self.supports_masking = True
        self.input_spec = layer.input_spec

    @staticmethod
    def _recreate(layer, go_backwards=False):
        config = layer.get_config()
        if go_backwards:
            config["go_backwards"] = not config["go_backwards"]
        return layer.__class__.from_config(config)

    def build(self, input_shape):
        with K.name_scope(self.forward_layer.name):
            self.forward_layer.build(input_shape)
            self.forward_layer.built = True
        with K.name_scope(self.backward_layer.name):
            self.backward_layer.build(input_shape)
            self.backward_layer.built = True
        for sub in (self.forward_layer, self.backward_layer):
            if sub._initial_weights is not None:
                sub.set_weights(sub._initial_weights)
                sub._initial_weights = None
        self.built = True

    def compute_output_shape(self, input_shape):
        output = self.forward_layer.compute_output_shape(input_shape)
        states = []
        if self.return_state:
            output, states = output[0], list(output[1:])
        output = TensorShape(output)
        if self.merge_mode == "concat":
            dims = output.as_list()
            output = TensorShape(dims[:-1] + [None if dims[-1] is None else dims[-1] * 2])
            outputs = [output]
        elif self.merge_mode is None:
            outputs = [output, output]
        else:
            outputs = [output]
        if self.return_state:
            return outputs + states + states
        return outputs[0] if len(outputs) == 1 else outputs

    def call(self, inputs, training=None, mask=None, initial_state=None, constants=None):
        kwargs = {}
        if has_arg(self.layer.call, "training"):
            kwargs["training"] = training
        if has_arg(self.layer.call, "mask"):
            kwargs["mask"] = mask
        if constants is not None and has_arg(self.layer.call, "constants"):
            kwargs["constants"] = constants
        if initial_state is not None and has_arg(self.layer.call, "initial_state"):
            half = len(initial_state) // 2
            y = self.forward_layer.call(inputs, initial_state=initial_state[:half], **kwargs)
            y_rev = self.backward_layer.call(inputs, initial_state=initial_state[half:], **kwargs)
        else:
            y = self.forward_layer.call(inputs, **kwargs)
            y_rev = self.backward_layer.call(inputs, **kwargs)
        states = []
        if self.return_state:
            states = list(y[1:]) + list(y_rev[1:])
            y, y_rev = y[0], y_rev[0]
        if self.return_sequences:
            y_rev = K.reverse(y_rev, 1)
        if self.merge_mode == "concat":
            output = K.concatenate([y, y_rev])
        elif self.merge_mode == "sum":
            output = y + y_rev
        elif self.merge_mode == "ave":
            output = (y + y_rev) / 2
        elif self.merge_mode == "mul":
            output = y * y_rev
        else:
            output = [y, y_rev]
        if self.return_state:
            return (output if self.merge_mode is None else [output]) + states
        return output

    def reset_states(self):
        self.forward_layer.reset_states()
        self.backward_layer.reset_states()

    def compute_mask(self, inputs, mask):
        if isinstance(mask, list):
            mask = mask[0]
        output_mask = mask if self.return_sequences else None
        if self.merge_mode is None:
            output_mask = [output_mask, output_mask]
        if self.return_state:
            n = len(self.forward_layer.states) * 2
            return (output_mask if isinstance(output_mask, list) else [output_mask]) + [None] * n
        return output_mask

    def get_config(self):
        config = {**super().get_config(), "merge_mode": self.merge_mode}
        if self._backward_layer_config is not None:
            config["backward_layer"] = self._backward_layer_config
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        if "backward_layer" in config:
            config["backward_layer"] = deserialize(config["backward_layer"], custom_objects=custom_objects)
        return super().from_config(config, custom_objects)
