"""`tf.train.Supervisor`: TF1's older training-loop helper (chief init/restore, checkpoint and summary threads).

Part of the training-loop layer (train/), beside `MonitoredSession`: it builds
the default init/ready/local-init ops and saver, prepares the session through
`SessionManager` (the chief initialises or restores from `logdir`, other tasks
wait for it: polling every `recovery_wait_secs`, 0.5 s by default here where
TF waits 30 s), and runs standard services as `LooperThread`s on its
`Coordinator` (chief only, each running at once and then every interval, as TF's `LooperThread`s): a
checkpoint every `save_model_secs` (so `model.ckpt-<step>` at start), summaries and the `global_step/sec`
step counter every `save_summaries_secs`. The chief also writes `graph.pbtxt`, the graph and the meta graph
to its event file and a SessionLog START, as TF 1.15's. Non-chief supervisors have no logdir, checkpoints or
summary writer, as in TF. Only the public Session API is used.

End of training (`distributed/shutdown.py`): the chief's `stop()` without an error releases the
cluster (tells the other workers, stops every ps); a chief whose session runs on a server of this
process also releases it when the process exits normally without calling `stop()`. A worker told
that training finished sees `should_stop()` true.
"""
from __future__ import annotations

import atexit
import contextlib
import os
import sys
import time

from .. import errors
from ..default_graph import get_default_graph
from ..distributed import shutdown as cluster_shutdown
from ..graph import GraphKeys
from ..ops import control_flow_ops, state_ops
from ..platform import tf_logging as logging
from . import training_util
from .coordinator import Coordinator, LooperThread
from .meta_graph import export_meta_graph
from .saver import Saver
from .session_manager import DEFAULT_RECOVERY_WAIT_SECS, SessionManager, report_uninitialized_variables
from .sync_replicas_optimizer import LEAVE_OPS, give_tokens_back

#: how long a non-chief worker's exit may wait to give its SyncReplicasOptimizer tokens back
_LEAVE_AT_EXIT_MS = 5000

__all__ = ["Supervisor", "basic_train_loop"]


def _file_writer(logdir, graph):
    from ..summary.writer import FileWriterCache
    return FileWriterCache.get(logdir)


class Supervisor:
    """`tf.train.Supervisor` (TF 1.15's arguments; `recovery_wait_secs` defaults to 0.5 s, TF's to 30 s)."""

    USE_DEFAULT = 0

    def __init__(self, graph=None, ready_op=USE_DEFAULT, ready_for_local_init_op=USE_DEFAULT, is_chief=True,
                 init_op=USE_DEFAULT, init_feed_dict=None, local_init_op=USE_DEFAULT, logdir=None,
                 summary_op=USE_DEFAULT, saver=USE_DEFAULT, global_step=USE_DEFAULT, save_summaries_secs=120,
                 save_model_secs=600, recovery_wait_secs=DEFAULT_RECOVERY_WAIT_SECS, stop_grace_secs=120,
                 checkpoint_basename="model.ckpt", session_manager=None, summary_writer=USE_DEFAULT, init_fn=None,
                 local_init_run_options=None):
        self._graph = graph if graph is not None else get_default_graph()
        with self._graph.as_default():
            self._init_ready_op(ready_op, ready_for_local_init_op)
            self._init_init_op(init_op, init_feed_dict)
            self._init_local_init_op(local_init_op)
            self._init_saver(saver)
            self._init_summary_op(summary_op)
            self._init_global_step(global_step)
        self._meta_graph_def = export_meta_graph(graph=self._graph, saver_def=self._saver.saver_def
                                                 if self._saver is not None else None)
        self._is_chief = is_chief
        self._leaving = None   # a non-chief's session, while a SyncReplicasOptimizer token is to give back
        self._coord = Coordinator()
        self._recovery_wait_secs = recovery_wait_secs
        self._stop_grace_secs = stop_grace_secs
        self._init_fn = init_fn
        self._local_init_run_options = local_init_run_options
        # only the chief checkpoints and writes events (TF sets these to None for the others)
        self._logdir = logdir if is_chief else None
        self._save_summaries_secs = save_summaries_secs if is_chief else None
        self._save_model_secs = save_model_secs if is_chief else None
        self._save_path = os.path.join(logdir, checkpoint_basename) if is_chief and logdir else None
        if is_chief and logdir and summary_writer is Supervisor.USE_DEFAULT:
            os.makedirs(logdir, exist_ok=True)
            summary_writer = _file_writer(logdir, self._graph)
        self._summary_writer = None if summary_writer is Supervisor.USE_DEFAULT or not is_chief else summary_writer
        self._graph_added_to_summary = False
        self._session_manager = session_manager or SessionManager(
            local_init_op=self._local_init_op, ready_op=self._ready_op,
            ready_for_local_init_op=self._ready_for_local_init_op, graph=self._graph,
            recovery_wait_secs=recovery_wait_secs, local_init_run_options=local_init_run_options)
        self._started_threads: list = []
        self._server = None   # the tf.train.Server of this process the sessions run on, if any
        self._graph.finalize()

    # -- defaults (TF's _init_* methods) ------------------------------------------
    def _first(self, key):
        items = self._graph.get_collection(key)
        if len(items) > 1:
            raise RuntimeError(f"More than one item in the collection \"{key}\". Please indicate which one to use "
                               "by passing it to the constructor.")
        return items[0] if items else None

    def _init_ready_op(self, ready_op, ready_for_local_init_op):
        if ready_op is Supervisor.USE_DEFAULT:
            ready_op = self._first(GraphKeys.READY_OP)
            if ready_op is None:
                ready_op = report_uninitialized_variables()
        self._ready_op = ready_op
        if ready_for_local_init_op is Supervisor.USE_DEFAULT:
            ready_for_local_init_op = self._first("ready_for_local_init_op")
        self._ready_for_local_init_op = ready_for_local_init_op

    def _init_init_op(self, init_op, init_feed_dict):
        if init_op is Supervisor.USE_DEFAULT:
            init_op = self._first(GraphKeys.INIT_OP)
            if init_op is None:
                init_op = state_ops.global_variables_initializer()
        self._init_op = init_op
        self._init_feed_dict = init_feed_dict

    def _init_local_init_op(self, local_init_op):
        if local_init_op is Supervisor.USE_DEFAULT:
            local_init_op = self._first(GraphKeys.LOCAL_INIT_OP)
            if local_init_op is None and state_ops.local_variables():
                local_init_op = control_flow_ops.group(state_ops.local_variables_initializer())
        self._local_init_op = local_init_op

    def _init_saver(self, saver):
        if saver is Supervisor.USE_DEFAULT:
            saver = self._first(GraphKeys.SAVERS)
            if saver is None and state_ops.global_variables():
                saver = Saver()
                self._graph.add_to_collection(GraphKeys.SAVERS, saver)
        self._saver = saver

    def _init_summary_op(self, summary_op):
        if summary_op is Supervisor.USE_DEFAULT:
            from .. import summary  # late: tensorfleet.summary imports tensorfleet.train at load
            summary_op = summary.merge_all()
        self._summary_op = summary_op

    def _init_global_step(self, global_step):
        if global_step is Supervisor.USE_DEFAULT:
            global_step = training_util.get_global_step(self._graph)
        self._global_step = global_step

    # -- properties -------------------------------------------------------------
    is_chief = property(lambda self: self._is_chief)
    session_manager = property(lambda self: self._session_manager)
    coord = property(lambda self: self._coord)
    init_op = property(lambda self: self._init_op)
    init_feed_dict = property(lambda self: self._init_feed_dict)
    ready_op = property(lambda self: self._ready_op)
    ready_for_local_init_op = property(lambda self: self._ready_for_local_init_op)
    summary_writer = property(lambda self: self._summary_writer)
    summary_op = property(lambda self: self._summary_op)
    save_summaries_secs = property(lambda self: self._save_summaries_secs)
    global_step = property(lambda self: self._global_step)
    saver = property(lambda self: self._saver)
    save_model_secs = property(lambda self: self._save_model_secs)
    save_path = property(lambda self: self._save_path)
    logdir = property(lambda self: self._logdir)

    # -- sessions ----------------------------------------------------------------
    def prepare_or_wait_for_session(self, master="", config=None, wait_for_checkpoint=False, max_wait_secs=7200,
                                    start_standard_services=True):
        """The chief initialises or restores (from logdir); others wait until it has. Starts the services."""
        self._coord.clear_stop()
        self._server = cluster_shutdown.server_for_target(master)
        if self._is_chief:
            sess = self._session_manager.prepare_session(
                master, init_op=self.init_op, saver=self.saver, checkpoint_dir=self._logdir,
                wait_for_checkpoint=wait_for_checkpoint, max_wait_secs=max_wait_secs, config=config,
                init_feed_dict=self._init_feed_dict, init_fn=self._init_fn)
            self._write_graph()
            if start_standard_services:
                logging.info("Starting standard services.")
                self.start_standard_services(sess)
            if self._server is not None:
                cluster_shutdown.register_chief_exit(self._server)
        else:
            sess = self._session_manager.wait_for_session(master, config=config, max_wait_secs=max_wait_secs)
            if self._graph.get_collection(LEAVE_OPS):   # SyncReplicasOptimizer: leaving gives tokens back
                if self._leaving is None:
                    atexit.register(self._give_tokens_back, _LEAVE_AT_EXIT_MS)
                self._leaving = sess
        if start_standard_services:
            self.start_queue_runners(sess)
        return sess

    def _write_graph(self) -> None:
        """The chief: `graph.pbtxt` in logdir, the graph and the meta graph in the event file (once)."""
        if self._logdir:
            from ..graph_io import write_graph   # late: graph_io sits above train in the import order
            write_graph(self._graph, self._logdir, "graph.pbtxt")
        if self._summary_writer is not None and not self._graph_added_to_summary:
            self._summary_writer.add_graph(self._graph)
            self._summary_writer.add_meta_graph(self._meta_graph_def)
            self._graph_added_to_summary = True

    def start_standard_services(self, sess) -> list:
        """Chief only, with a logdir: a SessionLog START, then threads that run at once and then every interval:
        summaries and the `global_step/sec` step counter (save_summaries_secs), a checkpoint (save_model_secs)."""
        if not self._is_chief:
            raise RuntimeError("Only chief supervisor can start standard services. Because only chief supervisors "
                               "can write events.")
        if not self._logdir:
            logging.warning("Standard services need a 'logdir' passed to the SessionManager")
            return []
        from ..summary import SessionLog   # late: tensorfleet.summary imports tensorfleet.train at load
        if self._global_step is not None and self._summary_writer is not None:
            self._summary_writer.add_session_log(SessionLog(status=SessionLog.START),
                                                 training_util.global_step(sess, self._global_step))
        threads = []
        if self._save_summaries_secs and self._summary_writer is not None:
            if self._summary_op is not None:
                threads.append(self.loop(self._save_summaries_secs, self._write_summary, args=(sess,)))
            if self._global_step is not None:
                threads.append(_StepCounter(self, sess))
        if self._saver is not None and self._save_model_secs:
            threads.append(self.loop(self._save_model_secs, self._save_checkpoint, args=(sess,)))
        return threads

    def _save_checkpoint(self, sess):
        from ..summary import SessionLog
        logging.info("Saving checkpoint to path %s", self._save_path)
        self._saver.save(sess, self._save_path, global_step=self._global_step)
        if self._summary_writer is not None and self._global_step is not None:
            self._summary_writer.add_session_log(SessionLog(status=SessionLog.CHECKPOINT,
                                                            checkpoint_path=self._save_path),
                                                 training_util.global_step(sess, self._global_step))

    def _write_summary(self, sess):
        if self._global_step is not None:
            summary, step = sess.run([self._summary_op, self._global_step])
        else:
            summary, step = sess.run(self._summary_op), None
        logging.info("Recording summary at step %s.", step)
        self._summary_writer.add_summary(summary, step)

    def start_queue_runners(self, sess, queue_runners=None) -> list:
        """Starts the given queue runners (default: the graph's) on the supervisor's coordinator."""
        if queue_runners is None:
            queue_runners = self._graph.get_collection(GraphKeys.QUEUE_RUNNERS)
        threads = []
        for qr in queue_runners:
            threads.extend(qr.create_threads(sess, coord=self._coord, daemon=True, start=True))
        self._started_threads.extend(threads)
        return threads

    def loop(self, timer_interval_secs, target, args=None, kwargs=None):
        """Runs target(*args) every timer_interval_secs on a thread the coordinator stops."""
        looper = LooperThread(self._coord, timer_interval_secs, target=target, args=args, kwargs=kwargs)
        looper.start()
        self._started_threads.append(looper)
        return looper

    def summary_computed(self, sess, summary, global_step=None) -> None:
        """Writes a summary computed by the caller (at the current global step by default)."""
        if not self._summary_writer:
            raise RuntimeError("Writing a summary requires a summary writer.")
        if global_step is None and self._global_step is not None:
            global_step = int(sess.run(self._global_step))
        self._summary_writer.add_summary(summary, global_step)

    def should_stop(self) -> bool:
        return self._coord.should_stop() or cluster_shutdown.cluster_released(self._server)

    def request_stop(self, ex=None) -> None:
        self._coord.request_stop(ex=ex)

    def stop_on_exception(self):
        return self._coord.stop_on_exception()

    def wait_for_stop(self):
        self._coord.wait_for_stop()

    def stop(self, threads=None, close_summary_writer=True, ignore_live_threads=False) -> None:
        """Stops the services and queue runners, joins them (re-raising a requested exception). The chief's
        stop without an error releases the cluster (every ps stops serving: distributed/shutdown.py)."""
        in_flight, value = sys.exc_info()[:2]   # stop() in an `except`/`finally` of an error is not a normal end
        if in_flight is not None and self._is_chief and self._server is not None:
            cluster_shutdown.note_chief_session_error(in_flight, value)   # nor is the process's exit
        self._coord.request_stop()
        try:
            self._coord.join(self._started_threads + list(threads or []),
                             stop_grace_period_secs=self._stop_grace_secs, ignore_live_threads=ignore_live_threads)
        finally:
            self._started_threads = []
            if close_summary_writer and self._summary_writer is not None:
                self._summary_writer.flush()
        self._give_tokens_back()
        if self._is_chief and self._server is not None and not cluster_shutdown.process_crashed() \
                and (in_flight is None or issubclass(in_flight, errors.OutOfRangeError)):
            cluster_shutdown.release_cluster(self._server)

    def _give_tokens_back(self, timeout_ms: int = 0) -> None:
        """Beyond TF: a non-chief worker leaving (`stop()`, else its process's exit: TF's `mnist_replica.py`
        never stops its Supervisor) gives its SyncReplicasOptimizer tokens back (`give_tokens_back`)."""
        if self._leaving is not None:
            give_tokens_back(self._leaving, timeout_ms=timeout_ms)

    @contextlib.contextmanager
    def managed_session(self, master="", config=None, start_standard_services=True, close_summary_writer=True):
        """A session whose services stop (and whose exception, unless OutOfRangeError, re-raises) on exit."""
        sess = None
        try:
            sess = self.prepare_or_wait_for_session(master=master, config=config,
                                                    start_standard_services=start_standard_services)
            yield sess
        except Exception as e:  # noqa: B902  (TF: the coordinator decides what re-raises in stop())
            if self._is_chief and self._server is not None:
                cluster_shutdown.note_chief_session_error(type(e), e)
            self.request_stop(e)
        finally:
            try:
                self.stop(close_summary_writer=close_summary_writer)
            finally:
                if sess is not None:
                    try:
                        sess.close()
                    except Exception as e:  # noqa: BLE001  (TF ignores errors closing the session here)
                        logging.info("Error closing the session: %s", e)


class _StepCounter(LooperThread):
    """TF's SVStepCounterThread: `<global step op>/sec` steps per second, every save_summaries_secs."""

    def __init__(self, sv, sess):
        super().__init__(sv.coord, sv.save_summaries_secs)
        self._sv, self._sess = sv, sess
        self._tag = "%s/sec" % sv.global_step.op.name
        self._last_time, self._last_step = 0.0, 0
        self._logged = 0
        self.start()
        sv._started_threads.append(self)

    def start_loop(self):
        self._last_time = time.time()
        self._last_step = training_util.global_step(self._sess, self._sv.global_step)

    def run_loop(self):
        from ..summary import Summary
        step = training_util.global_step(self._sess, self._sv.global_step)
        now = time.time()
        elapsed, added = now - self._last_time, step - self._last_step
        self._last_time, self._last_step = now, step
        rate = added / elapsed if elapsed > 0 else float("inf")
        self._sv.summary_writer.add_summary(Summary(value=[Summary.Value(tag=self._tag, simple_value=rate)]), step)
        if self._logged < 10:
            self._logged += 1
            logging.info("%s: %g", self._tag, rate)


def basic_train_loop(supervisor, train_step_fn, args=None, kwargs=None, master=""):
    """`tf.train.basic_train_loop`: `train_step_fn(sess, *args, **kwargs)` in a managed session until the
    supervisor says stop."""
    with supervisor.managed_session(master) as sess:
        while not supervisor.should_stop():
            train_step_fn(sess, *(args or ()), **(kwargs or {}))
