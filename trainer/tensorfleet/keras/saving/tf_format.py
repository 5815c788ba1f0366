"""`model.save_weights(path)` / `model.load_weights(path)` in TensorFlow format: an object-based checkpoint as
TF 1.15's graph-mode Keras writes it (`path.index`, `path.data-00000-of-00001`, the `checkpoint` state file).

The checkpoint holds every variable reachable from the model (object_graph.py: layer weights, the Keras
optimizer's `iter`, hyper-parameters and slots) under its object-path key, plus `_CHECKPOINTABLE_OBJECT_GRAPH`,
the serialized TrackableObjectGraph. It is written by the project's checkpoint writer (train/checkpoint_io.py,
TF's tensor bundle, atomic), so real TensorFlow's `load_weights` / `tf.train.load_checkpoint` read it.

Loading walks the checkpoint's object graph from its root along the children's names, matching the model's
own objects: each matched variable gets its value (one session run); a checkpointed object whose variables do
not exist yet (a layer not built, an optimizer whose slots `fit` creates later) keeps the values and they
become those variables' initial values when they are created (TF's deferred restoration). A checkpoint
without an object graph (written by `tf.train.Saver`) is restored by variable names, as TF falls back to.
"""
from __future__ import annotations

import os

import numpy as np

from ... import tf_logging as logging
from ...ops.state_ops import Variable
from ...protos.trackable_object_graph_pb2 import TrackableObjectGraph
from ...train import checkpoint_io
from ...train.checkpoint_management import update_checkpoint_state
from .. import backend as K
from ..engine.base_layer import Layer
from ..optimizers import TFOptimizer
from ..optimizers.optimizer_v2 import OptimizerV2
from .object_graph import OBJECT_GRAPH_KEY, VARIABLE_VALUE, ObjectGraph, children


def save_weights(model, filepath: str) -> None:
    """Writes the object-based checkpoint `filepath` and records it in the directory's `checkpoint` file."""
    optimizer = getattr(model, "optimizer", None)
    if isinstance(optimizer, TFOptimizer):
        logging.warning(f"This model was compiled with a TensorFlow optimizer ({optimizer.optimizer}); its "
                        f"state is not saved by `save_weights` in TensorFlow format (tensorfleet saves the Keras "
                        f"optimizers' state only).")
    graph = ObjectGraph(model)
    proto, keyed = graph.serialize()
    keys = sorted(keyed)
    values = K.batch_get_value([keyed[k] for k in keys])
    tensors = {k: np.asarray(v) for k, v in zip(keys, values)}
    tensors[OBJECT_GRAPH_KEY] = np.array(proto.SerializeToString(), dtype=object)
    directory = os.path.dirname(filepath)
    if directory:
        os.makedirs(directory, exist_ok=True)
    checkpoint_io.write_checkpoint(filepath, tensors)
    # recorded relative to its directory, as TF's update_checkpoint_state_internal(save_relative_paths=True) does
    name = os.path.basename(filepath)
    update_checkpoint_state(directory, name, all_model_checkpoint_paths=[name], save_relative_paths=True)


class CheckpointLoadStatus:
    """What `load_weights` returns for a TensorFlow-format checkpoint (TF's status object, graph mode: the
    values are already assigned or pending)."""

    def __init__(self, matched: int, unmatched: list, filepath: str):
        self.matched, self.unmatched, self.filepath = matched, unmatched, filepath

    def assert_nontrivial_match(self):
        if not self.matched:
            raise AssertionError(f"Nothing except the root object matched a checkpointed value in {self.filepath}. "
                                 "Typically this means that the checkpoint does not match the Python program.")
        return self

    def assert_existing_objects_matched(self):
        return self.assert_nontrivial_match()

    def assert_consumed(self):
        if self.unmatched:
            raise AssertionError(f"Unresolved object in checkpoint {self.filepath}: {self.unmatched[:5]}")
        return self.assert_nontrivial_match()

    def expect_partial(self):
        return self

    def run_restore_ops(self, session=None):
        """The values were assigned by `load_weights` already."""

    def initialize_or_restore(self, session=None):
        """The values were assigned by `load_weights` already."""


def load_weights(model, filepath: str) -> CheckpointLoadStatus:
    values = checkpoint_io.read_checkpoint(filepath)
    raw = values.get(OBJECT_GRAPH_KEY)
    if raw is None:
        return _restore_by_name(model, values, filepath)
    proto = TrackableObjectGraph()
    proto.ParseFromString(bytes(np.asarray(raw, dtype=object).reshape(())[()]))
    restorer = _Restorer(values, filepath)
    restorer.walk(proto, model)
    restorer.assign()
    return CheckpointLoadStatus(restorer.matched, restorer.unmatched, filepath)


def _restore_by_name(model, values: dict, filepath: str) -> CheckpointLoadStatus:
    graph = ObjectGraph(model)
    pairs, unmatched = [], []
    variables = [o for o in graph.objects if isinstance(o, Variable)]
    for opt in graph.optimizers:
        variables += [slot for _, _, slot in graph.slots(opt)]
    for variable in variables:
        if variable.op.name in values:
            pairs.append((variable, _checked(variable, values[variable.op.name], variable.op.name, filepath)))
        else:
            unmatched.append(variable.op.name)
    K.batch_set_value(pairs)
    return CheckpointLoadStatus(len(pairs), unmatched, filepath)


def _checked(variable, value, key, filepath):
    value = np.asarray(value)
    if not variable.shape.is_compatible_with(value.shape):
        raise ValueError(f"Checkpoint {filepath}: tensor {key} has shape {list(value.shape)}, variable "
                         f"{variable.op.name} has shape {variable.shape.as_list()}")
    return value


class _Restorer:
    """Matches checkpoint nodes to the model's objects by child names; collects assignments and deferred values."""

    def __init__(self, values: dict, filepath: str):
        self.values, self.filepath = values, filepath
        self.pairs: list = []
        self.matched = 0
        self.unmatched: list = []

    def _value(self, node):
        for attr in node.attributes:
            if attr.name == VARIABLE_VALUE:
                if attr.checkpoint_key not in self.values:
                    raise ValueError(f"Checkpoint {self.filepath} has no tensor {attr.checkpoint_key} (its object "
                                     f"graph names it)")
                return attr.checkpoint_key, self.values[attr.checkpoint_key]
        return None, None

    def walk(self, proto, root):
        bound = {0: root}
        queue = [0]
        while queue:
            node_id = queue.pop(0)
            obj = bound[node_id]
            mine = dict(children(obj))
            for ref in proto.nodes[node_id].children:
                if ref.node_id in bound:
                    continue
                child = mine.get(ref.local_name)
                if child is None:
                    self._defer(obj, ref.local_name, proto.nodes[ref.node_id])
                    continue
                bound[ref.node_id] = child
                queue.append(ref.node_id)
                if isinstance(child, Variable):
                    key, value = self._value(proto.nodes[ref.node_id])
                    if key is not None:
                        self.pairs.append((child, _checked(child, value, key, self.filepath)))
                        self.matched += 1
            if isinstance(obj, OptimizerV2):
                self._slots(proto, node_id, obj, bound)

    def _defer(self, owner, local_name, node):
        """A checkpointed child the model does not have (yet): kept for when `owner` creates it."""
        key, value = self._value(node)
        if key is None or not isinstance(owner, (Layer, OptimizerV2)):
            self.unmatched.append(local_name)
            return
        owner.__dict__.setdefault("_deferred_restorations", {})[local_name] = np.asarray(value)
        self.matched += 1

    def _slots(self, proto, node_id, optimizer, bound):
        for ref in proto.nodes[node_id].slot_variables:
            original = bound.get(ref.original_variable_node_id)
            key, value = self._value(proto.nodes[ref.slot_variable_node_id])
            if not isinstance(original, Variable) or key is None:
                self.unmatched.append(f"slot {ref.slot_name}")
                continue
            slot = optimizer._slots.get(original.op.name, {}).get(ref.slot_name)
            if slot is None:  # created when `fit` builds the updates
                optimizer.__dict__.setdefault("_deferred_slot_restorations", {})[
                    (original.op.name, ref.slot_name)] = np.asarray(value)
            else:
                self.pairs.append((slot, _checked(slot, value, key, self.filepath)))
            self.matched += 1

    def assign(self):
        K.batch_set_value(self.pairs)
