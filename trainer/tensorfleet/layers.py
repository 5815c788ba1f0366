"""`tf.layers`: TF1 layer functions (dense, ...)."""
__all__ = []
