"""`tf.keras.callbacks` (TF 1.15): the callback base, `CallbackList`, the loggers `fit` adds, and the user
callbacks `ModelCheckpoint`, `EarlyStopping`, `TensorBoard` (TF 1.15's graph-mode one), `LearningRateScheduler`,
`ReduceLROnPlateau`, `CSVLogger`, `LambdaCallback`, `TerminateOnNaN`. docs/keras.md, "Callbacks".
"""
from .base import Callback, CallbackList, LambdaCallback, ModeKeys, configure_callbacks, make_logs  # noqa: F401
from .checkpointing import ModelCheckpoint
from .learning_rate import LearningRateScheduler, ReduceLROnPlateau
from .loggers import BaseLogger, CSVLogger, History, ProgbarLogger
from .stopping import EarlyStopping, TerminateOnNaN
from .tensorboard import TensorBoard

__all__ = ["BaseLogger", "CSVLogger", "Callback", "CallbackList", "EarlyStopping", "History", "LambdaCallback",
           "LearningRateScheduler", "ModelCheckpoint", "ProgbarLogger", "ReduceLROnPlateau", "TensorBoard",
           "TerminateOnNaN"]
