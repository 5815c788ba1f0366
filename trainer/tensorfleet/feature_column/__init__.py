"""`tf.feature_column`: numeric, bucketized, identity and vocabulary-list categorical, embedding and indicator
columns, `input_layer` and `linear_model` (TF 1.15 names and variable names; dense inputs).

Sits above `ops/` and `layers`; the canned estimators (`tensorfleet.estimator.canned`) build on it.
"""
from .columns import (bucketized_column, categorical_column_with_identity, categorical_column_with_vocabulary_list,
                      embedding_column, indicator_column, numeric_column)
from .layers import input_layer, linear_model

__all__ = ["numeric_column", "bucketized_column", "categorical_column_with_identity",
           "categorical_column_with_vocabulary_list", "embedding_column", "indicator_column", "input_layer",
           "linear_model"]
