"""`tf.keras.experimental` (TF 1.15): `export_saved_model` and `load_from_saved_model`, the SavedModel export of a
Keras model (keras/saving/saved_model_experimental in TF; here keras/saving/saved_model_format.py)."""
from ..saving.saved_model_format import export_saved_model, load_from_saved_model

__all__ = ["export_saved_model", "load_from_saved_model"]
