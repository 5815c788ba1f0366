"""`tf.train`: optimizers, learning-rate schedules, the global step, and checkpoints (Saver).

The top layer of the trainer: optimizers build gradient + fused apply ops
(`training_ops`, kernels in `kernels/train_kernels.py`), `training_util`
manages the global step, `saver` writes and restores checkpoints in the
format documented in `docs/checkpoint-format.md`.
"""
from . import training_ops  # noqa: F401  (registers the Apply* ops)
from .adadelta import AdadeltaOptimizer
from .adagrad import AdagradOptimizer
from .adagrad_da import AdagradDAOptimizer
from .proximal_adagrad import ProximalAdagradOptimizer
from .proximal_gradient_descent import ProximalGradientDescentOptimizer
from .coordinator import Coordinator, LooperThread
from .queue_runner import QueueRunner, add_queue_runner, start_queue_runners
from .input import (input_producer, limit_epochs, match_filenames_once, range_input_producer,
                    slice_input_producer, string_input_producer)
from .input_batching import (batch, batch_join, maybe_batch, maybe_batch_join, maybe_shuffle_batch,
                             maybe_shuffle_batch_join, shuffle_batch, shuffle_batch_join)
from .basic_session_run_hooks import (CheckpointSaverHook, CheckpointSaverListener, FeedFnHook, FinalOpsHook,
                                      GlobalStepWaiterHook, LoggingTensorHook, NanLossDuringTrainingError,
                                      NanTensorHook, SessionRunArgs, SessionRunContext,
                                      SessionRunHook, SessionRunValues, StepCounterHook, StopAtStepHook)
from .session_manager import SessionManager
from .supervisor import Supervisor
from .sync_replicas_optimizer import SyncReplicasOptimizer
from .monitored_session import (ChiefSessionCreator, MonitoredSession, MonitoredTrainingSession, Scaffold,
                                SessionCreator, SingularMonitoredSession, WorkerSessionCreator)
from .adam import AdamOptimizer
from .ftrl import FtrlOptimizer
from .gradient_descent import GradientDescentOptimizer
from .learning_rate_decay import (cosine_decay, exponential_decay, inverse_time_decay, natural_exp_decay,
                                  piecewise_constant, polynomial_decay)
from .momentum import MomentumOptimizer
from .moving_averages import ExponentialMovingAverage
from .optimizer import Optimizer
from .rmsprop import RMSPropOptimizer
from .saver import Saver, checkpoint_exists, get_checkpoint_state, latest_checkpoint, CheckpointState
from .saver import get_checkpoint_mtimes, remove_checkpoint
from .checkpoint_management import generate_checkpoint_state_proto, update_checkpoint_state
from .supervisor import basic_train_loop
from ..graph_io import write_graph
from ..summary.summary_iterator import summary_iterator
from .meta_graph import export_meta_graph, import_meta_graph
from .checkpoint_utils import (NewCheckpointReader, checkpoints_iterator, init_from_checkpoint, list_variables,
                               load_checkpoint, load_variable)
from ..protos.meta_graph_pb2 import SaverDef
from .device_setter import GreedyLoadBalancingStrategy, byte_size_load_fn, replica_device_setter
from ..distributed import ClusterDef, ClusterSpec, JobDef, Server, ServerDef
from ..protos.example_pb2 import Example, SequenceExample
from ..protos.feature_pb2 import BytesList, Feature, FeatureList, FeatureLists, Features, FloatList, Int64List
from ..summary.saver_hook import SecondOrStepTimer, SummarySaverHook
from ..summary.writer import FileWriterCache as SummaryWriterCache
from .training_util import (assert_global_step, create_global_step, get_global_step, get_or_create_global_step,
                            global_step)

__all__ = ["Optimizer", "GradientDescentOptimizer", "MomentumOptimizer", "AdamOptimizer", "AdagradOptimizer",
           "RMSPropOptimizer", "FtrlOptimizer", "AdadeltaOptimizer", "AdagradDAOptimizer", "ProximalAdagradOptimizer",
           "ProximalGradientDescentOptimizer",
           "Saver", "latest_checkpoint", "get_checkpoint_state", "checkpoint_exists",
           "CheckpointState", "get_or_create_global_step", "get_global_step", "create_global_step",
           "global_step", "assert_global_step", "ExponentialMovingAverage", "exponential_decay",
           "piecewise_constant", "polynomial_decay", "natural_exp_decay", "inverse_time_decay", "cosine_decay",
           "remove_checkpoint", "get_checkpoint_mtimes", "Coordinator", "LooperThread", "QueueRunner",
           "add_queue_runner", "start_queue_runners", "CheckpointSaverHook", "CheckpointSaverListener", "FeedFnHook",
           "FinalOpsHook", "GlobalStepWaiterHook", "LoggingTensorHook", "NanLossDuringTrainingError", "NanTensorHook",
           "SecondOrStepTimer", "SessionRunArgs", "SessionRunContext", "SessionRunHook", "SessionRunValues",
           "StepCounterHook", "StopAtStepHook", "SessionManager", "ChiefSessionCreator", "MonitoredSession",
           "MonitoredTrainingSession", "Scaffold", "SessionCreator", "SingularMonitoredSession",
           "WorkerSessionCreator", "Supervisor", "SyncReplicasOptimizer",
           "replica_device_setter", "GreedyLoadBalancingStrategy", "byte_size_load_fn", "ClusterSpec", "ClusterDef",
           "JobDef", "Server", "ServerDef",
           "Example", "SequenceExample", "Features", "Feature", "FeatureList", "FeatureLists", "BytesList",
           "FloatList", "Int64List", "SummarySaverHook", "SummaryWriterCache", "write_graph",
           "export_meta_graph", "import_meta_graph", "SaverDef", "NewCheckpointReader", "checkpoints_iterator",
           "init_from_checkpoint", "list_variables", "load_checkpoint", "load_variable", "summary_iterator",
           "generate_checkpoint_state_proto", "update_checkpoint_state", "basic_train_loop",
           "input_producer", "limit_epochs", "match_filenames_once", "range_input_producer", "slice_input_producer",
           "string_input_producer", "batch", "batch_join", "maybe_batch", "maybe_batch_join", "maybe_shuffle_batch",
           "maybe_shuffle_batch_join", "shuffle_batch", "shuffle_batch_join"]
