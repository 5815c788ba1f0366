"""`tf.train.SessionManager`: creates a session that is initialised, restored, or waited on until ready.

Part of the training-loop layer (train/), below `MonitoredSession` and
`Supervisor`. It uses only the public Session API (`run`, `graph`, `close`), so
it works unchanged on a remote (`grpc://`) session: readiness is a fetch of
`tf.report_uninitialized_variables()` (a string tensor of names; empty when ready).

`wait_for_session` polls every `recovery_wait_secs` (default 0.5 s here; TF's
default is 30 s, which makes workers that start before the chief idle for up
to half a minute).
"""
from __future__ import annotations

import time

import numpy as np

from .. import errors
from ..distributed import shutdown as cluster_shutdown
from ..ops.string_ops import report_uninitialized_variables
from ..platform import tf_logging as logging
from . import checkpoint_management

__all__ = ["SessionManager", "report_uninitialized_variables"]

#: how often a non-chief checks whether the chief has initialised the variables (TF: 30 s)
DEFAULT_RECOVERY_WAIT_SECS = 0.5


def _not_ready(op, sess):
    """None when ready, else a message naming what is not ready."""
    if op is None:
        return None
    try:
        names = [n.decode() if isinstance(n, bytes) else str(n) for n in np.asarray(sess.run(op)).ravel()]
    except errors.FailedPreconditionError as e:
        return f"Model not ready: {e}"
    if not names:
        return None
    return "Variables not initialized: " + ", ".join(names)


class SessionManager:
    """`tf.train.SessionManager(local_init_op, ready_op, ready_for_local_init_op, graph, recovery_wait_secs)`."""

    def __init__(self, local_init_op=None, ready_op=None, ready_for_local_init_op=None, graph=None,
                 recovery_wait_secs=DEFAULT_RECOVERY_WAIT_SECS, local_init_run_options=None,
                 local_init_feed_dict=None):
        from ..default_graph import get_default_graph
        self._local_init_op = local_init_op
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._graph = graph if graph is not None else get_default_graph()
        self._recovery_wait_secs = recovery_wait_secs
        self._local_init_run_options = local_init_run_options
        self._local_init_feed_dict = local_init_feed_dict
        if ready_for_local_init_op is not None and local_init_op is None:
            raise ValueError("If you pass a ready_for_local_init_op you must also pass a local_init_op, "
                             f"ready_for_local_init_op [{ready_for_local_init_op}]")

    def _new_session(self, master, config):
        from ..session import Session
        return Session(master, graph=self._graph, config=config)

    def _restore_checkpoint(self, master, saver=None, checkpoint_dir=None, checkpoint_filename_with_path=None,
                            wait_for_checkpoint=False, max_wait_secs=7200, config=None):
        sess = self._new_session(master, config)
        if checkpoint_dir and checkpoint_filename_with_path:
            raise ValueError("Can not provide both checkpoint_dir and checkpoint_filename_with_path.")
        if not saver or not (checkpoint_dir or checkpoint_filename_with_path):
            return sess, False
        if checkpoint_filename_with_path:
            saver.restore(sess, checkpoint_filename_with_path)
            return sess, True
        wait_time = 0.0
        ckpt = checkpoint_management.get_checkpoint_state(checkpoint_dir)
        while not ckpt or not ckpt.model_checkpoint_path:
            if wait_for_checkpoint and wait_time < max_wait_secs:
                logging.info("Waiting for checkpoint to be available.")
                time.sleep(self._recovery_wait_secs)
                wait_time += self._recovery_wait_secs
                ckpt = checkpoint_management.get_checkpoint_state(checkpoint_dir)
            else:
                return sess, False
        saver.restore(sess, ckpt.model_checkpoint_path)
        # as TF 1.15: the saver takes over the restored directory's checkpoints, so `max_to_keep` counts them and a
        # restarted job deletes the oldest
        saver.recover_last_checkpoints(list(ckpt.all_model_checkpoint_paths))
        return sess, True

    def prepare_session(self, master, init_op=None, saver=None, checkpoint_dir=None, wait_for_checkpoint=False,
                        max_wait_secs=7200, config=None, init_feed_dict=None, init_fn=None,
                        checkpoint_filename_with_path=None):
        """A session restored from the latest checkpoint if there is one, else initialised (init_op, init_fn)."""
        sess, is_loaded = self._restore_checkpoint(master, saver, checkpoint_dir, checkpoint_filename_with_path,
                                                   wait_for_checkpoint, max_wait_secs, config)
        try:
            if not is_loaded:
                if init_op is None and not init_fn and self._local_init_op is None:
                    raise RuntimeError("Model is not initialized and no init_op or init_fn or local_init_op "
                                       "was given")
                if init_op is not None:
                    sess.run(init_op, feed_dict=init_feed_dict)
                if init_fn:
                    init_fn(sess)
            local_init_success, msg = self._try_run_local_init_op(sess)
            if not local_init_success:
                raise RuntimeError(f"Init operations did not make model ready for local_init. Init op: "
                                   f"{_name(init_op)}, init fn: {init_fn}, error: {msg}")
            not_ready = _not_ready(self._ready_op, sess)
            if not_ready is not None:
                raise RuntimeError(f"Init operations did not make model ready. Init op: {_name(init_op)}, "
                                   f"init fn: {init_fn}, local_init_op: {_name(self._local_init_op)}, "
                                   f"error: {not_ready}")
        except BaseException:
            sess.close()
            raise
        return sess

    def recover_session(self, master, saver=None, checkpoint_dir=None, wait_for_checkpoint=False,
                        max_wait_secs=7200, config=None, local_init_feed_dict=None,
                        checkpoint_filename_with_path=None):
        """(session, True) when restored from a checkpoint and ready, else (session, False)."""
        sess, is_loaded = self._restore_checkpoint(master, saver, checkpoint_dir, checkpoint_filename_with_path,
                                                   wait_for_checkpoint, max_wait_secs, config)
        local_init_success, msg = self._try_run_local_init_op(sess)
        if not is_loaded:
            return sess, False
        if not local_init_success:
            logging.info("Restoring model from %s did not make model ready for local init: %s", checkpoint_dir, msg)
            return sess, False
        not_ready = _not_ready(self._ready_op, sess)
        if not_ready is not None:
            logging.info("Restoring model from %s did not make model ready: %s", checkpoint_dir, not_ready)
            return sess, False
        logging.info("Restored model from %s", checkpoint_dir)
        return sess, is_loaded

    def wait_for_session(self, master, config=None, max_wait_secs=float("Inf")):
        """Polls (every recovery_wait_secs) until another task made the model ready; returns the session.

        Raises DeadlineExceededError after max_wait_secs.
        """
        if max_wait_secs is None:
            max_wait_secs = float("Inf")
        deadline = time.monotonic() + max_wait_secs
        server = cluster_shutdown.server_for_target(master)
        while True:
            sess = self._new_session(master, config)
            not_ready_msg = None
            try:
                local_init_success, not_ready_msg = self._try_run_local_init_op(sess)
                if local_init_success:
                    not_ready_msg = _not_ready(self._ready_op, sess)
                    if not_ready_msg is None:
                        return sess
            except (errors.UnavailableError, errors.AbortedError) as e:
                not_ready_msg = str(e)
            sess.close()
            if cluster_shutdown.cluster_released(server):   # the chief finished, and the model is not there
                raise errors.OutOfRangeError(None, None, f"Training finished (the chief released the cluster) "
                                                         f"before the model was ready on this task: {not_ready_msg}")
            remaining = deadline - time.monotonic()
            if remaining < self._recovery_wait_secs:
                raise errors.DeadlineExceededError(None, None, f"Session was not ready after waiting "
                                                               f"{max_wait_secs} secs: {not_ready_msg}")
            logging.info("Waiting for model to be ready. Ready_for_local_init_op: %s, ready: %s",
                         _name(self._ready_for_local_init_op), not_ready_msg)
            time.sleep(self._recovery_wait_secs)

    def _try_run_local_init_op(self, sess):
        if self._local_init_op is None:
            return True, None
        msg = _not_ready(self._ready_for_local_init_op, sess)
        if msg is not None:
            return False, msg
        sess.run(self._local_init_op, feed_dict=self._local_init_feed_dict, options=self._local_init_run_options)
        return True, None


def _name(op):
    return getattr(op, "name", op)
