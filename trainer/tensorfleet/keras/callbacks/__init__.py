"""`tf.keras.callbacks` (TF 1.15): the callback base, `CallbackList` and the loggers `fit` adds.

(ModelCheckpoint, EarlyStopping, TensorBoard, LearningRateScheduler, ReduceLROnPlateau, CSVLogger and
LambdaCallback are the next step: docs/keras.md.)
"""
from .base import Callback, CallbackList, ModeKeys, configure_callbacks, make_logs  # noqa: F401
from .loggers import BaseLogger, History, ProgbarLogger  # noqa: F401

__all__ = ["BaseLogger", "Callback", "CallbackList", "History", "ProgbarLogger"]
