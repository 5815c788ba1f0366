"""Keras tests: the Keras-owned session (backend/session.py) is closed after each test, and the backend's
global settings are restored, so tests stay independent."""
import pytest

import tensorfleet as tf


@pytest.fixture(autouse=True)
def _keras_state():
    K = tf.keras.backend
    saved = (K.floatx(), K.epsilon(), K.image_data_format())
    yield
    held = getattr(K.session._SESSION, "session", None)
    if held is not None:
        held.close()
    K.session._SESSION.session = None
    K.set_floatx(saved[0])
    K.set_epsilon(saved[1])
    K.set_image_data_format(saved[2])
