"""`tf.keras.layers.Embedding` (TF 1.15's keras/layers/embeddings.py): integer ids -> rows of `embeddings`
[input_dim, output_dim] (initializer 'uniform': U(-0.05, 0.05)).

`mask_zero=True` makes id 0 padding: the output mask is `inputs != 0` (Embedding -> LSTM skips those steps), so
`input_dim` must count it. The lookup is `tf.nn.embedding_lookup`, whose gradient is an IndexedSlices of the
looked-up rows (the Keras optimizers apply it densely, docs/keras.md).
"""
from __future__ import annotations

from ... import dtypes as _dtypes
from ...ops import comparison_ops, math_ops, nn_impl
from ...tensor_shape import TensorShape
from .. import backend as K
from .. import constraints, initializers, regularizers
from ..engine.base_layer import Layer


class Embedding(Layer):
    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform", embeddings_regularizer=None,
                 activity_regularizer=None, embeddings_constraint=None, mask_zero=False, input_length=None,
                 **kwargs):
        if "input_shape" not in kwargs:
            kwargs["input_shape"] = (input_length,) if input_length else (None,)
        dtype = kwargs.pop("dtype", None)
        super().__init__(dtype=dtype or K.floatx(), activity_regularizer=regularizers.get(activity_regularizer),
                         **kwargs)
        self.input_dim, self.output_dim = int(input_dim), int(output_dim)
        self.embeddings_initializer = initializers.get(embeddings_initializer)
        self.embeddings_regularizer = regularizers.get(embeddings_regularizer)
        self.embeddings_constraint = constraints.get(embeddings_constraint)
        self.mask_zero = mask_zero
        self.supports_masking = mask_zero
        self.input_length = input_length

    def build(self, input_shape):
        self.embeddings = self.add_weight("embeddings", shape=(self.input_dim, self.output_dim),
                                          initializer=self.embeddings_initializer,
                                          regularizer=self.embeddings_regularizer,
                                          constraint=self.embeddings_constraint)
        self.built = True

    def compute_mask(self, inputs, mask=None):
        if not self.mask_zero:
            return None
        return comparison_ops.not_equal(inputs, 0)

    def compute_output_shape(self, input_shape):
        input_shape = TensorShape(input_shape).as_list()
        if self.input_length is None:
            return TensorShape(input_shape + [self.output_dim])
        lengths = list(self.input_length) if isinstance(self.input_length, (list, tuple)) else [self.input_length]
        if len(lengths) != len(input_shape) - 1:
            raise ValueError(f'"input_length" is {self.input_length}, but received input has shape {input_shape}')
        for i, (s1, s2) in enumerate(zip(lengths, input_shape[1:])):
            if s1 is not None and s2 is not None and s1 != s2:
                raise ValueError(f'"input_length" is {self.input_length}, but received input has shape '
                                 f'{input_shape}')
            if s1 is None:
                lengths[i] = s2
        return TensorShape([input_shape[0]] + lengths + [self.output_dim])

    def call(self, inputs):
        if inputs.dtype not in (_dtypes.int32, _dtypes.int64):
            inputs = math_ops.cast(inputs, _dtypes.int32)
        return nn_impl.embedding_lookup(self.embeddings, inputs)

    def get_config(self):
        config = {"input_dim": self.input_dim, "output_dim": self.output_dim,
                  "embeddings_initializer": initializers.serialize(self.embeddings_initializer),
                  "embeddings_regularizer": regularizers.serialize(self.embeddings_regularizer),
                  "activity_regularizer": regularizers.serialize(self.activity_regularizer),
                  "embeddings_constraint": constraints.serialize(self.embeddings_constraint),
                  "mask_zero": self.mask_zero, "input_length": self.input_length}
        return {**super().get_config(), **config}
