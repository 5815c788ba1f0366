"""Losses and updates of a Keras layer (TF 1.15's base_layer `add_loss` / `losses` / `add_update` / `updates`),
mixed into `Layer`.

A loss is a tensor, or a zero-argument callable (weight regularizers) evaluated the first time `losses` is
read and kept; `add_loss(x, inputs=...)` marks it conditional on those inputs. An update is an op; it is
conditional when it depends on the inputs of the call in progress (or of the layer's nodes).
`get_losses_for(None)` / `get_updates_for(None)` give the unconditional ones, `..._for(inputs)` those
reachable from `inputs`. A frozen (`trainable=False`), stateless layer reports no updates.
"""
from __future__ import annotations

from ... import dtypes as _dtypes
from ...default_graph import convert_to_tensor
from ...graph import Operation, Tensor
from ...ops.functional_ops import nest_flatten
from .. import backend
from . import base_layer_utils as utils


class LossesAndUpdates:
    def add_loss(self, losses, inputs=None):
        """Adds loss tensors (or zero-argument callables, evaluated when `losses` is read) to this layer;
        `inputs` given: conditional on them (`get_losses_for`)."""
        for loss in nest_flatten(losses):
            if loss is None:
                continue
            if callable(loss):
                self._callable_losses.append(loss)
                continue
            if not isinstance(loss, Tensor):
                loss = convert_to_tensor(loss, dtype=_dtypes.as_dtype(backend.floatx()))
            utils.set_unconditional(loss, inputs is None)
            self._losses.append(loss)

    @property
    def losses(self):
        """Added losses, regularization losses (each callable evaluated once) and the sublayers' losses."""
        collected = list(self._losses)
        for fn in self._callable_losses:
            value = self._callable_loss_values.get(fn)
            if value is None:
                value = fn()
                if value is None:
                    continue
                if not isinstance(value, Tensor):
                    value = convert_to_tensor(value, dtype=_dtypes.as_dtype(backend.floatx()))
                utils.set_unconditional(value, True)
                self._callable_loss_values[fn] = value
            collected.append(value)
        return collected + self._gather_children_attribute("losses")

    def get_losses_for(self, inputs):
        """The unconditional losses (inputs None) or those depending on `inputs`."""
        return utils.filter_for_inputs(self.losses, inputs)

    def add_update(self, updates, inputs=None):
        """Adds update ops (run by `fit` with each step); conditional when they depend on the call's inputs."""
        ctx = utils.call_context()
        if ctx.in_call:
            relevant = ctx.inputs
        else:
            relevant = [node.input_tensors for node in self._inbound_nodes]
        for update in nest_flatten(updates):
            if callable(update):
                update = update()
            if isinstance(update, tuple):
                update = backend.update(*update)
            if not isinstance(update, Operation):
                update = update.op if hasattr(update, "op") else convert_to_tensor(update).op
            utils.mark_conditional(update, relevant)
            self._updates.append(update)

    @property
    def updates(self):
        if not self.trainable and not self.stateful:
            return []
        return list(self._updates) + self._gather_children_attribute("updates")

    def get_updates_for(self, inputs):
        """The unconditional updates (inputs None) or those depending on `inputs`."""
        return utils.filter_for_inputs(self.updates, inputs)

    @property
    def metrics(self):
        return list(self._metrics) + self._gather_children_attribute("metrics")
