"""`tf.keras.callbacks.TensorBoard` as TF 1.15 defines it for graph mode (keras/callbacks_v1.py): event files
that TensorBoard reads.

- Scalars: every epoch log (`loss`, `acc`, `val_loss`, ..., `lr` from the learning-rate callbacks) as
  `epoch_<name>`, at step = the epoch index (update_freq='epoch') or the number of samples seen so far (else);
  with `update_freq` 'batch' or an integer N, the batch logs as `batch_<name>` once N samples (1 per step when
  fit counts steps) were seen since the last write, at step = the number of batches seen before this one.
  `batch`, `size` and `num_steps` are never written.
- `write_graph`: the FileWriter is opened with the Keras graph (a graph event TensorBoard shows).
- `histogram_freq` > 0: histogram summaries of each layer's weights (`dense/kernel_0`), of its output
  (`dense_out`), of the gradients (`write_grads`: `dense/kernel_0_grad`) and weight images (`write_images`) are
  merged and fetched with the validation function in epochs `epoch % histogram_freq == 0`, one event per
  validation batch at step = the number of validation batches run so far (validation data is needed).
One FileWriter per training run, closed at its end. Not provided (a clear error): the embeddings projector
(`embeddings_freq`) and profiling (`profile_batch` is accepted and ignored: no profile is written).
"""
from __future__ import annotations

import numpy as np

from ...ops import array_ops
from ...protos.summary_pb2 import Summary
from ...summary import summary_api
from ...summary.writer import FileWriter
from .. import backend as K
from .base import Callback

_NOT_SUMMARISED = ("batch", "size", "num_steps")


class TensorBoard(Callback):
    """`TensorBoard(log_dir='./logs', histogram_freq=0, batch_size=32, write_graph=True, write_grads=False,
    write_images=False, embeddings_freq=0, embeddings_layer_names=None, embeddings_metadata=None,
    embeddings_data=None, update_freq='epoch', profile_batch=2)`."""

    def __init__(self, log_dir="./logs", histogram_freq=0, batch_size=32, write_graph=True, write_grads=False,
                 write_images=False, embeddings_freq=0, embeddings_layer_names=None, embeddings_metadata=None,
                 embeddings_data=None, update_freq="epoch", profile_batch=2):
        super().__init__()
        if embeddings_freq:
            raise NotImplementedError("TensorBoard(embeddings_freq=...): the embeddings projector is not supported "
                                      "by tensorfleet; leave embeddings_freq at 0")
        self.log_dir = log_dir
        self.histogram_freq = histogram_freq
        self.merged = None
        self.write_graph = write_graph
        self.write_grads = write_grads
        self.write_images = write_images
        self.batch_size = batch_size
        self.embeddings_freq = embeddings_freq
        self.embeddings_layer_names = embeddings_layer_names
        self.embeddings_metadata = embeddings_metadata
        self.embeddings_data = embeddings_data
        self.update_freq = 1 if update_freq == "batch" else update_freq
        if self.update_freq != "epoch" and not isinstance(self.update_freq, int):
            raise ValueError(f"update_freq must be 'batch', 'epoch' or an integer, got {update_freq!r}")
        self._profile_batch = profile_batch
        self._total_batches_seen = 0
        self._total_val_batches_seen = 0
        self._samples_seen = 0
        self._samples_seen_at_last_write = 0
        self.writer = None

    def set_model(self, model):
        """Opens the FileWriter (with the graph) and builds the histogram summaries."""
        self.model = model
        graph = K.get_graph()
        self.writer = FileWriter(self.log_dir, graph) if self.write_graph else FileWriter(self.log_dir)
        if self.histogram_freq and self.merged is None:
            with graph.as_default():
                self._make_histogram_ops(model)
                self.merged = summary_api.merge_all()

    def _make_histogram_ops(self, model):
        for layer in model.layers:
            for weight in layer.weights:
                name = weight.name.replace(":", "_")
                summary_api.histogram(name, weight)
                if self.write_images:
                    image = _weight_image(weight)
                    if image is not None:
                        summary_api.image(name, image)
            if self.write_grads:
                for weight in layer.trainable_weights:
                    name = weight.name.replace(":", "_")
                    grads = model.optimizer.get_gradients(model.total_loss, [weight])
                    grads = [g.values if type(g).__name__ == "IndexedSlices" else g for g in grads]
                    summary_api.histogram(f"{name}_grad", grads[0] if len(grads) == 1 else grads)
            outputs = _layer_outputs(layer)
            if len(outputs) > 1:
                for i, output in enumerate(outputs):
                    summary_api.histogram(f"{layer.name}_out_{i}", output)
            elif outputs:
                summary_api.histogram(f"{layer.name}_out", outputs[0])

    def _fetch_callback(self, summary):
        self.writer.add_summary(summary, self._total_val_batches_seen)
        self._total_val_batches_seen += 1

    def _write_custom_summaries(self, step, logs=None):
        for name, value in (logs or {}).items():
            if isinstance(value, np.ndarray):
                value = value.item()
            summary = Summary()
            summary.value.add(tag=name, simple_value=float(value))
            self.writer.add_summary(summary, step)
        self.writer.flush()

    def on_batch_end(self, batch, logs=None):
        logs = logs or {}
        self._samples_seen += logs.get("size", 1)
        if self.update_freq != "epoch" and \
                self._samples_seen - self._samples_seen_at_last_write >= self.update_freq:
            self._write_custom_summaries(self._total_batches_seen, {
                "batch_" + k: v for k, v in logs.items() if k not in _NOT_SUMMARISED})
            self._samples_seen_at_last_write = self._samples_seen
        self._total_batches_seen += 1

    def on_epoch_begin(self, epoch, logs=None):
        if self.histogram_freq and epoch % self.histogram_freq == 0 and self.merged is not None:
            test_function = self.model._make_test_function()
            if self.merged not in test_function.fetches:
                test_function.fetches.append(self.merged)
                test_function.fetch_callbacks[self.merged] = self._fetch_callback

    def on_epoch_end(self, epoch, logs=None):
        logs = {"epoch_" + k: v for k, v in (logs or {}).items() if k not in _NOT_SUMMARISED}
        self._write_custom_summaries(epoch if self.update_freq == "epoch" else self._samples_seen, logs)
        if self.histogram_freq and self.model.test_function is not None:
            fetches = self.model.test_function.fetches
            if self.merged in fetches:
                fetches.remove(self.merged)
            self.model.test_function.fetch_callbacks.pop(self.merged, None)

    def on_train_end(self, logs=None):
        if self.writer is not None:
            self.writer.close()


def _layer_outputs(layer):
    """The layer's output tensor(s); none unless it was called exactly once (TF skips layers whose `output` is
    ambiguous)."""
    if len(layer._inbound_nodes) != 1:
        return []
    outputs = layer._inbound_nodes[0].output_tensors
    return list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]


def _weight_image(weight):
    """The weight as a [n, height, width, 1] image (TF's layout rules), or None for ranks it cannot show."""
    w_img = array_ops.squeeze(weight)
    shape = K.int_shape(w_img)
    if len(shape) == 2:
        if shape[0] > shape[1]:
            w_img = array_ops.transpose(w_img)
            shape = K.int_shape(w_img)
        w_img = array_ops.reshape(w_img, [1, shape[0], shape[1], 1])
    elif len(shape) == 3:
        if K.image_data_format() == "channels_last":
            w_img = array_ops.transpose(w_img, perm=[2, 0, 1])
            shape = K.int_shape(w_img)
        w_img = array_ops.reshape(w_img, [shape[0], shape[1], shape[2], 1])
    elif len(shape) == 1:
        w_img = array_ops.reshape(w_img, [1, shape[0], 1, 1])
    else:
        return None
    return w_img
