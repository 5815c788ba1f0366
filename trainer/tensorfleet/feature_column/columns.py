"""The feature columns of `tf.feature_column` (TF 1.15), dense inputs only.

Sits above `ops/` (and beside `layers`): a column turns one entry of a features dict into a dense
float tensor `[batch, n]` (`numeric_column`, `embedding_column`, `indicator_column`), or into
integer ids `[batch, k]` with -1 for "no id" (the categorical columns), which the dense columns
and `linear_model` consume. Inputs are dense tensors: a categorical input of shape `[batch]` or
`[batch, k]` (k ids per example; -1, or '' for strings, means none, as TF drops those when it
turns a dense input into a SparseTensor). SparseTensor inputs, hashed and crossed columns are
not here. Names (`column.name`, the variable scope of each column) are TF's.
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes as _dtypes
from ..ops import array_ops, comparison_ops, init_ops, math_ops, nn_impl
from ..ops.variable_scope import get_variable

__all__ = ["numeric_column", "bucketized_column", "categorical_column_with_identity",
           "categorical_column_with_vocabulary_list", "embedding_column", "indicator_column"]


def _feature(features, key):
    if key not in features:
        raise ValueError(f"The feature column's key {key!r} is not in the features dict "
                         f"(keys: {sorted(features)})")
    t = features[key]
    return t if hasattr(t, "op") else array_ops.convert_to_tensor(t)


def _as_2d(t):
    if t.shape.ndims == 1:
        return array_ops.expand_dims(t, -1)
    if t.shape.ndims == 2:
        return t
    return array_ops.reshape(t, [-1, int(np.prod([d.value for d in t.shape.dims[1:]]))])


class NumericColumn:
    """`numeric_column(key, shape=(1,), default_value=None, dtype=tf.float32, normalizer_fn=None)`."""

    def __init__(self, key, shape, default_value, dtype, normalizer_fn):
        self.key, self.shape, self.default_value = key, shape, default_value
        self.dtype, self.normalizer_fn = dtype, normalizer_fn

    @property
    def name(self):
        return self.key

    @property
    def variable_shape(self):
        return tuple(self.shape)

    def num_elements(self):
        return int(np.prod(self.shape))

    def dense_tensor(self, features, trainable=True):
        t = _feature(features, self.key)
        if not t.dtype.is_floating:
            t = math_ops.cast(t, _dtypes.float32)
        elif t.dtype != _dtypes.float32:
            t = math_ops.cast(t, _dtypes.float32)
        if self.normalizer_fn is not None:
            t = self.normalizer_fn(t)
        return array_ops.reshape(t, [-1, self.num_elements()])

    def __repr__(self):
        return f"NumericColumn(key={self.key!r}, shape={self.shape!r}, dtype={self.dtype.name})"


class _CategoricalColumn:
    num_buckets: int

    @property
    def name(self):
        return self.key

    def ids(self, features):
        """int64 ids [batch, k], -1 where there is none."""
        raise NotImplementedError


class BucketizedColumn(_CategoricalColumn):
    """`bucketized_column(source_column, boundaries)`: bucket i of an element holds [boundaries[i-1],
    boundaries[i]); dense in `input_layer` (one-hot per element, concatenated), categorical in `linear_model`
    (element j's bucket b is id j * (len(boundaries) + 1) + b)."""

    def __init__(self, source_column, boundaries):
        self.source_column, self.boundaries = source_column, tuple(float(b) for b in boundaries)
        self.key = source_column.key
        self.num_buckets = (len(self.boundaries) + 1) * source_column.num_elements()

    @property
    def name(self):
        return f"{self.source_column.name}_bucketized"

    def num_elements(self):
        return self.num_buckets

    def _buckets(self, features):
        x = self.source_column.dense_tensor(features)                                 # [batch, n] float32
        b = array_ops.constant(np.asarray(self.boundaries, np.float32).reshape(1, 1, -1))
        above = math_ops.cast(math_ops.greater_equal(array_ops.expand_dims(x, -1), b), _dtypes.int64)
        return math_ops.reduce_sum(above, -1)                                          # [batch, n]

    def ids(self, features):
        n, width = self.source_column.num_elements(), len(self.boundaries) + 1
        offsets = array_ops.constant(np.arange(n, dtype=np.int64).reshape(1, n) * width)
        return math_ops.add(self._buckets(features), offsets)

    def dense_tensor(self, features, trainable=True):
        one_hot = array_ops.one_hot(self._buckets(features), len(self.boundaries) + 1, dtype=_dtypes.float32)
        return array_ops.reshape(one_hot, [-1, self.num_buckets])


class IdentityCategoricalColumn(_CategoricalColumn):
    def __init__(self, key, num_buckets, default_value):
        self.key, self.num_buckets, self.default_value = key, num_buckets, default_value

    def ids(self, features):
        t = _feature(features, self.key)
        if not t.dtype.is_integer:
            raise ValueError(f"Invalid input, not integer. key: {self.key} dtype: {t.dtype.name}")
        t = _as_2d(math_ops.cast(t, _dtypes.int64))
        missing = math_ops.less(t, 0)
        out_of_range = math_ops.logical_and(math_ops.greater_equal(t, 0),
                                            math_ops.greater_equal(t, self.num_buckets))
        if self.default_value is None:
            # TF asserts 0 <= id < num_buckets for every id given (-1 stands for "none")
            from ..ops.check_ops import assert_equal
            ok = assert_equal(math_ops.reduce_any(out_of_range), False,
                              message=f"Bucket ids of {self.key!r} must be in [0, {self.num_buckets})")
            from ..default_graph import control_dependencies
            with control_dependencies([ok]):
                t = array_ops.identity(t)
            return comparison_ops.where(missing, array_ops.fill(array_ops.shape(t), np.int64(-1)), t)
        fallback = array_ops.fill(array_ops.shape(t), np.int64(self.default_value))
        t = comparison_ops.where(out_of_range, fallback, t)
        return comparison_ops.where(missing, array_ops.fill(array_ops.shape(t), np.int64(-1)), t)

    def __repr__(self):
        return f"IdentityCategoricalColumn(key={self.key!r}, num_buckets={self.num_buckets})"


class VocabularyListCategoricalColumn(_CategoricalColumn):
    def __init__(self, key, vocabulary_list, dtype, default_value, num_oov_buckets):
        self.key, self.vocabulary_list, self.dtype = key, tuple(vocabulary_list), dtype
        self.default_value, self.num_oov_buckets = default_value, num_oov_buckets
        self.num_buckets = len(self.vocabulary_list) + num_oov_buckets

    def ids(self, features):
        t = _as_2d(_feature(features, self.key))
        strings = self.dtype == _dtypes.string
        if strings != (t.dtype == _dtypes.string):
            raise ValueError(f"Column dtype and SparseTensors dtype must be compatible. key: {self.key}, "
                             f"column dtype: {self.dtype.name}, tensor dtype: {t.dtype.name}")
        if not strings:
            t = math_ops.cast(t, _dtypes.int64)
        # ids by comparison with each vocabulary entry: [batch, k, V] -> index of the match
        vocab = np.asarray(self.vocabulary_list, dtype=object if strings else np.int64)
        if strings:
            vocab = np.asarray([v.encode() if isinstance(v, str) else v for v in self.vocabulary_list], dtype=object)
        v = array_ops.constant(vocab, dtype=_dtypes.string if strings else _dtypes.int64)
        eq = math_ops.equal(array_ops.expand_dims(t, -1), v)
        found = math_ops.reduce_any(eq, -1)
        idx = math_ops.cast(math_ops.argmax(math_ops.cast(eq, _dtypes.int32), -1), _dtypes.int64)
        fallback = array_ops.fill(array_ops.shape(idx), np.int64(self.default_value))
        ids = comparison_ops.where(found, idx, fallback)
        empty = math_ops.equal(t, b"" if strings else np.int64(-1))
        return comparison_ops.where(empty, array_ops.fill(array_ops.shape(ids), np.int64(-1)), ids)

    def __repr__(self):
        return f"VocabularyListCategoricalColumn(key={self.key!r}, vocabulary_list={self.vocabulary_list!r})"


def _valid_one_hot(ids, depth):
    """[batch, k] ids (-1: none) -> [batch, k, depth] float one-hot (all zeros for -1)."""
    return array_ops.one_hot(ids, depth, dtype=_dtypes.float32)


class IndicatorColumn:
    """`indicator_column(categorical_column)`: multi-hot [batch, num_buckets] (counts for repeated ids)."""

    def __init__(self, categorical_column):
        self.categorical_column = categorical_column

    @property
    def name(self):
        return f"{self.categorical_column.name}_indicator"

    def num_elements(self):
        return self.categorical_column.num_buckets

    def dense_tensor(self, features, trainable=True):
        ids = self.categorical_column.ids(features)
        return math_ops.reduce_sum(_valid_one_hot(ids, self.categorical_column.num_buckets), 1)


class EmbeddingColumn:
    """`embedding_column(categorical_column, dimension, combiner='mean', initializer=None, ...)`:
    a variable `embedding_weights` [num_buckets, dimension] in the column's scope; the ids of an
    example are looked up and combined (mean, sum or sqrtn)."""

    def __init__(self, categorical_column, dimension, combiner, initializer, max_norm, trainable):
        self.categorical_column, self.dimension, self.combiner = categorical_column, dimension, combiner
        self.initializer, self.max_norm, self.trainable = initializer, max_norm, trainable

    @property
    def name(self):
        return f"{self.categorical_column.name}_embedding"

    def num_elements(self):
        return self.dimension

    def dense_tensor(self, features, trainable=True):
        ids = self.categorical_column.ids(features)
        weights = get_variable("embedding_weights", shape=[self.categorical_column.num_buckets, self.dimension],
                               dtype=_dtypes.float32, initializer=self.initializer,
                               trainable=self.trainable and trainable)
        valid = math_ops.cast(math_ops.greater_equal(ids, 0), _dtypes.float32)            # [batch, k]
        safe = math_ops.maximum(ids, np.int64(0))
        vectors = nn_impl.embedding_lookup(weights, safe, max_norm=self.max_norm)          # [batch, k, d]
        vectors = math_ops.multiply(vectors, array_ops.expand_dims(valid, -1))
        total = math_ops.reduce_sum(vectors, 1)
        if self.combiner == "sum":
            return total
        count = math_ops.reduce_sum(valid, 1, keepdims=True)
        if self.combiner == "sqrtn":
            return math_ops.div_no_nan(total, math_ops.sqrt(count))
        return math_ops.div_no_nan(total, count)


def numeric_column(key, shape=(1,), default_value=None, dtype=_dtypes.float32, normalizer_fn=None):
    if not isinstance(key, str):
        raise ValueError(f"key must be a string. Given: {key!r}")
    shape = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
    if any(s < 1 for s in shape):
        raise ValueError(f"shape dimensions must be greater than 0. shape: {shape}, key: {key}")
    dtype = _dtypes.as_dtype(dtype)
    if not (dtype.is_integer or dtype.is_floating):
        raise ValueError(f"dtype must be convertible to float. dtype: {dtype.name}, key: {key}")
    if normalizer_fn is not None and not callable(normalizer_fn):
        raise TypeError(f"normalizer_fn must be a callable. Given: {normalizer_fn}")
    return NumericColumn(key, shape, default_value, dtype, normalizer_fn)


def bucketized_column(source_column, boundaries):
    if not isinstance(source_column, NumericColumn):
        raise ValueError(f"source_column must be a column generated with numeric_column(). Given: {source_column}")
    if len(source_column.shape) > 1:
        raise ValueError(f"source_column must be one-dimensional column. Given: {source_column}")
    if not boundaries or not isinstance(boundaries, (list, tuple)):
        raise ValueError("boundaries must be a sorted list.")
    if any(boundaries[i] >= boundaries[i + 1] for i in range(len(boundaries) - 1)):
        raise ValueError("boundaries must be a sorted list.")
    return BucketizedColumn(source_column, boundaries)


def categorical_column_with_identity(key, num_buckets, default_value=None):
    if num_buckets < 1:
        raise ValueError(f"num_buckets {num_buckets} < 1, column_name {key}")
    if default_value is not None and (default_value < 0 or default_value >= num_buckets):
        raise ValueError(f"default_value {default_value} not in range [0, {num_buckets}), column_name {key}")
    return IdentityCategoricalColumn(key, num_buckets, default_value)


def categorical_column_with_vocabulary_list(key, vocabulary_list, dtype=None, default_value=-1, num_oov_buckets=0):
    if vocabulary_list is None or len(vocabulary_list) < 1:
        raise ValueError(f"vocabulary_list {vocabulary_list} must be non-empty, column_name: {key}")
    if len(set(vocabulary_list)) != len(vocabulary_list):
        raise ValueError(f"Duplicate keys in vocabulary_list {vocabulary_list}, column_name: {key}")
    if num_oov_buckets:
        if default_value != -1:
            raise ValueError(f"Can't specify both default_value and num_oov_buckets. column_name: {key}")
        raise NotImplementedError("categorical_column_with_vocabulary_list(num_oov_buckets>0) needs string "
                                  "hashing, which Tensorfleet does not have (column " + key + ")")
    inferred = _dtypes.string if isinstance(vocabulary_list[0], (str, bytes)) else _dtypes.int64
    dtype = inferred if dtype is None else _dtypes.as_dtype(dtype)
    if (dtype == _dtypes.string) != (inferred == _dtypes.string):
        raise ValueError(f"dtype {dtype.name} and vocabulary dtype {inferred.name} do not match, column_name: {key}")
    return VocabularyListCategoricalColumn(key, vocabulary_list, dtype, default_value, num_oov_buckets)


def embedding_column(categorical_column, dimension, combiner="mean", initializer=None, ckpt_to_load_from=None,
                     tensor_name_in_ckpt=None, max_norm=None, trainable=True):
    if dimension is None or dimension < 1:
        raise ValueError(f"Invalid dimension {dimension}.")
    if combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError(f"combiner must be one of 'mean', 'sqrtn', 'sum'; got {combiner!r}")
    if (ckpt_to_load_from is None) != (tensor_name_in_ckpt is None):
        raise ValueError("Must specify both `ckpt_to_load_from` and `tensor_name_in_ckpt` or none of them.")
    if ckpt_to_load_from is not None:
        raise NotImplementedError("embedding_column(ckpt_to_load_from=...): use Estimator(warm_start_from=...)")
    if initializer is not None and not callable(initializer):
        raise ValueError(f"initializer must be callable if specified. Embedding of column_name: "
                         f"{categorical_column.name}")
    if initializer is None:
        initializer = init_ops.truncated_normal_initializer(mean=0.0, stddev=1 / math.sqrt(dimension))
    if not isinstance(categorical_column, _CategoricalColumn):
        raise ValueError(f"categorical_column must be a categorical column, got {categorical_column!r}")
    return EmbeddingColumn(categorical_column, dimension, combiner, initializer, max_norm, trainable)


def indicator_column(categorical_column):
    if not isinstance(categorical_column, _CategoricalColumn):
        raise ValueError(f"categorical_column must be a categorical column, got {categorical_column!r}")
    return IndicatorColumn(categorical_column)
