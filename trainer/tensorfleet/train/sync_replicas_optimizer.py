"""`tf.train.SyncReplicasOptimizer`: synchronous data parallelism on parameter servers (TF 1.15 semantics).

Part of the training-loop layer (train/), on top of the accumulators
(`ops/accumulator_ops.py`), the queues (`ops/data_flow_ops.py`), `QueueRunner`
and the session hooks. The graph it builds, as TF's:

- per trainable variable, a `ConditionalAccumulator` on the variable's device (its
  ps), shared by name (`<var name>/grad_accum`) by every worker's session there;
- a `sync_rep_local_step` local variable on each worker (the global step its
  gradients are computed at);
- the worker's train op: push each gradient with `local_step` (stale ones, from an
  older step, are dropped and counted), then dequeue a token from the shared
  `sync_token_q` (blocking until the chief released the step) into `local_step`;
- the chief's queue runner (`get_chief_queue_runner`): take the mean of
  `replicas_to_aggregate` gradients from every accumulator, apply it with the
  wrapped optimizer, increment the global step, then enqueue
  `max(total_num_replicas, replicas_to_aggregate)` tokens holding the new step
  (so backup workers, whose late gradients were dropped, go on too).

Beyond TF: `stale_gradients()` is a scalar tensor counting the stale gradient
pushes dropped so far; and when the chief's coordinator stops, its queue runner's
cancel op cancels the pending take (TF leaves that thread blocked until the stop
grace period, 120 s by default, runs out) and releases `2 * tokens_per_step` tokens
holding the final global step, so no worker stays blocked waiting for a step that
will never come (with backup workers, TF's often do). Symmetrically, a non-chief
worker gives two tokens back when it leaves (`give_tokens_back`: its hook's `end`, a
non-chief `Supervisor`'s `stop()` or its process's exit): at the end of a run a faster
worker may have taken the token the chief's own last step waits for (a token is
anyone's: two from one step when the chief was slow, or one step more when its run
straddled the last two steps), and without one the chief blocks for good, as TF's does.
Two: one for the step waiting, one for a step more should it have read the global
step before the last update (as the chief's release gives two per worker).
"""
from __future__ import annotations

import weakref

from .. import dtypes as _dtypes
from .. import errors
from ..graph import GraphKeys, Tensor
from ..indexed_slices import IndexedSlices
from ..ops import array_ops, control_flow_ops, indexed_slices_ops, join_ops, reduction_ops, state_ops
from ..ops.accumulator_ops import ConditionalAccumulator, SparseConditionalAccumulator
from ..ops.data_flow_ops import FIFOQueue
from ..ops.string_ops import report_uninitialized_variables
from ..platform import tf_logging as logging
from ..run_metadata import RunOptions
from .basic_session_run_hooks import SessionRunHook
from .optimizer import Optimizer
from .queue_runner import QueueRunner
from .session_manager import _not_ready

__all__ = ["SyncReplicasOptimizer"]

#: the graph collection of the ops by which a leaving non-chief worker gives tokens back (one per optimizer)
LEAVE_OPS = "tensorfleet_sync_replicas_leave"
_given_back: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()   # graph -> names of leave ops run


def give_tokens_back(session, ops=None, timeout_ms: int = 0) -> None:
    """A non-chief worker leaving: runs each leave op (default: the session graph's `LEAVE_OPS`) not yet run in
    this process, so a chief's last step waiting for a token returns. Training is over: a session the script
    closed gives nothing, and a ps already gone is logged, never raised."""
    if getattr(session, "_closed", False):   # closed by the script: nothing left to run it on
        return
    graph = session.graph
    ops = graph.get_collection(LEAVE_OPS) if ops is None else ops
    done = _given_back.setdefault(graph, set())
    todo = [op for op in ops if op.name not in done]
    if not todo:
        return
    done.update(op.name for op in todo)
    try:
        session.run(todo, options=RunOptions(timeout_in_ms=timeout_ms) if timeout_ms else None)
    except (errors.OpError, RuntimeError) as e:
        logging.warning("SyncReplicasOptimizer: could not give its tokens back on leaving: %s", e)


class SyncReplicasOptimizer(Optimizer):
    """`tf.train.SyncReplicasOptimizer(opt, replicas_to_aggregate, total_num_replicas=None,
    variable_averages=None, variables_to_average=None, use_locking=False, name="sync_replicas")`."""

    def __init__(self, opt, replicas_to_aggregate, total_num_replicas=None, variable_averages=None,
                 variables_to_average=None, use_locking=False, name="sync_replicas"):
        if total_num_replicas is None:
            total_num_replicas = replicas_to_aggregate
        super().__init__(use_locking, name)
        if int(replicas_to_aggregate) < 1 or int(total_num_replicas) < 1:
            raise ValueError(f"replicas_to_aggregate ({replicas_to_aggregate}) and total_num_replicas "
                             f"({total_num_replicas}) must be positive")
        logging.info("SyncReplicasV2: replicas_to_aggregate=%s; total_num_replicas=%s", replicas_to_aggregate,
                     total_num_replicas)
        self._opt = opt
        self._replicas_to_aggregate = int(replicas_to_aggregate)
        self._total_num_replicas = int(total_num_replicas)
        self._tokens_per_step = max(self._total_num_replicas, self._replicas_to_aggregate)
        self._variable_averages = variable_averages
        self._variables_to_average = variables_to_average
        self._gradients_applied = False
        self._global_step = None
        self._sync_token_queue = None
        self._chief_queue_runner = None
        self._accumulator_list: list = []  # (accumulator, device)
        self._stale_gradients = None
        self._leave_op = None
        self._local_step = None
        self.local_step_init_op = None
        self.chief_init_op = None
        self.ready_for_local_init_op = None

    def compute_gradients(self, *args, **kwargs):
        """The wrapped optimizer's compute_gradients (clip per replica here if needed)."""
        return self._opt.compute_gradients(*args, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """Builds the synchronisation (see the module docstring); returns the worker's train op."""
        grads_and_vars = list(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("Must supply at least one variable")
        if global_step is None:
            raise ValueError("Global step is required to check staleness")
        graph = grads_and_vars[0][1].op.graph
        self._global_step = global_step
        gs_device = global_step.device
        gs_dtype = global_step.dtype.base_dtype
        train_ops, aggregated, var_list = [], [], []
        with graph.as_default():
            local_anchor = control_flow_ops.no_op()  # placed on this worker by the device scope in force
            with graph.colocate_with(local_anchor):  # so the local step stays on the worker, not on a ps
                self._local_step = state_ops.Variable(0, trainable=False, collections=[GraphKeys.LOCAL_VARIABLES],
                                                      dtype=gs_dtype, name="sync_rep_local_step")
            self.local_step_init_op = state_ops.assign(self._local_step, global_step)
            chief_init_ops = [self.local_step_init_op]
            self.ready_for_local_init_op = report_uninitialized_variables(state_ops.global_variables())
            with graph.name_scope(name or self._name):
                for grad, var in grads_and_vars:
                    var_list.append(var)
                    with graph.device(var.device):
                        if grad is None:
                            aggregated.append(None)  # pass-through
                            continue
                        if isinstance(grad, IndexedSlices):  # TF: rows averaged over the replicas that sent them
                            accum = SparseConditionalAccumulator(grad.dtype, shape=var.get_shape(),
                                                                 shared_name=var.name + "/grad_accum")
                            # one replica's rows summed first: the mean over replicas is then per row
                            grad = indexed_slices_ops.deduplicate(grad)
                            train_ops.append(accum.apply_indexed_slices_grad(grad, local_step=self._local_step))
                            aggregated.append(accum.take_indexed_slices_grad(self._replicas_to_aggregate))
                        elif isinstance(grad, Tensor):
                            accum = ConditionalAccumulator(grad.dtype, shape=var.get_shape(),
                                                           shared_name=var.name + "/grad_accum")
                            train_ops.append(accum.apply_grad(grad, local_step=self._local_step))
                            aggregated.append(accum.take_grad(self._replicas_to_aggregate))
                        else:
                            raise ValueError(f"Unknown grad type for {var.op.name}: {type(grad).__name__}")
                        self._accumulator_list.append((accum, var.device))
                with graph.device(gs_device), graph.name_scope(""):
                    update_op = self._opt.apply_gradients(list(zip(aggregated, var_list)), global_step)
                    self._sync_token_queue = FIFOQueue(-1, gs_dtype, shapes=(), name="sync_token_q",
                                                       shared_name="sync_token_q")
                    # the queue runner gets a dummy queue to close: closing the real ones on a ps would
                    # stop the other workers for good
                    dummy_queue = FIFOQueue(1, _dtypes.int32, shapes=(), name="dummy_queue",
                                            shared_name="dummy_queue")
                    with graph.control_dependencies(train_ops):
                        token = self._sync_token_queue.dequeue()
                    train_op = state_ops.assign(self._local_step, token)
                    with graph.control_dependencies([update_op]):
                        tokens = array_ops.fill([self._tokens_per_step], global_step)
                        sync_op = self._sync_token_queue.enqueue_many((tokens,))
                    if self._variable_averages is not None:
                        with graph.control_dependencies([sync_op]), graph.name_scope(""):
                            sync_op = self._variable_averages.apply(self._variables_to_average)
                    # when the chief stops: its pending take is cancelled, and every worker still waiting
                    # for a step that will not come gets a token (two each: one to return, one more step to
                    # see the final global step), where TF leaves them blocked
                    release = self._sync_token_queue.enqueue_many(
                        (array_ops.fill([2 * self._tokens_per_step], global_step),))
                    # a non-chief worker leaving gives two tokens back: a faster worker may have taken the
                    # one the chief's own last step waits for (TF's chief then stays blocked); one for that
                    # step, one for a step more should it have read the global step before the last update
                    self._leave_op = self._sync_token_queue.enqueue_many(
                        (array_ops.fill([2], global_step),), name="sync_replicas_leave")
                    graph.add_to_collection(LEAVE_OPS, self._leave_op)
                    cancel_op = control_flow_ops.group(
                        dummy_queue.close(cancel_pending_enqueues=True), release,
                        *[a.cancel_takes() for a, _ in self._accumulator_list], name="sync_replicas_cancel")
                    self._chief_queue_runner = QueueRunner(
                        dummy_queue, [sync_op], cancel_op=cancel_op,
                        queue_closed_exception_types=(errors.OutOfRangeError, errors.CancelledError))
                for accum, dev in self._accumulator_list:
                    with graph.device(dev):
                        chief_init_ops.append(accum.set_global_step(global_step, name="SetGlobalStep"))
                self.chief_init_op = control_flow_ops.group(*chief_init_ops)
                with graph.device(gs_device), graph.name_scope(""):
                    self._stale_gradients = self._stale_count()
        self._gradients_applied = True
        return train_op

    def _stale_count(self):
        counts = [a.num_dropped_gradients() for a, _ in self._accumulator_list]
        if not counts:
            return array_ops.constant(0, dtype=_dtypes.int64, name="stale_gradients")
        if len(counts) == 1:
            return array_ops.identity(counts[0], name="stale_gradients")
        return reduction_ops.reduce_max(join_ops.stack(counts), name="stale_gradients")

    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=Optimizer.GATE_OP,
                 aggregation_method=None, colocate_gradients_with_ops=False, name=None, grad_loss=None):
        return super().minimize(loss, global_step=global_step, var_list=var_list, gate_gradients=gate_gradients,
                                aggregation_method=aggregation_method,
                                colocate_gradients_with_ops=colocate_gradients_with_ops, name=name,
                                grad_loss=grad_loss)

    def _require_applied(self, what: str):
        if not self._gradients_applied:
            raise ValueError(f"{what} should be called after apply_gradients().")

    def get_chief_queue_runner(self):
        """The QueueRunner the chief runs: aggregate, apply, increment the global step, release tokens."""
        self._require_applied("get_chief_queue_runner()")
        return self._chief_queue_runner

    def get_slot(self, *args, **kwargs):
        return self._opt.get_slot(*args, **kwargs)

    def get_slot_names(self, *args, **kwargs):
        return self._opt.get_slot_names(*args, **kwargs)

    def variables(self):
        """The wrapped optimizer's variables (not the local step)."""
        return self._opt.variables()

    def get_init_tokens_op(self, num_tokens=-1):
        """The op filling the token queue at the start (default: `replicas_to_aggregate` tokens)."""
        self._require_applied("get_init_tokens_op()")
        tokens_needed = self._replicas_to_aggregate - self._total_num_replicas
        if num_tokens == -1:
            num_tokens = self._replicas_to_aggregate
        elif num_tokens < tokens_needed:
            raise ValueError(f"Too few tokens to finish the first step: {num_tokens} (given) vs {tokens_needed} "
                             f"(needed)")
        graph = self._global_step.op.graph
        with graph.as_default(), graph.device(self._global_step.device), graph.name_scope(""):
            if num_tokens > 0:
                tokens = array_ops.fill([num_tokens], self._global_step)
                return self._sync_token_queue.enqueue_many((tokens,))
            return control_flow_ops.no_op(name="no_init_tokens")

    def stale_gradients(self):
        """Tensorfleet extension: an int64 scalar tensor, the number of stale gradient pushes dropped so far
        (the largest count over the per-variable accumulators: a stale push is dropped by each of them)."""
        self._require_applied("stale_gradients()")
        return self._stale_gradients

    def make_session_run_hook(self, is_chief, num_tokens=-1):
        """A hook running the sync init ops after the session is created (and, on the chief, the queue
        runner and the initial tokens)."""
        return _SyncReplicasOptimizerHook(self, is_chief, num_tokens)


class _SyncReplicasOptimizerHook(SessionRunHook):
    """Runs SyncReplicasOptimizer's initialisation once the session exists (TF's hook)."""

    def __init__(self, sync_optimizer, is_chief, num_tokens):
        self._sync_optimizer = sync_optimizer
        self._is_chief = is_chief
        self._num_tokens = num_tokens

    def begin(self):
        opt = self._sync_optimizer
        if not opt._gradients_applied:
            raise ValueError("SyncReplicasOptimizer.apply_gradient should be called before using the hook.")
        self._ready_for_local_init_op = opt.ready_for_local_init_op
        if self._is_chief:
            self._local_init_op = opt.chief_init_op
            self._q_runner = opt.get_chief_queue_runner()
            self._init_tokens_op = opt.get_init_tokens_op(self._num_tokens)
        else:
            self._local_init_op = opt.local_step_init_op
            self._q_runner = None
            self._init_tokens_op = None

    def after_create_session(self, session, coord):
        msg = _not_ready(self._ready_for_local_init_op, session)
        if msg is not None:
            raise RuntimeError(f"Init operations did not make model ready for SyncReplicasOptimizer local_init. "
                               f"Init op: {self._local_init_op.name}, error: {msg}")
        session.run(self._local_init_op)
        if self._init_tokens_op is not None:
            session.run(self._init_tokens_op)
        if self._q_runner is not None:
            self._q_runner.create_threads(session, coord=coord, daemon=True, start=True)

    def end(self, session):
        """Beyond TF (whose hook has no `end`): a non-chief worker leaving after a clean end gives two tokens
        back, so the chief's last step, whose token a faster worker may have taken, returns."""
        if not self._is_chief:
            give_tokens_back(session, [self._sync_optimizer._leave_op])
