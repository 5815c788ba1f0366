"""`tf.train`: optimizers, global step, Saver."""
