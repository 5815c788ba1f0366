"""The chief and worker roles of the built-in models (and the single process without TF_CONFIG).

Flow: cli.py -> startup.wait_for_peers -> `train(...)` here. The TF1 between-graph idiom: in a cluster
this task starts its `tf.train.Server`, builds the model under
`tf.device(tf.train.replica_device_setter(cluster=...))` (variables on the ps tasks; in a worker-only
cluster on the chief, worker 0) and trains through `tf.Session(server.target)` with device filters
limited to the ps tasks and itself. The chief restores the latest checkpoint or initialises the
variables (unless a surviving ps still holds them); the other workers wait until the variables are
initialised. Every task trains until the global step reaches `--steps`.

The chief saves a checkpoint every `--save-checkpoint-steps`, on SIGTERM (then exits 143) and at the
end, where it also evaluates the test split, writes the "complete" marker the evaluator waits for
(checkpoints.py) and, with `--export-dir`, the SavedModel (export.py) before it releases the ps tasks.
A lost peer (`UnavailableError`, `AbortedError`, `DeadlineExceededError`) is recovered from: wait for the
peers again for `--recovery-timeout` and open a new session, at most `--max-recoveries` times; a ps that
stays away exits PS_UNAVAILABLE, another peer LOST_PEER.
"""
from __future__ import annotations

import logging
import time
from typing import Any, Optional

import tensorfleet as _tensorfleet

from . import checkpoints, export, models, runlog, startup
from .exit_codes import ExitCode, LauncherExit
from .sync_step import BarrierStep
from .task import Task

tf: Any = _tensorfleet   # its namespace is filled at import time: no static attributes

RECOVERABLE_ERRORS = (tf.errors.UnavailableError, tf.errors.AbortedError, tf.errors.DeadlineExceededError)
INIT_POLL_SECONDS = 0.25
SYNC_THREADS_GRACE = 2.0   # seconds the sync queue runner's threads get to stop after training


class _Progress:
    """Steps and examples since the last progress line."""

    def __init__(self):
        self.start, self.steps, self.examples = time.monotonic(), 0, 0

    def add(self, examples: int) -> None:
        self.steps += 1
        self.examples += examples

    def rates(self) -> tuple:
        seconds = max(time.monotonic() - self.start, 1e-9)
        return self.steps / seconds, self.examples / seconds

    def reset(self) -> None:
        self.start, self.steps, self.examples = time.monotonic(), 0, 0


def _require(name: str, holder, what: str):
    if not hasattr(holder, name):
        raise LauncherExit(ExitCode.TRAINING_ERROR, f"this tensorfleet build has no {what}: the distributed "
                                                    "roles need the distributed runtime (issue 10)")
    return getattr(holder, name)


class _Placement:
    """Where this task's graph runs: a local session, or a server plus device setter in a cluster."""

    def __init__(self, task: Task):
        self.task = task
        self.server = None
        self.target = ""
        self.config = None
        self.device_fn = None
        if not task.is_distributed:
            return
        cluster = _require("ClusterSpec", tf.train, "tf.train.ClusterSpec")(task.training_cluster())
        setter = _require("replica_device_setter", tf.train, "tf.train.replica_device_setter")
        self.server = _require("Server", tf.train, "tf.train.Server")(cluster, job_name=task.type,
                                                                      task_index=task.index)
        self.target = self.server.target
        own = f"/job:{task.type}/task:{task.index}"
        if task.cluster.get("ps"):
            self.device_fn = setter(worker_device=own, cluster=cluster)
            filters = ["/job:ps", own]
        else:   # worker-only: the chief's task holds the variables
            holder = f"/job:{task.chief_job}/task:0"
            self.device_fn = setter(ps_tasks=1, ps_device=holder, worker_device=own)
            filters = sorted({holder, own})
        self.config = tf.ConfigProto(device_filters=filters)
        runlog.log("server_started", f"{task.name} serving at {self.target}", target=self.target)


def _uninitialized_op():
    if hasattr(tf, "report_uninitialized_variables"):
        return tf.report_uninitialized_variables(tf.global_variables())
    return [tf.is_variable_initialized(v) for v in tf.global_variables()]


def _count_uninitialized(sess, op) -> int:
    values = sess.run(op)
    if isinstance(op, list):
        return sum(not bool(v) for v in values)
    return len(values)


class Trainer:
    def __init__(self, args, task: Task, shutdown, telemetry):
        self.args, self.task, self.shutdown, self.telemetry = args, task, shutdown, telemetry
        self.is_chief = task.is_chief
        self.data = models.load_data(args.data, seed=task.index)
        self.checkpoint_dir: str = (args.checkpoint_dir or "") if self.is_chief else ""   # "": no checkpoints
        self._saved: tuple = (-1, None)   # (global step, path) of the last checkpoint written
        self.sync_optimizer: Any = None   # the SyncReplicasOptimizer with --sync-replicas
        self.sync_hook: Any = None
        self.stale_op: Any = None   # the chief: stale gradient pushes dropped so far, if the optimizer counts them
        self._stale_seen = 0
        self.barrier: Optional[BarrierStep] = None
        self.graph = tf.Graph()
        with self.graph.as_default():
            tf.set_random_seed(0)
            self.placement = _Placement(task)
            with tf.device(self.placement.device_fn):
                self.model = models.build(args.model, int(self.data.train.images.shape[1]), args.learning_rate,
                                          optimizer_wrapper=self._sync_wrapper())
                # how many non-chief workers have finished (lives with the variables; never checkpointed)
                self.workers_done = tf.Variable(0, trainable=False, name="tensorfleet_workers_done")
                self.mark_done = tf.assign_add(self.workers_done, 1)
                if self.sync_optimizer is not None:    # the step split at the barrier, to time the wait
                    self.barrier = BarrierStep.build(self.sync_optimizer, self.model.train_op, self.model.global_step)
            if self.sync_optimizer is not None:   # its local init, tokens and (chief) queue runner ops
                self.sync_hook = self.sync_optimizer.make_session_run_hook(self.is_chief, num_tokens=-1)
                self.sync_hook.begin()
                if self.is_chief and hasattr(self.sync_optimizer, "stale_gradients"):   # tensorfleet's extension
                    self.stale_op = self.sync_optimizer.stale_gradients()
            model_vars = self.model_vars = [v for v in tf.global_variables() if v is not self.workers_done]
            self.init_op = tf.global_variables_initializer()
            self.init_done_counter = tf.variables_initializer([self.workers_done])
            # global variables only: the sync optimizer's local step is each task's own (its local init op)
            self.uninitialized = _uninitialized_op()
            self.saver = (tf.train.Saver(var_list=model_vars, max_to_keep=args.keep_checkpoints)
                          if self.checkpoint_dir else None)
            self.summary_op, self.summary_writer = self._summaries()

    def _sync_wrapper(self):
        """`--sync-replicas`: wraps the model's optimizer in `tf.train.SyncReplicasOptimizer` (TF 1.15): every
        global step averages `--replicas-to-aggregate` gradients (default: every chief/worker task); the chief's
        queue runner applies them and hands out the tokens the replicas wait for."""
        if not self.args.sync_replicas:
            return None
        total = self.task.num_replicas
        aggregate = self.args.replicas_to_aggregate or total

        def wrap(opt):
            self.sync_optimizer = tf.train.SyncReplicasOptimizer(opt, replicas_to_aggregate=aggregate,
                                                                 total_num_replicas=total)
            return self.sync_optimizer
        runlog.log("sync_replicas", f"averaging {aggregate} gradient(s) a step from {total} replica(s)",
                   replicas_to_aggregate=aggregate, total_num_replicas=total)
        return wrap

    def _summaries(self):
        """Loss and accuracy scalars written by the chief to the checkpoint directory (TensorBoard)."""
        if not (self.is_chief and self.checkpoint_dir and hasattr(tf, "summary")
                and hasattr(tf.summary, "FileWriter")):
            return None, None
        op = tf.summary.merge([tf.summary.scalar("loss", self.model.loss),
                               tf.summary.scalar("accuracy", self.model.accuracy)])
        return op, tf.summary.FileWriter(self.checkpoint_dir, self.graph)

    # --- the session -------------------------------------------------------------------------------
    def run(self) -> int:
        self.telemetry.target_steps(self.args.steps)
        if self.is_chief and self.checkpoint_dir:
            checkpoints.clear_stale_marker(self.checkpoint_dir, self.args.steps)
            # the checkpoints an earlier run of this chief listed count against --keep-checkpoints (a restarted
            # pod deletes the oldest), whether it restores from them or the ps still hold the variables
            state = tf.train.get_checkpoint_state(self.checkpoint_dir)
            if state is not None and self.saver is not None:
                self.saver.recover_last_checkpoints(list(state.all_model_checkpoint_paths))
        recoveries = 0
        try:
            while True:
                try:
                    return self._session()
                except RECOVERABLE_ERRORS as e:
                    if self.shutdown.requested:   # peers going away during a pod shutdown: the signal's code
                        runlog.log("peer_lost", f"after the signal: {type(e).__name__}", level=logging.WARNING)
                        return self.shutdown.exit_code
                    if not self.task.is_distributed:
                        raise
                    recoveries += 1
                    runlog.log("peer_lost", f"{type(e).__name__}: {e.message if hasattr(e, 'message') else e}",
                               recovery=recoveries)
                    peers = self.task.peers_needed()
                    if recoveries > self.args.max_recoveries:
                        raise LauncherExit(ExitCode.LOST_PEER, f"gave up after {self.args.max_recoveries} "
                                                               f"recoveries: {e}") from None
                    startup.wait_for_peers(peers, self.args.recovery_timeout, exit_code=startup.recovery_exit_code,
                                           stop=lambda: self.shutdown.requested, what="recovery")
        finally:
            if self.summary_writer is not None:
                self.summary_writer.close()

    def _prepare(self, sess) -> int:
        if self.is_chief:
            if self.task.is_distributed and _count_uninitialized(sess, self.uninitialized) == 0:
                runlog.log("variables_ready", "the ps tasks still hold initialised variables: continuing")
            else:
                latest = tf.train.latest_checkpoint(self.checkpoint_dir) if self.checkpoint_dir else None
                if latest and self.saver is not None:
                    self.saver.restore(sess, latest)
                    sess.run(self.init_done_counter)
                    runlog.log("restored", f"restored {latest}", path=latest)
                else:
                    sess.run(self.init_op)
                    runlog.log("initialized", "variables initialised")
        else:
            deadline = time.monotonic() + self.args.startup_timeout
            logged = False
            while (missing := _count_uninitialized(sess, self.uninitialized)) > 0:
                if not logged:
                    runlog.log("waiting_for_chief", f"{missing} variable(s) not initialised yet: waiting for the chief")
                    logged = True
                if time.monotonic() > deadline:
                    raise LauncherExit(ExitCode.STARTUP_TIMEOUT, f"the chief did not initialise the variables "
                                                                 f"within {self.args.startup_timeout:g} s")
                if self.shutdown.event.wait(INIT_POLL_SECONDS):
                    return -1
        return int(sess.run(self.model.global_step))

    def _session(self) -> int:
        with tf.Session(self.placement.target, graph=self.graph, config=self.placement.config) as sess:
            step = self._prepare(sess)
            if step < 0:
                return self.shutdown.exit_code
            coord = self._start_sync(sess)
            try:
                return self._train_loop(sess, step, coord)
            finally:
                _stop_threads(coord)

    def _start_sync(self, sess):
        """With --sync-replicas: the hook's `after_create_session` runs the local step's init op (the chief's
        also resets the accumulators), and on the chief puts the first tokens in the queue and starts the
        queue runner that applies each step's averaged gradients. Returns the coordinator of its threads."""
        if self.sync_hook is None:
            return None
        coord = tf.train.Coordinator()
        self.sync_hook.after_create_session(sess, coord)
        return coord

    def _train_loop(self, sess, step: int, coord=None) -> int:
        args, model = self.args, self.model
        runlog.log("training", f"training {args.model} from global step {step} to {args.steps}",
                   global_step=step, target_steps=args.steps)
        self.telemetry.global_step(step)
        progress, local_steps, last_saved = _Progress(), 0, step
        while step < args.steps and not self.shutdown.requested:
            if coord is not None and coord.should_stop():   # the sync queue runner failed (a lost ps...)
                coord.raise_requested_exception()
            xs, ys = self.data.train.next_batch(args.batch_size)
            feeds = {model.x: xs, model.labels: ys, **model.train_feeds}
            log_now = (local_steps + 1) % args.log_every == 0
            fetches = [model.loss]
            if log_now and self.summary_op is not None:
                fetches.append(self.summary_op)
            started = time.perf_counter()
            if self.barrier is not None:
                out, step, waited = self.barrier.run(sess, fetches, feeds)
                self.telemetry.barrier_wait(waited)
            else:
                *out, step = sess.run([model.train_op, *fetches, model.step_after_train], feeds)[1:]
            seconds = time.perf_counter() - started
            loss, step = float(out[0]), int(step)
            local_steps += 1
            progress.add(len(ys))
            self.telemetry.step(seconds, len(ys), loss, step)
            if log_now:
                self._read_stale(sess)
                steps_per_sec, examples_per_sec = progress.rates()
                self.telemetry.rates(steps_per_sec, examples_per_sec)
                runlog.log("progress", "", global_step=step, loss=loss, examples_per_sec=round(examples_per_sec, 1),
                           steps_per_sec=round(steps_per_sec, 2))
                progress.reset()
                if self.summary_op is not None:
                    self.summary_writer.add_summary(out[1], step)
            if self.saver and args.save_checkpoint_steps and step - last_saved >= args.save_checkpoint_steps:
                self._saved = (step, checkpoints.save(self.saver, sess, self.checkpoint_dir, step,
                                                      self.telemetry, "periodic"))
                last_saved = step
        return self._finish(sess, step, local_steps)

    def _read_stale(self, sess) -> None:
        """The chief: the sync optimizer's count of stale gradient pushes dropped so far, into the metric."""
        if self.stale_op is None:
            return
        count = int(sess.run(self.stale_op))
        self.telemetry.stale_gradients(count - self._stale_seen)
        self._stale_seen = max(self._stale_seen, count)

    def _finish(self, sess, step: int, local_steps: int) -> int:
        stopped = self.shutdown.requested
        if self.is_chief:
            path = None
            if self.saver and self._saved[0] == step:
                path = self._saved[1]   # this step is saved already
            elif self.saver:
                path = checkpoints.save(self.saver, sess, self.checkpoint_dir, step, self.telemetry,
                                        "signal" if stopped else "final")
            elif stopped:
                runlog.log("no_checkpoint", "no --checkpoint-dir: nothing saved on the signal")
            if not stopped:
                loss, accuracy = models.evaluate(sess, self.model, self.data.test.images, self.data.test.labels)
                runlog.log("test", "", global_step=step, loss=round(loss, 6), accuracy=round(accuracy, 6))
                if path:
                    checkpoints.write_marker(self.checkpoint_dir, path, step)
                try:
                    if self.args.export_dir:   # before the release: the variables may live on the ps tasks
                        export.export_saved_model(self.args.export_dir, self.args.model,
                                                  int(self.data.train.images.shape[1]), sess, self.model_vars)
                finally:
                    self._release_cluster(sess)
        elif not stopped and self.task.is_distributed:
            sess.run(self.mark_done)   # the chief waits for this before it releases the ps tasks
        if stopped:
            runlog.log("stopped", "stopped by a signal", global_step=step, exit_code=self.shutdown.exit_code)
            return self.shutdown.exit_code
        if self.stale_op is not None and not self.task.is_distributed:
            self._read_stale(sess)
        if self.stale_op is not None:
            runlog.log("done", "", global_step=step, local_steps=local_steps, stale_gradients=self._stale_seen)
        else:
            runlog.log("done", "", global_step=step, local_steps=local_steps)
        return ExitCode.SUCCESS

    def _release_cluster(self, sess) -> None:
        """The chief, after its final checkpoint: wait (bounded) until the other workers have finished, then
        tell every ps to stop serving (their `server.join()` returns and they exit 0)."""
        if not self.task.is_distributed:
            return
        others = sum(len(self.task.cluster.get(j, [])) for j in ("chief", "master", "worker")) - 1
        deadline = time.monotonic() + self.args.release_timeout
        done = int(sess.run(self.workers_done))
        while done < others and time.monotonic() < deadline and not self.shutdown.requested:
            self.shutdown.event.wait(INIT_POLL_SECONDS)
            done = int(sess.run(self.workers_done))
        self._read_stale(sess)     # every push is in once the others have finished: the final count
        runlog.log("workers_finished", f"{done} of {others} other worker(s) finished", finished=done, workers=others)
        server: Any = self.placement.server
        release = getattr(getattr(getattr(tf, "distributed", None), "shutdown", None), "release_cluster", None)
        if self.task.cluster.get("ps") and server is not None:
            if release is not None:   # the library's protocol: the other workers are told too, then every ps
                failed = release(server, "training finished")
            else:
                failed = server.master.shutdown_tasks("ps", "training finished", 0)
            runlog.log("ps_released", "told the ps tasks to stop", unreachable=",".join(failed))

    def close(self) -> None:
        if self.placement.server is not None and hasattr(self.placement.server, "stop"):
            self.placement.server.stop()


def _stop_threads(coord) -> None:
    """Stops the sync queue runner's threads (bounded: a thread blocked on a ps that is gone is a daemon and
    is left behind; an error it reported after the end of training is only logged)."""
    if coord is None:
        return
    coord.request_stop()
    try:
        coord.join(stop_grace_period_secs=SYNC_THREADS_GRACE, ignore_live_threads=True)
    except Exception as e:   # noqa: BLE001 - the queue runner's error once training is over
        runlog.log("sync_stopped", f"sync queue runner: {type(e).__name__}: {e}", level=logging.DEBUG)


def train(args, task: Task, shutdown, telemetry) -> int:
    trainer = Trainer(args, task, shutdown, telemetry)
    try:
        return trainer.run()
    finally:
        trainer.close()
