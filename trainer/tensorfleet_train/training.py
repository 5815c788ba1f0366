"""The chief and worker roles of the built-in models (and the single process without TF_CONFIG).

Flow: cli.py -> startup.wait_for_peers -> `train(...)` here. The TF1 between-graph idiom: in a cluster
this task starts its `tf.train.Server`, builds the model under
`tf.device(tf.train.replica_device_setter(cluster=...))` (variables on the ps tasks; in a worker-only
cluster on the chief, worker 0) and trains through `tf.Session(server.target)` with device filters
limited to the ps tasks and itself. The chief restores the latest checkpoint or initialises the
variables (unless a surviving ps still holds them); the other workers wait until the variables are
initialised. Every task trains until the global step reaches `--steps`.

The chief saves a checkpoint every `--save-checkpoint-steps`, on SIGTERM (then exits 143) and at the
end, where it also evaluates the test split and writes the "complete" marker the evaluator waits for
(checkpoints.py). A lost peer (`UnavailableError`, `AbortedError`, `DeadlineExceededError`) is
recovered from: wait for the peers again for `--recovery-timeout` and open a new session, at most
`--max-recoveries` times; a ps that stays away exits PS_UNAVAILABLE, another peer LOST_PEER.
"""
from __future__ import annotations

import logging
import time
from typing import Any

import tensorfleet as _tensorfleet

from . import checkpoints, models, runlog, startup
from .exit_codes import ExitCode, LauncherExit
from .task import Task

tf: Any = _tensorfleet   # its namespace is filled at import time: no static attributes

RECOVERABLE_ERRORS = (tf.errors.UnavailableError, tf.errors.AbortedError, tf.errors.DeadlineExceededError)
INIT_POLL_SECONDS = 0.25


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
        return tf.report_uninitialized_variables()
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
            model_vars = [v for v in tf.global_variables() if v is not self.workers_done]
            self.init_op = tf.global_variables_initializer()
            self.init_done_counter = tf.variables_initializer([self.workers_done])
            self.uninitialized = _uninitialized_op()
            self.saver = (tf.train.Saver(var_list=model_vars, max_to_keep=args.keep_checkpoints)
                          if self.checkpoint_dir else None)
            self.summary_op, self.summary_writer = self._summaries()

    def _sync_wrapper(self):
        if not self.args.sync_replicas:
            return None
        if not hasattr(tf.train, "SyncReplicasOptimizer"):
            raise LauncherExit(ExitCode.BAD_ARGUMENTS, "--sync-replicas: this tensorfleet build has no "
                                                       "tf.train.SyncReplicasOptimizer yet (issue 11)")
        raise LauncherExit(ExitCode.BAD_ARGUMENTS, "--sync-replicas is not wired into the launcher yet")

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
        args, model = self.args, self.model
        with tf.Session(self.placement.target, graph=self.graph, config=self.placement.config) as sess:
            step = self._prepare(sess)
            if step < 0:
                return self.shutdown.exit_code
            runlog.log("training", f"training {args.model} from global step {step} to {args.steps}",
                       global_step=step, target_steps=args.steps)
            self.telemetry.global_step(step)
            progress, local_steps, last_saved = _Progress(), 0, step
            while step < args.steps and not self.shutdown.requested:
                xs, ys = self.data.train.next_batch(args.batch_size)
                feeds = {model.x: xs, model.labels: ys, **model.train_feeds}
                log_now = (local_steps + 1) % args.log_every == 0
                fetches = [model.train_op, model.loss, model.step_after_train]
                if log_now and self.summary_op is not None:
                    fetches.append(self.summary_op)
                started = time.perf_counter()
                out = sess.run(fetches, feeds)
                seconds = time.perf_counter() - started
                loss, step = float(out[1]), int(out[2])
                local_steps += 1
                progress.add(len(ys))
                self.telemetry.step(seconds, len(ys), loss, step)
                if log_now:
                    steps_per_sec, examples_per_sec = progress.rates()
                    self.telemetry.rates(steps_per_sec, examples_per_sec)
                    runlog.log("progress", "", global_step=step, loss=loss, examples_per_sec=round(examples_per_sec, 1),
                               steps_per_sec=round(steps_per_sec, 2))
                    progress.reset()
                    if self.summary_op is not None:
                        self.summary_writer.add_summary(out[3], step)
                if self.saver and args.save_checkpoint_steps and step - last_saved >= args.save_checkpoint_steps:
                    self._saved = (step, checkpoints.save(self.saver, sess, self.checkpoint_dir, step,
                                                          self.telemetry, "periodic"))
                    last_saved = step
            return self._finish(sess, step, local_steps)

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
                self._release_cluster(sess)
        elif not stopped and self.task.is_distributed:
            sess.run(self.mark_done)   # the chief waits for this before it releases the ps tasks
        if stopped:
            runlog.log("stopped", "stopped by a signal", global_step=step, exit_code=self.shutdown.exit_code)
            return self.shutdown.exit_code
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


def train(args, task: Task, shutdown, telemetry) -> int:
    trainer = Trainer(args, task, shutdown, telemetry)
    try:
        return trainer.run()
    finally:
        trainer.close()
