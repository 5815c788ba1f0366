"""`tf.saved_model.tag_constants`: the tags that name a SavedModel's meta graphs (TF 1.15)."""

SERVING = "serve"
TRAINING = "train"
EVAL = "eval"
GPU = "gpu"
TPU = "tpu"

__all__ = ["SERVING", "TRAINING", "EVAL", "GPU", "TPU"]
