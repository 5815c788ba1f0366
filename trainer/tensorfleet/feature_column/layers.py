"""`tf.feature_column.input_layer` and `tf.feature_column.linear_model` (TF 1.15's v1 functions).

Sits above `columns`: each column, in name order, in its own variable scope under
`input_layer/` (`linear_model/`), so a variable is `input_layer/<column>_embedding/embedding_weights`
or `linear_model/<column>/weights` as in TF, and the canned estimators' scopes put `dnn/...` or
`linear/...` in front.
"""
from __future__ import annotations

from ..ops import array_ops, init_ops, math_ops, nn_impl
from ..ops.variable_scope import get_variable, variable_scope
from .columns import _CategoricalColumn

__all__ = ["input_layer", "linear_model"]


def _normalize(feature_columns, allow_categorical):
    if feature_columns is None:
        raise ValueError("feature_columns must not be empty.")
    if not isinstance(feature_columns, (list, tuple, set, frozenset)):
        feature_columns = [feature_columns]
    feature_columns = list(feature_columns)
    if not feature_columns:
        raise ValueError("feature_columns must not be empty.")
    seen: dict = {}
    for column in feature_columns:
        if not hasattr(column, "name"):
            raise ValueError(f"Items of feature_columns must be a _FeatureColumn. Given: {column!r}")
        if not hasattr(column, "dense_tensor") and not allow_categorical:
            raise ValueError("Items of feature_columns must be a _DenseColumn. You can wrap a categorical column "
                             f"with an embedding_column or indicator_column. Given: {column!r}")
        if column.name in seen:
            raise ValueError(f"Duplicate feature column name found for columns: {seen[column.name]!r} and "
                             f"{column!r}. This usually means that these columns refer to same base feature. "
                             "Either one must be discarded or a duplicated but renamed item must be inserted in "
                             "features dict.")
        seen[column.name] = column
    return sorted(feature_columns, key=lambda c: c.name)


def input_layer(features, feature_columns, weight_collections=None, trainable=True, cols_to_vars=None,
                cols_to_output_tensors=None):
    """The dense columns' tensors, each reshaped to [batch, n], concatenated along axis 1 in name order."""
    columns = _normalize(feature_columns, allow_categorical=False)
    with variable_scope(None, default_name="input_layer"):
        outputs = []
        for column in columns:
            with variable_scope(None, default_name=column.name) as scope:
                tensor = column.dense_tensor(features, trainable=trainable)
                tensor = array_ops.reshape(tensor, [-1, column.num_elements()])
                outputs.append(tensor)
                if cols_to_vars is not None:
                    from ..ops.state_ops import global_variables
                    cols_to_vars[column] = [v for v in global_variables() if v.op.name.startswith(scope.name + "/")]
                if cols_to_output_tensors is not None:
                    cols_to_output_tensors[column] = tensor
        return array_ops.concat(outputs, 1)


def linear_model(features, feature_columns, units=1, sparse_combiner="sum", weight_collections=None, trainable=True,
                 cols_to_vars=None):
    """sum over columns of column @ weights ([n or num_buckets, units], zeros) + `bias_weights` [units]."""
    if sparse_combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError(f"sparse_combiner must be one of 'mean', 'sqrtn', 'sum'; got {sparse_combiner!r}")
    columns = _normalize(feature_columns, allow_categorical=True)
    with variable_scope(None, default_name="linear_model") as model_scope:
        sums = []
        for column in columns:
            with variable_scope(None, default_name=column.name):
                sums.append(_weighted_sum(column, features, units, sparse_combiner, trainable, cols_to_vars))
        no_bias = math_ops.add_n(sums, name="weighted_sum_no_bias") if len(sums) > 1 else sums[0]
        bias = get_variable("bias_weights", shape=[units], initializer=init_ops.zeros_initializer(),
                            trainable=trainable)
        if cols_to_vars is not None:
            cols_to_vars["bias"] = [bias]
        del model_scope
        return nn_impl.bias_add(no_bias, bias, name="weighted_sum")


def _weighted_sum(column, features, units, sparse_combiner, trainable, cols_to_vars):
    if isinstance(column, _CategoricalColumn):
        weights = get_variable("weights", shape=[column.num_buckets, units], initializer=init_ops.zeros_initializer(),
                               trainable=trainable)
        ids = column.ids(features)                                                   # [batch, k]
        valid = math_ops.cast(math_ops.greater_equal(ids, 0), weights.dtype)
        rows = nn_impl.embedding_lookup(weights, math_ops.maximum(ids, 0))          # [batch, k, units]
        rows = math_ops.multiply(rows, array_ops.expand_dims(valid, -1))
        total = math_ops.reduce_sum(rows, 1)
        if sparse_combiner != "sum":
            count = math_ops.reduce_sum(valid, 1, keepdims=True)
            total = math_ops.div_no_nan(total, math_ops.sqrt(count) if sparse_combiner == "sqrtn" else count)
    else:
        tensor = array_ops.reshape(column.dense_tensor(features, trainable=trainable), [-1, column.num_elements()])
        weights = get_variable("weights", shape=[column.num_elements(), units],
                               initializer=init_ops.zeros_initializer(), trainable=trainable)
        total = math_ops.matmul(tensor, weights, name="weighted_sum")
    if cols_to_vars is not None:
        cols_to_vars[column] = [weights]
    return total
