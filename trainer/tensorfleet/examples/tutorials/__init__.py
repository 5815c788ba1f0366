"""`tensorfleet.examples.tutorials`: TF1's `tensorflow.examples.tutorials` import path."""
