"""The Keras RNN cells (TF 1.15's v1 keras/layers/recurrent.py): SimpleRNNCell, GRUCell, LSTMCell.

Weights, as TF 1.15 names and lays them out: `kernel` [input_dim, k * units], `recurrent_kernel` [units, k * units]
(orthogonal), `bias` [k * units] (GRU with `reset_after`: [2, 3 * units]); gate order LSTM i, f, c, o (the forget
gate's bias starts at 1 with `unit_forget_bias`), GRU z, r, h. v1 defaults: `recurrent_activation='hard_sigmoid'`,
`implementation=1`, GRU `reset_after=False` (the reset gate applied to h before the recurrent matmul). With no
dropout, implementation 1 is computed as one matmul per kernel (the same sums); with dropout it uses a mask per
gate (implementation 2: one mask), as TF.
"""
from __future__ import annotations

from ...ops import join_ops
from .. import activations, initializers
from .. import backend as K
from ..engine.base_layer import Layer
from .recurrent import DropoutRNNCellMixin
from .weight_args import set_weight_args, weight_args_config

_OWN_ARGS = ("kernel_initializer", "recurrent_initializer", "bias_initializer", "kernel_regularizer",
             "recurrent_regularizer", "bias_regularizer", "kernel_constraint", "recurrent_constraint",
             "bias_constraint")


class _Cell(DropoutRNNCellMixin, Layer):
    """What the three cells share: arguments, weights, per-gate slices, dropout masks."""

    gates = 1

    def __init__(self, units, activation="tanh", recurrent_activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0, recurrent_dropout=0.0,
                 implementation=1, **kwargs):
        super().__init__(**kwargs)
        self.units = int(units)
        self.recurrent_activation = activations.get(recurrent_activation) if recurrent_activation else None
        self.use_bias = use_bias
        set_weight_args(self, activation=activation, kernel_initializer=kernel_initializer,
                        recurrent_initializer=recurrent_initializer, bias_initializer=bias_initializer,
                        kernel_regularizer=kernel_regularizer, recurrent_regularizer=recurrent_regularizer,
                        bias_regularizer=bias_regularizer, kernel_constraint=kernel_constraint,
                        recurrent_constraint=recurrent_constraint, bias_constraint=bias_constraint)
        self.dropout = min(1.0, max(0.0, dropout))
        self.recurrent_dropout = min(1.0, max(0.0, recurrent_dropout))
        self.implementation = implementation
        self.state_size = self.units
        self.output_size = self.units

    def _build_kernels(self, input_shape, bias_shape, bias_initializer=None):
        input_dim = int(input_shape[-1])
        n = self.gates * self.units
        self.kernel = self.add_weight("kernel", shape=(input_dim, n), initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight("recurrent_kernel", shape=(self.units, n),
                                                initializer=self.recurrent_initializer,
                                                regularizer=self.recurrent_regularizer,
                                                constraint=self.recurrent_constraint)
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight("bias", shape=bias_shape, initializer=bias_initializer or self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self.built = True

    def _cols(self, w, k, count=1):
        """Gate k's columns (k .. k + count - 1) of a kernel or bias."""
        u = self.units
        return w[..., k * u:(k + count) * u]

    def _masks(self, inputs, h_tm1, training):
        dp = self.get_dropout_mask_for_cell(inputs, training, count=self.gates)
        rdp = self.get_recurrent_dropout_mask_for_cell(h_tm1, training, count=self.gates)
        if self.gates == 1:
            dp, rdp = (None if dp is None else [dp]), (None if rdp is None else [rdp])
        return dp, rdp

    def get_config(self):
        config = {"units": self.units, "activation": activations.serialize(self.activation),
                  "use_bias": self.use_bias, "dropout": self.dropout, "recurrent_dropout": self.recurrent_dropout}
        if self.recurrent_activation is not None:
            config["recurrent_activation"] = activations.serialize(self.recurrent_activation)
        config.update(weight_args_config(self, _OWN_ARGS))
        return {**super().get_config(), **config}


class SimpleRNNCell(_Cell):
    """h = activation(x @ kernel + bias + h_prev @ recurrent_kernel)."""

    def __init__(self, units, activation="tanh", use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros", kernel_regularizer=None,
                 recurrent_regularizer=None, bias_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, **kwargs):
        super().__init__(units, activation, None, use_bias, kernel_initializer, recurrent_initializer,
                         bias_initializer, kernel_regularizer, recurrent_regularizer, bias_regularizer,
                         kernel_constraint, recurrent_constraint, bias_constraint, dropout, recurrent_dropout,
                         **kwargs)

    def build(self, input_shape):
        self._build_kernels(input_shape, (self.units,))

    def call(self, inputs, states, training=None):
        prev = states[0] if isinstance(states, (list, tuple)) else states
        dp, rdp = self._masks(inputs, prev, training)
        h = K.dot(inputs * dp[0] if dp else inputs, self.kernel)
        if self.bias is not None:
            h = K.bias_add(h, self.bias)
        output = h + K.dot(prev * rdp[0] if rdp else prev, self.recurrent_kernel)
        if self.activation is not None:
            output = self.activation(output)
        return output, [output]

    def get_config(self):
        config = super().get_config()
        config.pop("implementation", None)
        return config


class GRUCell(_Cell):
    """Gated recurrent unit: z, r gates; reset_after=False: hh = act(x_h + (r * h) @ U_h), TF 1.15's default."""

    gates = 3

    def __init__(self, units, activation="tanh", recurrent_activation="hard_sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0, recurrent_dropout=0.0,
                 implementation=1, reset_after=False, **kwargs):
        super().__init__(units, activation, recurrent_activation, use_bias, kernel_initializer,
                         recurrent_initializer, bias_initializer, kernel_regularizer, recurrent_regularizer,
                         bias_regularizer, kernel_constraint, recurrent_constraint, bias_constraint, dropout,
                         recurrent_dropout, implementation, **kwargs)
        self.reset_after = reset_after

    def build(self, input_shape):
        self._build_kernels(input_shape, (2, 3 * self.units) if self.reset_after else (3 * self.units,))

    def call(self, inputs, states, training=None):
        h_tm1 = states[0] if isinstance(states, (list, tuple)) else states
        dp, rdp = self._masks(inputs, h_tm1, training)
        if self.bias is None:
            in_bias = rec_bias = None
        elif self.reset_after:
            in_bias, rec_bias = self.bias[0], self.bias[1]
        else:
            in_bias, rec_bias = self.bias, None
        per_gate = self.implementation == 1 and (dp or rdp)
        if per_gate:
            xs = [K.dot(inputs * dp[k] if dp else inputs, self._cols(self.kernel, k)) for k in range(3)]
            if in_bias is not None:
                xs = [K.bias_add(x, self._cols(in_bias, k)) for k, x in enumerate(xs)]
            hs = [h_tm1 * rdp[k] if rdp else h_tm1 for k in range(3)]
        else:
            if self.implementation != 1 and dp:
                inputs = inputs * dp[0]
            matrix_x = K.dot(inputs, self.kernel)
            if in_bias is not None:
                matrix_x = K.bias_add(matrix_x, in_bias)
            xs = join_ops.split(matrix_x, 3, axis=-1)
            h_in = h_tm1 * rdp[0] if (rdp and self.implementation != 1) else h_tm1
            hs = [h_in] * 3
        if self.reset_after:
            inner = [K.dot(hs[k], self._cols(self.recurrent_kernel, k)) for k in range(3)] if per_gate else \
                join_ops.split(K.dot(hs[0], self.recurrent_kernel), 3, axis=-1)
            if rec_bias is not None:
                inner = [K.bias_add(m, self._cols(rec_bias, k)) for k, m in enumerate(inner)]
        else:
            inner = [K.dot(hs[k], self._cols(self.recurrent_kernel, k)) for k in range(2)] if per_gate else \
                join_ops.split(K.dot(hs[0], self._cols(self.recurrent_kernel, 0, 2)), 2, axis=-1)
        z = self.recurrent_activation(xs[0] + inner[0])
        r = self.recurrent_activation(xs[1] + inner[1])
        if self.reset_after:
            recurrent_h = r * inner[2]
        else:
            recurrent_h = K.dot(r * hs[2], self._cols(self.recurrent_kernel, 2))
        hh = self.activation(xs[2] + recurrent_h)
        h_prev = h_tm1 if per_gate or self.implementation == 1 else hs[0]  # TF's implementation 2 keeps the mask
        h = z * h_prev + (1 - z) * hh
        return h, [h]

    def get_config(self):
        return {**super().get_config(), "implementation": self.implementation, "reset_after": self.reset_after}


class LSTMCell(_Cell):
    """Long short-term memory: i, f, o gates, candidate c; c = f * c_prev + i * act(c~); h = o * act(c)."""

    gates = 4

    def __init__(self, units, activation="tanh", recurrent_activation="hard_sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None,
                 kernel_constraint=None, recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, implementation=1, **kwargs):
        super().__init__(units, activation, recurrent_activation, use_bias, kernel_initializer,
                         recurrent_initializer, bias_initializer, kernel_regularizer, recurrent_regularizer,
                         bias_regularizer, kernel_constraint, recurrent_constraint, bias_constraint, dropout,
                         recurrent_dropout, implementation, **kwargs)
        self.unit_forget_bias = unit_forget_bias
        self.state_size = [self.units, self.units]

    def build(self, input_shape):
        init = None
        if self.use_bias and self.unit_forget_bias:
            base, u = self.bias_initializer, self.units

            def init(shape, dtype=None, partition_info=None):
                return join_ops.concat([base((u,), dtype=dtype), initializers.Ones()((u,), dtype=dtype),
                                        base((2 * u,), dtype=dtype)], 0)
        self._build_kernels(input_shape, (4 * self.units,), init)

    def call(self, inputs, states, training=None):
        h_tm1, c_tm1 = states[0], states[1]
        dp, rdp = self._masks(inputs, h_tm1, training)
        if self.implementation == 1 and (dp or rdp):
            zs = [K.dot(inputs * dp[k] if dp else inputs, self._cols(self.kernel, k)) for k in range(4)]
            if self.bias is not None:
                zs = [K.bias_add(z, self._cols(self.bias, k)) for k, z in enumerate(zs)]
            zs = [z + K.dot(h_tm1 * rdp[k] if rdp else h_tm1, self._cols(self.recurrent_kernel, k))
                  for k, z in enumerate(zs)]
        else:
            x = inputs * dp[0] if (dp and self.implementation != 1) else inputs
            h = h_tm1 * rdp[0] if (rdp and self.implementation != 1) else h_tm1
            z = K.dot(x, self.kernel) + K.dot(h, self.recurrent_kernel)
            if self.bias is not None:
                z = K.bias_add(z, self.bias)
            zs = join_ops.split(z, 4, axis=1)
        i = self.recurrent_activation(zs[0])
        f = self.recurrent_activation(zs[1])
        c = f * c_tm1 + i * self.activation(zs[2])
        o = self.recurrent_activation(zs[3])
        h = o * self.activation(c)
        return h, [h, c]

    def get_config(self):
        return {**super().get_config(), "unit_forget_bias": self.unit_forget_bias,
                "implementation": self.implementation}
