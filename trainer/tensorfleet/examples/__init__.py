"""`tensorfleet.examples`: TF1's `tensorflow.examples` import path, for scripts renamed mechanically."""
