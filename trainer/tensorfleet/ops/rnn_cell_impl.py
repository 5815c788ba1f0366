"""`tf.nn.rnn_cell`: the RNNCell base and TF 1.15's basic cells (BasicRNNCell, BasicLSTMCell, LSTMCell, GRUCell).

Sits in `ops/` above variable_scope and the math/array ops; `rnn_cell_wrappers.py` adds MultiRNNCell and
DropoutWrapper on this base, `rnn.py` runs cells over time. A cell behaves as TF1's layer-based cell: its first
call opens the variable scope `<current scope>/<name>` (name: the `name` argument, or the snake_case class name
made unique in the current scope: `basic_lstm_cell`, `basic_lstm_cell_1`, ...), creates its variables there, and
every later call reuses them. Variable names and shapes are TF 1.15's, so checkpoints line up:
`kernel` [input_depth + units, k * units], `bias`; GRU: `gates/{kernel,bias}`, `candidate/{kernel,bias}`;
LSTMCell: `w_{f,i,o}_diag`, `projection/kernel`. LSTM gates are split in TF's order i, j, f, o.
"""
from __future__ import annotations

import collections
import re

from .. import dtypes as _dtypes
from ..default_graph import name_scope
from ..graph import Tensor
from ..tensor_shape import TensorShape, as_shape
from . import clip_ops, init_ops, join_ops, math_ops, nn_impl, nn_ops
from . import variable_scope as vs
from .array_ops import convert_to_tensor, shape as _shape, zeros
from .slicing_ops import slice as _slice

__all__ = ["RNNCell", "LayerRNNCell", "LSTMStateTuple", "BasicRNNCell", "BasicLSTMCell", "LSTMCell", "GRUCell",
           "LSTMBlockCell"]


# -- nest: TF's nested-structure helpers (tuples, lists and namedtuples are structure; TensorShape is a leaf) --
def is_sequence(x) -> bool:
    return isinstance(x, (tuple, list)) and not isinstance(x, TensorShape)


def nest_flatten(structure) -> list:
    if is_sequence(structure):
        return [leaf for item in structure for leaf in nest_flatten(item)]
    return [structure]


def nest_pack(structure, flat):
    """The inverse of nest_flatten: `flat` laid out like `structure` (namedtuples keep their type)."""
    it = iter(flat)

    def build(s):
        if not is_sequence(s):
            return next(it)
        items = [build(x) for x in s]
        if hasattr(s, "_fields"):
            return type(s)(*items)
        return type(s)(items)

    out = build(structure)
    if next(it, None) is not None:
        raise ValueError("nest: the flat sequence has more elements than the structure")
    return out


def nest_map(fn, *structures):
    flats = [nest_flatten(s) for s in structures]
    if any(len(f) != len(flats[0]) for f in flats):
        raise ValueError("The two structures don't have the same number of elements.")
    return nest_pack(structures[0], [fn(*xs) for xs in zip(*flats)])


_LSTMStateTupleBase = collections.namedtuple("LSTMStateTuple", ("c", "h"))


class LSTMStateTuple(_LSTMStateTupleBase):
    """`tf.nn.rnn_cell.LSTMStateTuple(c, h)`: an LSTM cell's state (c: cell state, h: output)."""

    __slots__ = ()

    @property
    def dtype(self):
        c, h = self
        if c.dtype != h.dtype:
            raise TypeError(f"Inconsistent internal state: {c.dtype} vs {h.dtype}")
        return c.dtype


def _snake_case(name: str) -> str:
    s = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    s = re.sub(r"([a-z])([A-Z])", r"\1_\2", s).lower()
    return "private" + s if s.startswith("_") else s


def size_list(size) -> list:
    """A state/output size (int, TensorShape or list) as a list of dims."""
    if isinstance(size, int):
        return [size]
    if hasattr(size, "value") and not isinstance(size, TensorShape):  # a Dimension
        return [size.value]
    return as_shape(size).as_list()


def _size_shape(batch_size, size, static: bool):
    """[batch] + size: a python list (static, None where unknown) or an int32 shape tensor."""
    inner = size_list(size) if not isinstance(size, Tensor) else None
    if static:
        b = batch_size if isinstance(batch_size, int) else None
        return [b] + (inner if inner is not None else [])
    if inner is None:
        raise ValueError(f"state_size {size} must be an int or a TensorShape")
    if isinstance(batch_size, int):
        return [batch_size] + inner
    b = math_ops.cast(convert_to_tensor(batch_size), _dtypes.int32)
    return join_ops.stack([b] + inner)


def zero_state_tensors(state_size, batch_size, dtype):
    """Zeros shaped [batch_size] + s for each s of the (nested) state_size."""
    def one(s):
        z = zeros(_size_shape(batch_size, s, static=False), dtype=dtype)
        z.set_shape(_size_shape(batch_size, s, static=True))
        return z

    return nest_map(one, state_size)


def check_floating(values, who: str) -> None:
    for t in nest_flatten(values):
        if isinstance(t, Tensor) and not (t.dtype.is_floating or t.dtype.is_complex):
            raise ValueError(f"RNN cell only supports floating point inputs, but saw dtype: {t.dtype} ({who})")


class RNNCell:
    """`tf.nn.rnn_cell.RNNCell`: the abstract cell; subclasses define state_size, output_size and
    `call(inputs, state) -> (output, new_state)`, creating variables with `add_variable` in `build` or
    `tf.get_variable` in `call` (both land in the cell's scope and are reused after the first call)."""

    def __init__(self, trainable=True, name=None, dtype=None, _reuse=None, **kwargs):
        unknown = set(kwargs) - {"_scope"}
        if unknown:
            raise TypeError(f"{type(self).__name__}: unexpected keyword arguments {sorted(unknown)}")
        self.trainable = trainable
        self._reuse = _reuse
        self._dtype = _dtypes.as_dtype(dtype) if dtype is not None else None
        self._base_name = name if name else _snake_case(type(self).__name__)
        self._name = name
        self._scope = None
        self.built = False
        self._trainable_weights: list = []
        self._non_trainable_weights: list = []

    @property
    def name(self) -> str:
        return self._scope.name.rsplit("/", 1)[-1] if self._scope is not None else self._base_name

    @property
    def dtype(self):
        return self._dtype

    @property
    def scope_name(self) -> str:
        if self._scope is None:
            raise ValueError("No name available for layer scope because the layer has not been used yet.")
        return self._scope.name

    @property
    def state_size(self):
        raise NotImplementedError("Abstract method")

    @property
    def output_size(self):
        raise NotImplementedError("Abstract method")

    @property
    def trainable_weights(self) -> list:
        return list(self._trainable_weights) if self.trainable else []

    trainable_variables = trainable_weights

    @property
    def weights(self) -> list:
        return list(self._trainable_weights) + list(self._non_trainable_weights)

    variables = weights

    def build(self, inputs_shape):
        self.built = True

    def call(self, inputs, state):
        raise NotImplementedError(f"{type(self).__name__} must implement call(inputs, state)")

    def add_variable(self, name, shape, dtype=None, initializer=None, trainable=True, **kwargs):
        """A variable `<cell scope>/<name>` through tf.get_variable (reused on later calls)."""
        v = vs.get_variable(name, shape=shape, dtype=dtype or self._dtype, initializer=initializer,
                            trainable=trainable and self.trainable, regularizer=kwargs.get("regularizer"),
                            partitioner=kwargs.get("partitioner"))
        target = self._trainable_weights if (trainable and self.trainable) else self._non_trainable_weights
        if all(v is not w for w in target):
            target.append(v)
        return v

    add_weight = add_variable

    def __call__(self, inputs, state, scope=None):
        """Runs one step: (output, new_state) = call(inputs, state) inside the cell's variable scope."""
        if self._scope is None:
            if self._reuse:
                cm = vs.variable_scope(scope if scope is not None else self._base_name)
            else:
                cm = vs.variable_scope(scope, default_name=self._base_name)
            with cm as captured:
                self._scope = captured
        reuse = True if self.built else self._reuse
        with vs.variable_scope(self._scope, reuse=reuse, auxiliary_name_scope=False) as scope_now:
            with name_scope(scope_now.original_name_scope or None):
                inputs = nest_map(convert_to_tensor, inputs)
                self._check_input(inputs)
                if not self.built:
                    if self._dtype is None:
                        self._dtype = nest_flatten(inputs)[0].dtype.base_dtype
                    self.build(nest_map(lambda x: x.shape, inputs) if is_sequence(inputs) else inputs.shape)
                    self.built = True
                return self.call(inputs, state)

    def _check_input(self, inputs):
        """Layer cells take rank-2 inputs (TF's InputSpec(ndim=2)); plain RNNCell subclasses take anything."""

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        if inputs is not None:
            inputs = convert_to_tensor(inputs, name="inputs")
            batch_size = inputs.shape.as_list()[0] if inputs.shape.ndims else None
            if batch_size is None:
                batch_size = _shape(inputs)[0]
            dtype = inputs.dtype
        if batch_size is None or dtype is None:
            raise ValueError(f"batch_size and dtype cannot be None while constructing initial state: "
                             f"batch_size={batch_size}, dtype={dtype}")
        return self.zero_state(batch_size, dtype)

    def zero_state(self, batch_size, dtype):
        """Zero-filled state: [batch_size, s] for each s of the (nested) state_size."""
        with name_scope(type(self).__name__ + "ZeroState"):
            return zero_state_tensors(self.state_size, batch_size, dtype)

    def get_config(self) -> dict:
        return {"name": self.name, "trainable": self.trainable, "dtype": self._dtype.name if self._dtype else None}


class LayerRNNCell(RNNCell):
    """`LayerRNNCell`: a cell whose variables are created in `build(inputs_shape)`; inputs must be rank 2."""

    def _check_input(self, inputs):
        x = inputs if isinstance(inputs, Tensor) else None
        if x is not None and x.shape.ndims is not None and x.shape.ndims != 2:
            raise ValueError(f"Input 0 of layer {self.name} is incompatible with the layer: expected ndim=2, found "
                             f"ndim={x.shape.ndims}. Full shape received: {x.shape.as_list()}")

    def _input_depth(self, inputs_shape) -> int:
        shape = as_shape(inputs_shape)
        depth = shape.as_list()[-1] if shape.ndims else None
        if depth is None:
            raise ValueError(f"Expected inputs.shape[-1] to be known, saw shape: {shape}")
        if not self._dtype.is_floating:
            raise ValueError(f"RNN cell only supports floating point inputs, but saw dtype: {self._dtype}")
        return int(depth)


def _activation(activation):
    return activation if activation else nn_ops.tanh


class BasicRNNCell(LayerRNNCell):
    """`tf.nn.rnn_cell.BasicRNNCell(num_units)`: output = new_state = act([inputs, state] @ kernel + bias)."""

    def __init__(self, num_units, activation=None, reuse=None, name=None, dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self._num_units = int(num_units)
        self._activation = _activation(activation)

    state_size = property(lambda self: self._num_units)
    output_size = property(lambda self: self._num_units)

    def build(self, inputs_shape):
        depth = self._input_depth(inputs_shape)
        self._kernel = self.add_variable("kernel", shape=[depth + self._num_units, self._num_units])
        self._bias = self.add_variable("bias", shape=[self._num_units],
                                       initializer=init_ops.zeros_initializer(dtype=self._dtype))

    def call(self, inputs, state):
        check_floating([inputs, state], self.name)
        gate_inputs = math_ops.matmul(join_ops.concat([inputs, state], 1), self._kernel)
        output = self._activation(nn_impl.bias_add(gate_inputs, self._bias))
        return output, output


class GRUCell(LayerRNNCell):
    """`tf.nn.rnn_cell.GRUCell(num_units)`: r, u = sigmoid([x, h] @ gates/kernel + gates/bias) (bias init 1.0);
    c = act([x, r * h] @ candidate/kernel + candidate/bias); new_h = u * h + (1 - u) * c."""

    def __init__(self, num_units, activation=None, reuse=None, kernel_initializer=None, bias_initializer=None,
                 name=None, dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self._num_units = int(num_units)
        self._activation = _activation(activation)
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer

    state_size = property(lambda self: self._num_units)
    output_size = property(lambda self: self._num_units)

    def build(self, inputs_shape):
        depth, n = self._input_depth(inputs_shape), self._num_units
        self._gate_kernel = self.add_variable("gates/kernel", shape=[depth + n, 2 * n],
                                              initializer=self._kernel_initializer)
        self._gate_bias = self.add_variable(
            "gates/bias", shape=[2 * n], initializer=(self._bias_initializer if self._bias_initializer is not None
                                                      else init_ops.constant_initializer(1.0, dtype=self._dtype)))
        self._candidate_kernel = self.add_variable("candidate/kernel", shape=[depth + n, n],
                                                   initializer=self._kernel_initializer)
        self._candidate_bias = self.add_variable(
            "candidate/bias", shape=[n], initializer=(self._bias_initializer if self._bias_initializer is not None
                                                      else init_ops.zeros_initializer(dtype=self._dtype)))

    def call(self, inputs, state):
        check_floating([inputs, state], self.name)
        gate_inputs = nn_impl.bias_add(math_ops.matmul(join_ops.concat([inputs, state], 1), self._gate_kernel),
                                       self._gate_bias)
        r, u = join_ops.split(nn_ops.sigmoid(gate_inputs), num_or_size_splits=2, axis=1)
        candidate = nn_impl.bias_add(math_ops.matmul(join_ops.concat([inputs, r * state], 1),
                                                     self._candidate_kernel), self._candidate_bias)
        c = self._activation(candidate)
        new_h = u * state + (1 - u) * c
        return new_h, new_h


def _split_state(state, state_is_tuple, first, second):
    if state_is_tuple:
        c, h = state
        return c, h
    return _slice(state, [0, 0], [-1, first]), _slice(state, [0, first], [-1, second])


class BasicLSTMCell(LayerRNNCell):
    """`tf.nn.rnn_cell.BasicLSTMCell(num_units, forget_bias=1.0)`: i, j, f, o = split([x, h] @ kernel + bias, 4);
    new_c = c * sigmoid(f + forget_bias) + sigmoid(i) * act(j); new_h = act(new_c) * sigmoid(o)."""

    def __init__(self, num_units, forget_bias=1.0, state_is_tuple=True, activation=None, reuse=None, name=None,
                 dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self._num_units = int(num_units)
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = _activation(activation)

    @property
    def state_size(self):
        n = self._num_units
        return LSTMStateTuple(n, n) if self._state_is_tuple else 2 * n

    output_size = property(lambda self: self._num_units)

    def build(self, inputs_shape):
        depth, n = self._input_depth(inputs_shape), self._num_units
        self._kernel = self.add_variable("kernel", shape=[depth + n, 4 * n])
        self._bias = self.add_variable("bias", shape=[4 * n], initializer=init_ops.zeros_initializer(dtype=self._dtype))

    def call(self, inputs, state):
        check_floating([inputs, state], self.name)
        n = self._num_units
        c, h = _split_state(state, self._state_is_tuple, n, n)
        gate_inputs = nn_impl.bias_add(math_ops.matmul(join_ops.concat([inputs, h], 1), self._kernel), self._bias)
        i, j, f, o = join_ops.split(gate_inputs, num_or_size_splits=4, axis=1)
        forget_bias = convert_to_tensor(self._forget_bias, dtype=f.dtype)
        new_c = c * nn_ops.sigmoid(f + forget_bias) + nn_ops.sigmoid(i) * self._activation(j)
        new_h = self._activation(new_c) * nn_ops.sigmoid(o)
        new_state = LSTMStateTuple(new_c, new_h) if self._state_is_tuple else join_ops.concat([new_c, new_h], 1)
        return new_h, new_state


class LSTMCell(LayerRNNCell):
    """`tf.nn.rnn_cell.LSTMCell`: BasicLSTMCell plus peepholes (`w_f_diag`, `w_i_diag`, `w_o_diag`), `cell_clip`,
    a projection `projection/kernel` [num_units, num_proj] with `proj_clip`, and an `initializer` for the
    kernel, peepholes and projection. State (c, m); output m (num_proj wide when projecting)."""

    def __init__(self, num_units, use_peepholes=False, cell_clip=None, initializer=None, num_proj=None,
                 proj_clip=None, num_unit_shards=None, num_proj_shards=None, forget_bias=1.0, state_is_tuple=True,
                 activation=None, reuse=None, name=None, dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        if num_unit_shards is not None or num_proj_shards is not None:
            raise NotImplementedError("LSTMCell: num_unit_shards/num_proj_shards (partitioned variables) are not "
                                      "supported; leave them None")
        self._num_units = int(num_units)
        self._use_peepholes = use_peepholes
        self._cell_clip = cell_clip
        self._initializer = initializer
        self._num_proj = int(num_proj) if num_proj else None
        self._proj_clip = proj_clip
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = _activation(activation)

    @property
    def state_size(self):
        n, p = self._num_units, self._num_proj or self._num_units
        return LSTMStateTuple(n, p) if self._state_is_tuple else n + p

    output_size = property(lambda self: self._num_proj or self._num_units)

    def build(self, inputs_shape):
        depth, n = self._input_depth(inputs_shape), self._num_units
        h_depth = self._num_proj or n
        self._kernel = self.add_variable("kernel", shape=[depth + h_depth, 4 * n], initializer=self._initializer)
        self._bias = self.add_variable("bias", shape=[4 * n], initializer=init_ops.zeros_initializer(dtype=self._dtype))
        if self._use_peepholes:
            self._w_f_diag = self.add_variable("w_f_diag", shape=[n], initializer=self._initializer)
            self._w_i_diag = self.add_variable("w_i_diag", shape=[n], initializer=self._initializer)
            self._w_o_diag = self.add_variable("w_o_diag", shape=[n], initializer=self._initializer)
        if self._num_proj is not None:
            self._proj_kernel = self.add_variable("projection/kernel", shape=[n, self._num_proj],
                                                  initializer=self._initializer)

    def call(self, inputs, state):
        check_floating([inputs, state], self.name)
        n, p = self._num_units, self._num_proj or self._num_units
        sigmoid, act = nn_ops.sigmoid, self._activation
        c_prev, m_prev = _split_state(state, self._state_is_tuple, n, p)
        if inputs.shape.ndims == 2 and inputs.shape.as_list()[1] is None:
            raise ValueError("Could not infer input size from inputs.get_shape()[-1]")
        lstm_matrix = nn_impl.bias_add(math_ops.matmul(join_ops.concat([inputs, m_prev], 1), self._kernel),
                                       self._bias)
        i, j, f, o = join_ops.split(lstm_matrix, num_or_size_splits=4, axis=1)
        if self._use_peepholes:
            c = (sigmoid(f + self._forget_bias + self._w_f_diag * c_prev) * c_prev
                 + sigmoid(i + self._w_i_diag * c_prev) * act(j))
        else:
            c = sigmoid(f + self._forget_bias) * c_prev + sigmoid(i) * act(j)
        if self._cell_clip is not None:
            c = clip_ops.clip_by_value(c, -self._cell_clip, self._cell_clip)
        m = sigmoid(o + self._w_o_diag * c) * act(c) if self._use_peepholes else sigmoid(o) * act(c)
        if self._num_proj is not None:
            m = math_ops.matmul(m, self._proj_kernel)
            if self._proj_clip is not None:
                m = clip_ops.clip_by_value(m, -self._proj_clip, self._proj_clip)
        new_state = LSTMStateTuple(c, m) if self._state_is_tuple else join_ops.concat([c, m], 1)
        return m, new_state


class LSTMBlockCell(LSTMCell):
    """`tf.contrib.rnn.LSTMBlockCell(num_units, forget_bias=1.0, cell_clip=None, use_peephole=False)`: the fused
    LSTM of contrib with LSTMCell's math, gate order and variable names (`lstm_cell/kernel`, `bias`, `w_*_diag`)."""

    def __init__(self, num_units, forget_bias=1.0, cell_clip=None, use_peephole=False, dtype=None, reuse=None,
                 name="lstm_cell"):
        super().__init__(num_units, use_peepholes=use_peephole, cell_clip=cell_clip, forget_bias=forget_bias,
                         reuse=reuse, name=name, dtype=dtype)
