"""`tensorfleet.examples.tutorials.mnist`: TF1's tutorial package; `input_data` is the loader."""
