"""`tf.train.MonitoredSession` & co: a session that initialises/restores, runs hooks, and recovers.

Top of the training-loop layer (train/): `Scaffold` completes the graph (init,
ready, local-init ops, saver); a session creator (`ChiefSessionCreator` runs
`SessionManager.prepare_session`, `WorkerSessionCreator` waits for the chief);
`MonitoredSession` layers, as TF 1.15 does:

    _RecoverableSession   recreates the session on AbortedError / UnavailableError (a ps restarted);
                          its first creation only until the start-up bound (TENSORFLEET_STARTUP_SECONDS,
                          or the config's operation_timeout_in_ms), then the last error (naming the task)
      _CoordinatedSession   a Coordinator + the graph's queue runners; re-raises their errors
        _HookedSession        hooks' before_run/after_run around every run

Only the public Session API is used (run, graph, close), so all of it works on a
remote session unchanged. Non-chief workers poll readiness every
`session_manager.DEFAULT_RECOVERY_WAIT_SECS` (0.5 s; TF: 30 s).

End of training (`distributed/shutdown.py`): a chief's MonitoredSession that closes without an
exception releases the cluster (tells the other workers, stops every ps); one created on a
server of this process also releases it when the process exits normally. A worker told that
training finished stops: `should_stop()` is true, and a step that loses a ps ends with
`OutOfRangeError` (which ends a `with` block cleanly) instead of a recovery.
"""
from __future__ import annotations

import sys
import time

from .. import errors
from ..default_graph import get_default_graph
from ..graph import GraphKeys
from ..ops import control_flow_ops, state_ops
from ..distributed import shutdown as cluster_shutdown
from ..distributed import startup_wait
from ..distributed.client import Timeouts
from ..platform import tf_logging as logging
from . import basic_session_run_hooks as hooks_lib
from .coordinator import Coordinator
from .queue_runner import start_queue_runners
from .saver import Saver
from .session_manager import SessionManager, report_uninitialized_variables

__all__ = ["Scaffold", "SessionCreator", "ChiefSessionCreator", "WorkerSessionCreator", "MonitoredSession",
           "SingularMonitoredSession", "MonitoredTrainingSession"]

_PREEMPTION_ERRORS = (errors.AbortedError, errors.UnavailableError)
_END_OF_INPUT = (errors.OutOfRangeError, StopIteration)
USE_DEFAULT = object()


class Scaffold:
    """`tf.train.Scaffold`: the ops a monitored session needs; `finalize()` fills defaults and freezes the graph."""

    def __init__(self, init_op=None, init_feed_dict=None, init_fn=None, ready_op=None, ready_for_local_init_op=None,
                 local_init_op=None, summary_op=None, saver=None, copy_from_scaffold=None,
                 local_init_feed_dict=None):
        if copy_from_scaffold is not None:
            c = copy_from_scaffold
            init_op = init_op or c.init_op
            init_feed_dict = init_feed_dict or c.init_feed_dict
            init_fn = init_fn or c._user_init_fn
            ready_op = ready_op or c.ready_op
            ready_for_local_init_op = ready_for_local_init_op or c.ready_for_local_init_op
            local_init_op = local_init_op or c.local_init_op
            local_init_feed_dict = local_init_feed_dict or c.local_init_feed_dict
            summary_op = summary_op or c.summary_op
            saver = saver or c.saver
        self._user_init_fn = init_fn
        self._init_fn = (lambda sess: init_fn(self, sess)) if init_fn else None
        self._init_op, self._init_feed_dict = init_op, init_feed_dict
        self._ready_op, self._ready_for_local_init_op = ready_op, ready_for_local_init_op
        self._local_init_op, self._local_init_feed_dict = local_init_op, local_init_feed_dict
        self._summary_op, self._saver = summary_op, saver

    def finalize(self):
        """Creates the missing ops (TF's defaults) and finalizes the graph."""
        g = get_default_graph()
        if self._init_op is None:
            self._init_op = _first_of(g, GraphKeys.INIT_OP, state_ops.global_variables_initializer)
        if self._ready_op is None:
            self._ready_op = _first_of(g, GraphKeys.READY_OP, report_uninitialized_variables)
        if self._ready_for_local_init_op is None:
            self._ready_for_local_init_op = report_uninitialized_variables(state_ops.global_variables())
        if self._local_init_op is None:
            self._local_init_op = _first_of(g, GraphKeys.LOCAL_INIT_OP, Scaffold.default_local_init_op)
        if self._summary_op is None:
            self._summary_op = _default_summary_op(g)
        if self._saver is None:
            savers = g.get_collection(GraphKeys.SAVERS)
            if len(savers) > 1:
                raise RuntimeError(f"More than one item in collection {GraphKeys.SAVERS}. Please indicate which one "
                                   "to use by passing it to the Scaffold.")
            self._saver = savers[0] if savers else Saver(sharded=True, allow_empty=True)
            if not savers:
                g.add_to_collection(GraphKeys.SAVERS, self._saver)
        g.finalize()
        logging.info("Graph was finalized.")
        return self

    init_op = property(lambda self: self._init_op)
    init_fn = property(lambda self: self._init_fn)
    init_feed_dict = property(lambda self: self._init_feed_dict)
    ready_op = property(lambda self: self._ready_op)
    ready_for_local_init_op = property(lambda self: self._ready_for_local_init_op)
    local_init_op = property(lambda self: self._local_init_op)
    local_init_feed_dict = property(lambda self: self._local_init_feed_dict)
    summary_op = property(lambda self: self._summary_op)
    saver = property(lambda self: self._saver)

    @staticmethod
    def default_local_init_op():
        return control_flow_ops.group(state_ops.local_variables_initializer())


def _first_of(g, key, default=None):
    """The first item of collection `key`, else `default()` (no truth test: a Tensor has none)."""
    items = g.get_collection(key)
    if items:
        return items[0]
    return default() if default is not None else None


def _default_summary_op(g):
    op = _first_of(g, getattr(GraphKeys, "SUMMARY_OP", "summary_op"))
    if op is not None:
        return op
    from .. import summary  # late: tensorfleet.summary imports tensorfleet.train at load
    return summary.merge_all()


class SessionCreator:
    """A factory of sessions (`create_session()`)."""

    def create_session(self):
        raise NotImplementedError("create_session is not implemented for {self}.")


class ChiefSessionCreator(SessionCreator):
    """Creates a session that restores from `checkpoint_dir` or initialises the variables."""

    def __init__(self, scaffold=None, master="", config=None, checkpoint_dir=None,
                 checkpoint_filename_with_path=None):
        self._checkpoint_dir = checkpoint_dir
        self._checkpoint_filename_with_path = checkpoint_filename_with_path
        self._scaffold = scaffold or Scaffold()
        self._session_manager = None
        self._master, self._config = master, config

    def _get_session_manager(self):
        if self._session_manager is None:
            self._session_manager = SessionManager(
                local_init_op=self._scaffold.local_init_op, local_init_feed_dict=self._scaffold.local_init_feed_dict,
                ready_op=self._scaffold.ready_op, ready_for_local_init_op=self._scaffold.ready_for_local_init_op,
                graph=get_default_graph())
        return self._session_manager

    def create_session(self):
        self._scaffold.finalize()
        return self._get_session_manager().prepare_session(
            self._master, saver=self._scaffold.saver, checkpoint_dir=self._checkpoint_dir,
            checkpoint_filename_with_path=self._checkpoint_filename_with_path, config=self._config,
            init_op=self._scaffold.init_op, init_feed_dict=self._scaffold.init_feed_dict,
            init_fn=self._scaffold.init_fn)


class WorkerSessionCreator(SessionCreator):
    """Creates a session once the chief has initialised the model (polls every 0.5 s, TF: 30 s)."""

    def __init__(self, scaffold=None, master="", config=None, max_wait_secs=30 * 60):
        self._scaffold = scaffold or Scaffold()
        self._session_manager = None
        self._master, self._config, self._max_wait_secs = master, config, max_wait_secs

    def create_session(self):
        self._scaffold.finalize()
        if self._session_manager is None:
            self._session_manager = SessionManager(
                local_init_op=self._scaffold.local_init_op, local_init_feed_dict=self._scaffold.local_init_feed_dict,
                ready_op=self._scaffold.ready_op, ready_for_local_init_op=self._scaffold.ready_for_local_init_op,
                graph=get_default_graph())
        return self._session_manager.wait_for_session(self._master, config=self._config,
                                                      max_wait_secs=self._max_wait_secs)


def _call(hook, method, *args):
    """Calls a hook method; a hook that does not subclass SessionRunHook may leave some out (TF's duck typing)."""
    fn = getattr(hook, method, None)
    return fn(*args) if fn is not None else None


def _merge_options(a, b):
    if a is None:
        return b
    if b is None:
        return a
    from ..config import RunOptions
    return RunOptions(trace_level=max(a.trace_level, b.trace_level),
                      timeout_in_ms=max(a.timeout_in_ms, b.timeout_in_ms))


class _HookedSession:
    """Runs the hooks' before_run/after_run around each run; remembers a stop a hook requested."""

    def __init__(self, sess, hooks):
        self._sess, self._hooks = sess, hooks
        self._should_stop = False

    graph = property(lambda self: self._sess.graph)

    def should_stop(self):
        return self._should_stop

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        if self._should_stop:
            raise RuntimeError("Run called even after should_stop requested.")
        actual_fetches = {"caller": fetches}
        run_context = hooks_lib.SessionRunContext(
            original_args=hooks_lib.SessionRunArgs(fetches, feed_dict), session=self._sess)
        feed_dict = dict(feed_dict or {})
        for hook in self._hooks:
            request = _call(hook, "before_run", run_context)
            if request is None:
                continue
            if request.fetches is not None:
                actual_fetches[hook] = request.fetches
            for k, v in (request.feed_dict or {}).items():
                if k in feed_dict:
                    raise RuntimeError(f"Same tensor is fed by a SessionRunHook and user. Conflict(s): {k}")
                feed_dict[k] = v
            options = _merge_options(options, request.options)
        if run_metadata is None:  # TF's: hooks that asked for a trace find it in run_values.run_metadata
            from ..config import RunMetadata
            run_metadata = RunMetadata()
        outputs = self._sess.run(actual_fetches, feed_dict=feed_dict or None, options=options,
                                 run_metadata=run_metadata)
        for hook in self._hooks:
            _call(hook, "after_run", run_context, hooks_lib.SessionRunValues(results=outputs.get(hook), options=options,
                                                                   run_metadata=run_metadata))
        self._should_stop = self._should_stop or run_context.stop_requested
        return outputs["caller"]


class _MonitoredSession:
    """What MonitoredSession and SingularMonitoredSession share."""

    def __init__(self, session_creator, hooks, should_recover, stop_grace_period_secs=120):
        self._hooks = list(hooks or [])
        for h in self._hooks:
            _call(h, "begin")
        self._creator = session_creator or ChiefSessionCreator()
        self._should_recover = should_recover
        self._stop_grace_period_secs = stop_grace_period_secs
        self._coord = None
        self._tf_sess = None
        self._hooked = None
        self._closed = False
        self._created_once = False
        # the tf.train.Server of this process the session runs on, if any
        self._server = cluster_shutdown.server_for_target(getattr(self._creator, "_master", None))
        self._create()

    def _create(self) -> bool:
        """Creates the session (hooks' after_create_session included, as TF's _RecoverableSession retries);
        False (no session, should_stop() true) when the chief released the cluster meanwhile. TF retries without
        limit; here a session that never worked yet (a task that is not there, or no longer: a worker started after
        the released ps stopped) retries only until the start-up bound, then raises its last error."""
        first_deadline = None if self._created_once else self._startup_deadline()
        while True:
            try:
                self._tf_sess = self._creator.create_session()
                self._created_once = True
                self._server = cluster_shutdown.server_for_target(getattr(self._tf_sess, "sess_str", None))
                if self._server is not None and self._is_chief():
                    cluster_shutdown.register_chief_exit(self._server)
                self._coord = Coordinator(clean_stop_exception_types=[])
                start_queue_runners(sess=self._tf_sess, coord=self._coord)
                for hook in self._hooks:
                    _call(hook, "after_create_session", self._tf_sess, self._coord)
                self._hooked = _HookedSession(self._tf_sess, self._hooks)
                return True
            except _PREEMPTION_ERRORS + (errors.OutOfRangeError,) as e:
                if self._tf_sess is not None:
                    self._close_inner(ignore_errors=True)
                self._tf_sess, self._hooked = None, None
                if cluster_shutdown.cluster_released(self._server):
                    logging.info("Training finished (the chief released the cluster): no new session. %s", e)
                    return False
                if not self._should_recover or isinstance(e, errors.OutOfRangeError):
                    raise
                if first_deadline is not None and time.monotonic() >= first_deadline:
                    logging.error("No session could be created within the start-up bound (%s, or the config's "
                                  "operation_timeout_in_ms): %s", "TENSORFLEET_STARTUP_SECONDS", e)
                    raise
                logging.info("An error was raised while a session was being created: %s. Retrying.", e)

    def _startup_deadline(self) -> float:
        config = getattr(self._creator, "_config", None)
        timeout_ms = int(getattr(config, "operation_timeout_in_ms", 0) or 0)
        return startup_wait.creation_deadline(Timeouts().startup_seconds, timeout_ms)

    @property
    def graph(self):
        return self._tf_sess.graph

    def _is_chief(self) -> bool:
        return isinstance(self._creator, ChiefSessionCreator)

    def should_stop(self):
        return (self._closed or self._hooked is None or self._hooked.should_stop() or self._coord.should_stop()
                or cluster_shutdown.cluster_released(self._server))

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        while True:
            if self._hooked is None:
                raise errors.OutOfRangeError(None, None, "Training finished (the chief released the cluster)")
            try:
                out = self._hooked.run(fetches, feed_dict=feed_dict, options=options, run_metadata=run_metadata)
                self._coord.raise_requested_exception()
                return out
            except _PREEMPTION_ERRORS as e:
                if not self._should_recover:
                    raise
                if cluster_shutdown.cluster_released(self._server):   # the chief ended training: no recovery
                    raise errors.OutOfRangeError(None, None, f"Training finished (the chief released the "
                                                             f"cluster): {e}") from e
                logging.info("An error was raised. This may be due to a preemption in a connected worker or "
                             "parameter server. The current session will be closed and a new session will be "
                             "created. Error: %s", e)
                self._close_inner(ignore_errors=True)
                self._create()
            except Exception:
                self._coord.request_stop()  # queue-runner threads stop too; join happens in close()
                raise

    def run_step_fn(self, step_fn):
        """Calls step_fn(step_context) with a context that has `session` (raw) and `run_with_hooks`."""
        outer = self

        class StepContext:
            session = property(lambda _: outer._tf_sess)

            def run_with_hooks(self, *args, **kwargs):
                return outer.run(*args, **kwargs)

            def request_stop(self):
                outer._hooked._should_stop = True

        return step_fn(StepContext())

    def _close_inner(self, ignore_errors=False):
        try:
            if self._coord is not None:
                self._coord.request_stop()
                self._coord.join(stop_grace_period_secs=self._stop_grace_period_secs, ignore_live_threads=True)
        except Exception:
            if not ignore_errors:
                raise
        finally:
            if self._tf_sess is not None:
                self._tf_sess.close()

    def close(self):
        # close() in an `except`/`finally` of an error (not the end of input) is not a normal end either
        in_flight, value = sys.exc_info()[:2]
        self._note_exit_error(in_flight, value)
        self._close_internal(None, release=in_flight is None or issubclass(in_flight, _END_OF_INPUT))

    def _note_exit_error(self, exception_type, exception_value) -> None:
        """An exception through a chief's close: its process does not release the cluster at exit unless it can
        tell that it exits with 0 (distributed/shutdown.py)."""
        if exception_type is not None and self._server is not None and self._is_chief():
            cluster_shutdown.note_chief_session_error(exception_type, exception_value)

    def _close_internal(self, exception_type=None, release=True):
        if self._closed:
            return
        try:
            if not exception_type and self._tf_sess is not None:
                for h in self._hooks:
                    _call(h, "end", self._tf_sess)
        finally:
            self._closed = True
            self._close_inner(ignore_errors=exception_type is not None)
        if release and not exception_type and self._server is not None and self._is_chief() \
                and not cluster_shutdown.process_crashed():
            cluster_shutdown.release_cluster(self._server)   # the chief's training ended: free the ps tasks

    def __enter__(self):
        return self

    def __exit__(self, exception_type, exception_value, traceback):
        self._note_exit_error(exception_type, exception_value)
        if exception_type is not None and issubclass(exception_type, _END_OF_INPUT):
            exception_type = None
        self._close_internal(exception_type)
        return exception_type is None  # suppresses OutOfRangeError / StopIteration, as TF does


class MonitoredSession(_MonitoredSession):
    """`tf.train.MonitoredSession(session_creator=None, hooks=None, stop_grace_period_secs=120)`: recovers."""

    def __init__(self, session_creator=None, hooks=None, stop_grace_period_secs=120):
        super().__init__(session_creator, hooks, should_recover=True, stop_grace_period_secs=stop_grace_period_secs)


class SingularMonitoredSession(_MonitoredSession):
    """`tf.train.SingularMonitoredSession`: a chief session, no recovery; `raw_session()` is the Session."""

    def __init__(self, hooks=None, scaffold=None, master="", config=None, checkpoint_dir=None,
                 stop_grace_period_secs=120, checkpoint_filename_with_path=None):
        creator = ChiefSessionCreator(scaffold=scaffold, master=master, config=config, checkpoint_dir=checkpoint_dir,
                                      checkpoint_filename_with_path=checkpoint_filename_with_path)
        super().__init__(creator, hooks, should_recover=False, stop_grace_period_secs=stop_grace_period_secs)

    def raw_session(self):
        return self._tf_sess


def MonitoredTrainingSession(master="", is_chief=True, checkpoint_dir=None, scaffold=None, hooks=None,  # noqa: C901
                             chief_only_hooks=None, save_checkpoint_secs=USE_DEFAULT,
                             save_summaries_steps=USE_DEFAULT, save_summaries_secs=USE_DEFAULT, config=None,
                             stop_grace_period_secs=120, log_step_count_steps=100, max_wait_secs=7200,
                             save_checkpoint_steps=USE_DEFAULT, summary_dir=None):
    """`tf.train.MonitoredTrainingSession`: a MonitoredSession with the standard hooks (TF 1.15 defaults)."""
    if save_summaries_steps is USE_DEFAULT and save_summaries_secs is USE_DEFAULT:
        save_summaries_steps, save_summaries_secs = 100, None
    elif save_summaries_secs is USE_DEFAULT:
        save_summaries_secs = None
    elif save_summaries_steps is USE_DEFAULT:
        save_summaries_steps = None
    if save_checkpoint_steps is USE_DEFAULT and save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_steps, save_checkpoint_secs = None, 600
    elif save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_secs = None
    elif save_checkpoint_steps is USE_DEFAULT:
        save_checkpoint_steps = None
    scaffold = scaffold or Scaffold()
    if not is_chief:
        creator = WorkerSessionCreator(scaffold=scaffold, master=master, config=config, max_wait_secs=max_wait_secs)
        return MonitoredSession(session_creator=creator, hooks=hooks or [],
                                stop_grace_period_secs=stop_grace_period_secs)
    all_hooks = list(chief_only_hooks or []) + list(hooks or [])
    creator = ChiefSessionCreator(scaffold=scaffold, checkpoint_dir=checkpoint_dir, master=master, config=config)
    summary_dir = summary_dir or checkpoint_dir
    if summary_dir:
        if log_step_count_steps and log_step_count_steps > 0:
            all_hooks.append(hooks_lib.StepCounterHook(output_dir=summary_dir, every_n_steps=log_step_count_steps))
        if (save_summaries_steps and save_summaries_steps > 0) or (save_summaries_secs and save_summaries_secs > 0):
            saver_hook = _summary_saver_hook(scaffold, save_summaries_steps, save_summaries_secs, summary_dir)
            if saver_hook is not None:
                all_hooks.append(saver_hook)
    if checkpoint_dir:
        if (save_checkpoint_secs and save_checkpoint_secs > 0) or (save_checkpoint_steps and save_checkpoint_steps > 0):
            all_hooks.append(hooks_lib.CheckpointSaverHook(checkpoint_dir, save_steps=save_checkpoint_steps,
                                                           save_secs=save_checkpoint_secs, scaffold=scaffold))
    return MonitoredSession(session_creator=creator, hooks=all_hooks, stop_grace_period_secs=stop_grace_period_secs)


def _summary_saver_hook(scaffold, save_steps, save_secs, output_dir):
    from ..summary.saver_hook import SummarySaverHook
    return SummarySaverHook(scaffold=scaffold, save_steps=save_steps, save_secs=save_secs, output_dir=output_dir)
