"""`from tensorfleet.examples.tutorials.mnist import input_data`: TF1's tutorial loader, mechanically renamed.

`input_data.read_data_sets("MNIST_data", one_hot=True)` is `tensorfleet.datasets.read_data_sets` (it never
downloads: the full MNIST when fetched beforehand, else the 5,000-image sample with a warning).
"""
from tensorfleet.datasets import (DataSet, Datasets, dense_to_one_hot, read_data_sets)  # noqa: F401

__all__ = ["read_data_sets", "DataSet", "Datasets", "dense_to_one_hot"]
