"""`tf.data` (TF 1.15, graph mode): Dataset sources and transformations, iterators whose get_next() runs in a
session, and prefetching on a background thread so the input pipeline overlaps the training step.

Top of the trainer stack beside `train/`: it builds ops (iterator_ops), runs dataset functions in their own
sessions (functions.py) and is exported as `tf.data`. Modules: structure (element nesting), dataset_ops
(base + sources), transformations, cache_dataset, prefetch, iterator_ops, functions, tfrecord_dataset,
file_datasets.
"""
import types as _types

from .dataset_ops import AUTOTUNE, Dataset
from .iterator_ops import Iterator, make_initializable_iterator, make_one_shot_iterator
from .tfrecord_dataset import TFRecordDataset
from .file_datasets import FixedLengthRecordDataset, TextLineDataset, map_and_batch, shuffle_and_repeat, unbatch

experimental = _types.SimpleNamespace(AUTOTUNE=AUTOTUNE, shuffle_and_repeat=shuffle_and_repeat,
                                      map_and_batch=map_and_batch, unbatch=unbatch)

__all__ = ["Dataset", "TFRecordDataset", "TextLineDataset", "FixedLengthRecordDataset", "Iterator",
           "make_one_shot_iterator", "make_initializable_iterator", "experimental"]
