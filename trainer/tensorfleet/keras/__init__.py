"""`tf.keras` (TF 1.15, graph mode): layers on graph tensors, Sequential / functional / subclassed models with
compile / fit / evaluate / predict, a session underneath (`tf.keras.backend.get_session()`).

Layout: `backend/` (session, learning phase, tensor functions), `engine/` (Layer, Node, Network, Model,
Sequential, the training loops), `layers/`, `optimizers/`, `callbacks/`, `utils/`, and the modules
`activations`, `initializers`, `regularizers`, `constraints`, `losses`, `metrics`, `models`.
docs/keras.md describes the architecture and what differs from TF.
"""
from . import (activations, backend, callbacks, constraints, datasets, initializers, layers, losses, metrics,
               models, optimizers, regularizers, utils)
from . import estimator, experimental  # noqa: E402  (after models: they reach keras/saving and cloning)
from .engine.input_layer import Input
from .engine.sequential import Sequential
from .engine.training import Model

__version__ = "2.2.4-tf"  # the Keras version string TF 1.15 reports

__all__ = ["Input", "Model", "Sequential", "activations", "backend", "callbacks", "constraints", "datasets",
           "estimator", "experimental", "initializers", "layers", "losses", "metrics", "models", "optimizers",
           "regularizers", "utils"]
