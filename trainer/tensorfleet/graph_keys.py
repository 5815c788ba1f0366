"""`tf.GraphKeys`: the standard collection names.

Framework layer, beside graph.py (which re-exports it): ops, layers, losses, summaries and train
add variables, losses, update ops and savers to a `Graph` collection under these keys; the
Saver, Supervisor and initializers read them back.
"""


class GraphKeys:
    """Standard collection names (TF's `tf.GraphKeys`)."""

    GLOBAL_VARIABLES = "variables"
    LOCAL_VARIABLES = "local_variables"
    MODEL_VARIABLES = "model_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    GLOBAL_STEP = "global_step"
    UPDATE_OPS = "update_ops"
    MOVING_AVERAGE_VARIABLES = "moving_average_variables"
    LOSSES = "losses"
    REGULARIZATION_LOSSES = "regularization_losses"
    SUMMARIES = "summaries"
    SAVERS = "savers"
    INIT_OP = "init_op"
    LOCAL_INIT_OP = "local_init_op"
    READY_OP = "ready_op"
    QUEUE_RUNNERS = "queue_runners"
    TRAIN_OP = "train_op"
    WEIGHTS = "weights"  # (tf.contrib.layers: apply_regularization's default, summarize_weights/biases/activations)
    BIASES = "biases"
    ACTIVATIONS = "activations"
    VARIABLES = GLOBAL_VARIABLES
    ASSET_FILEPATHS = "asset_filepaths"
    TABLE_INITIALIZERS = "table_initializer"
