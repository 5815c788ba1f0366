"""``tensorfleet run``: a TFJob as local processes, its lifecycle decided by the operator core.

The loop plays the operator and the API server at once. Each tick (0.1 s) it
lets ``kubelet.py`` advance every local pod (exits, in-place restarts, kills
after the grace period) and drops deleted pods whose process ended; when a pod
changed, the last plan acted or a timed check is due (at least once a second,
sooner for a deadline) it calls the operator core's ``reconcile`` with the job, the pods as pod-like dicts and the
services made so far, keeps the returned status, and applies the plan: create
pods (start processes), delete pods (SIGTERM, SIGKILL after the grace period).
So restart policies, ``backoffLimit``, ``successPolicy``, ``activeDeadlineSeconds``,
``cleanPodPolicy`` and ps shutdown end a local run as they end a cluster run.

When the job has finished, pods the plan did not delete (``cleanPodPolicy: None``
keeps them on a cluster) are stopped too, since ``tensorfleet`` exits: nothing is
left running. Ctrl-C (or SIGTERM) stops every replica the same way (a second
Ctrl-C kills at once) and exits 130. Exit 0: Succeeded, 1: Failed.
"""
from __future__ import annotations

import argparse
import datetime
import os
import pathlib
import secrets
import shlex
import shutil
import signal
import sys
import time
import uuid
from typing import IO, Any

from . import operator_core as core
from .console import MetricsReader, ReplicaRow, RunConsole, silence_stdout
from .kubelet import LocalPod, Watchdog
from .manifest import UsageError, load_job, parse, with_defaults
from .placement import PYTHON_NAMES, Placement, gpu_devices, launch_spec, plan_placement
from .rundir import RunDir, default_run_dir, job_state

TICK = 0.1        # how often the local pods are polled
RECHECK = 1.0     # reconcile at least this often (deadlines), and at once after any change
EXIT_SUCCEEDED, EXIT_FAILED, EXIT_INTERRUPTED = 0, 1, 130


def replica_label(pod: dict[str, Any]) -> str:
    labels = pod['metadata']['labels']
    prefix = core.KUBEFLOW_LABEL_PREFIX
    return f'{labels[prefix + core.REPLICA_TYPE]}-{labels[prefix + core.REPLICA_INDEX]}'


def _python(choice: str | None) -> str:
    if choice is None:
        return sys.executable
    found = shutil.which(choice)
    if found is None:
        raise UsageError(f'--python {choice}: interpreter not found')
    return found


def python_wrappers(bin_dir: pathlib.Path, python: str) -> pathlib.Path:
    """``python`` and ``python3`` commands that run ``python`` (scripts, not symlinks: a symlinked
    virtualenv interpreter would lose its environment)."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    for name in PYTHON_NAMES:
        wrapper = bin_dir / name
        wrapper.write_text(f'#!/bin/sh\nexec {shlex.quote(python)} "$@"\n')
        wrapper.chmod(0o755)
    return bin_dir


class LocalRun:
    def __init__(self, body: dict[str, Any], job: core.JobSpec, placement: Placement, python: str,
                 run_dir: RunDir, tui: bool, grace: float, backoff: float, manifest_path: str,
                 workdir: str | None = None, opts: Any = None) -> None:
        self.body = body
        self.job = job
        self.opts = opts or core.ChildOptions()
        self.placement = placement
        self.python = python
        self.run_dir = run_dir
        self.grace = grace
        self.backoff = backoff
        self.manifest_path = manifest_path
        self.workdir = workdir
        self.labels = {core.child_name(job.name, t, i): f'{t.lower}-{i}'
                       for t, i in core.replica_indexes(job)}
        self.metrics = MetricsReader({self.labels[n]: p for n, p in placement.metrics_ports.items()})
        self.console = RunConsole(job.name, tui, self.metrics)
        self.pods: dict[str, LocalPod] = {}
        self.services: list[dict[str, Any]] = []
        self.logs: dict[str, IO[str]] = {}
        self.interrupts = 0
        self.watchdog: Watchdog | None = None
        self.started = time.monotonic()
        self.state = 'Created'
        self.ends: dict[str, str] = {}        # replica label -> how its last process ended here
        self.bin_dir = python_wrappers(run_dir.path / 'bin', python)

    # -- bookkeeping ----------------------------------------------------------------------
    def _run_info(self, state: str) -> dict[str, Any]:
        return {
            'job': self.job.name, 'namespace': self.job.namespace,
            'manifest': str(pathlib.Path(self.manifest_path).resolve()), 'pid': os.getpid(), 'state': state,
            'runDir': str(self.run_dir.path.resolve()),
            'replicas': list(self.labels.values()),
            'ports': {self.labels[n]: {'tf': self.placement.tf_ports[n], 'metrics': self.placement.metrics_ports[n]}
                      for n in self.labels},
            'gpus': {self.labels[n]: self.placement.gpus.get(n, '') for n in self.labels},
            'watchdog': self.watchdog.proc.pid if self.watchdog is not None else None,
            'processes': {p.label: {'pid': p.proc.pid, 'pgid': p.pgid} for p in self.pods.values()
                          if p.proc is not None and p.running},
        }

    def _log(self, label: str) -> IO[str]:
        if label not in self.logs:
            self.logs[label] = open(self.run_dir.log_path(label), 'a', encoding='utf-8')
        return self.logs[label]

    def _rows(self) -> list[ReplicaRow]:
        rows = []
        for rtype, rs in (self.body.get('status', {}).get('replicaStatuses') or {}).items():
            for entry in rs.get('replicas') or []:
                phase = str(entry.get('phase', '-'))
                if entry.get('reason') and phase == 'Running':
                    phase = f"{phase} ({entry['reason']})"
                rows.append(ReplicaRow(f"{rtype.lower()}-{entry['index']}", phase, int(entry.get('restarts', 0)),
                                       entry.get('exitCode', entry.get('lastExitCode'))))
        return rows

    # -- the loop -------------------------------------------------------------------------
    def _start_pod(self, manifest: dict[str, Any]) -> None:
        name = manifest['metadata']['name']
        label = replica_label(manifest)
        spec = launch_spec(manifest, self.job, self.placement, self.python, self.workdir)
        if spec.note and label not in self.logs:      # said once per replica
            self.console.note(spec.note, 'yellow')
        # `python` inside a replica's own scripts (sh -c "python ...") is the chosen interpreter too.
        spec.env['PATH'] = os.pathsep.join([str(self.bin_dir), spec.env.get('PATH', os.environ.get('PATH', ''))])
        assert self.watchdog is not None
        log = self._log(label)
        if log.tell() > 0:
            log.write(f'--- tensorfleet: pod {name} created again ---\n')
        pod = LocalPod(manifest, spec, label, log, self.console.line, self.watchdog, self.grace, self.backoff,
                       message_path=str(self.run_dir.path / f'{label}.termination-log'))
        try:
            pod.start()
        except OSError as err:
            raise UsageError(f'pod {name}: cannot start {spec.argv[0]!r} ({err.strerror or err})') from None
        self.pods[name] = pod
        self.metrics.set_active(label, True)

    def _tick_pods(self) -> bool:
        now = time.monotonic()
        changed = False
        for pod in list(self.pods.values()):
            changed |= pod.poll(now)
            if not pod.running:
                self.metrics.set_active(pod.label, False)
                if pod.exit_code is not None:
                    stopped = 'stopped by tensorfleet, ' if pod.deletion else ''
                    self.ends[pod.label] = f'{stopped}exit {pod.exit_code}'
            if pod.gone:
                del self.pods[pod.name]
                changed = True
        return changed

    def _apply(self, plan: core.Plan) -> None:
        self.body['status'] = plan.status
        for event in plan.events:
            self.console.note(f'{event.type} {event.reason}: {event.message}',
                              'yellow' if event.type == 'Warning' else 'bold')
        self.services = [s for s in self.services if s['metadata']['name'] not in plan.delete_services]
        self.services += plan.create_services
        now = time.monotonic()
        for name in plan.delete_pods:
            if name in self.pods:
                self.pods[name].delete(now)
        for manifest in plan.create_pods:
            self._start_pod(manifest)
        if plan.create_pods:
            self.run_dir.write_run(self._run_info('running'))
        state = job_state(plan.status)
        if state != self.state:
            self.state = state
            self.console.note(f'job {state}')
        self.console.update(state, self._rows())
        self.run_dir.write_status(self.body)

    def _reconcile(self) -> core.Plan:
        now = datetime.datetime.now(datetime.timezone.utc)
        pods = [p.as_pod() for p in self.pods.values()]
        plan = core.reconcile(self.body, pods, self.services, now, self.opts)
        final = core.final_progress(self.job.replicas, pods)   # the chief ended: status.progress, as the operator
        if final is not None:
            plan.status['progress'] = {**core.progress_fields(final), 'lastUpdateTime': core.timestamp(now)}
        self._apply(plan)
        return plan

    def _wait_for_pods(self, deleted_only: bool = False) -> None:
        """Until every pod's process (or, with ``deleted_only``, every deleted pod's) has ended;
        a deleted pod gets SIGKILL after its grace period, and at once after a second Ctrl-C."""
        while any(p.running and (p.deletion is not None or not deleted_only) for p in self.pods.values()):
            if self.interrupts > 1:
                for pod in self.pods.values():
                    pod.kill_now()
            self._tick_pods()
            time.sleep(TICK)

    def _stop_all(self, why: str) -> None:
        live = [p for p in self.pods.values() if p.running and p.deletion is None]
        if live:
            self.console.note(f"{why}: stopping {', '.join(p.label for p in live)} (SIGTERM, SIGKILL after "
                              f"{max(p.grace for p in live):g}s)")
        now = time.monotonic()
        for pod in self.pods.values():
            pod.delete(now)

    def _loop(self) -> int:
        due = 0.0
        cleanup_pending = False
        while True:
            changed = self._tick_pods()
            if self.interrupts:
                self._stop_all('interrupted')
                self._wait_for_pods()
                return EXIT_INTERRUPTED
            now = time.monotonic()
            if changed or now >= due:      # a pod changed, the plan acted, or a timed check is due
                plan = self._reconcile()
                cleanup_pending = plan.cleanup_pending
                acted = plan.create_pods or plan.delete_pods or plan.create_services or plan.delete_services
                wait = min(RECHECK, plan.requeue_after if plan.requeue_after is not None else RECHECK)
                due = now if acted else now + wait
            if core.is_finished(self.body['status'].get('conditions') or []) and not cleanup_pending:
                break       # (a succeeded job's pods that are still ending get cleanPodPolicy's grace first)
            time.sleep(TICK)
        self._wait_for_pods(deleted_only=True)     # the plan's deletions (cleanPodPolicy), to their end
        if any(p.running for p in self.pods.values()):
            self._stop_all(f'cleanPodPolicy {self.job.run_policy.clean_pod_policy.value} keeps them on a cluster; '
                           'tensorfleet exits')
            self._wait_for_pods()
        succeeded = core.is_true(self.body['status'].get('conditions') or [], core.ConditionType.SUCCEEDED)
        return EXIT_SUCCEEDED if succeeded else EXIT_FAILED

    def _on_signal(self, signum: int, frame: Any) -> None:
        self.interrupts += 1

    def run(self) -> int:
        handlers = {s: signal.signal(s, self._on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
        code = EXIT_FAILED
        try:
            self.watchdog = Watchdog()
            self.run_dir.write_run(self._run_info('running'))
            self.console.start()
            self.metrics.start()
            self.console.note(f'running TFJob {self.job.name} ({self.job.total_replicas} replica(s)); '
                              f'logs in {self.run_dir.path}')
            code = self._loop()
        finally:
            if self.pods:      # an error left the loop: nothing may survive it
                for pod in self.pods.values():
                    pod.kill_now()
                self._wait_for_pods()
            if self.watchdog is not None:
                self.watchdog.close()
            self.metrics.stop()
            self.console.update(self.state, self._rows())
            self.console.stop()
            for sig, old in handlers.items():
                signal.signal(sig, old)
            state = {EXIT_SUCCEEDED: 'succeeded', EXIT_FAILED: 'failed', EXIT_INTERRUPTED: 'interrupted'}[code]
            self.run_dir.write_status(self.body)
            self.run_dir.write_run(self._run_info(state))
            for log in self.logs.values():
                log.close()
        self._summary(code)
        return code

    def _summary(self, code: int) -> None:
        status = self.body.get('status') or {}
        elapsed = time.monotonic() - self.started
        outcome = 'interrupted' if code == EXIT_INTERRUPTED else job_state(status)
        reason = f" ({status['reason']})" if status.get('reason') else ''
        lines = [f'TFJob {self.job.name}: {outcome}{reason} after {elapsed:.1f}s']
        if status.get('message') and code != EXIT_INTERRUPTED:
            lines.append(f"  {status['message']}")
        for row in self._rows():
            end = self.ends.get(row.label, 'never ran' if row.phase == 'Pending' else '-')
            lines.append(f'  {row.label:<12} {row.phase:<24} restarts {row.restarts:<3} ({end})')
        loss, accuracy = self.console.final_loss(), self.console.final_accuracy()
        if loss is not None:
            lines.append(f'  final loss: {loss[1]:.4g} ({loss[0]})')
        if accuracy is not None:
            lines.append(f'  test accuracy: {accuracy[1]:.4g} ({accuracy[0]})')
        lines.append(f'  logs: {self.run_dir.path}/<replica>.log   status: {self.run_dir.path}/status.yaml')
        try:
            print('\n'.join(lines), flush=True)
        except (OSError, ValueError):      # nobody reads stdout any more: the exit code still tells
            silence_stdout()


def run_command(args: argparse.Namespace) -> int:
    doc = load_job(args.manifest)
    uid = str(uuid.uuid4())
    job = parse(doc, args.manifest, args.namespace, uid)
    if job.run_policy.suspend:
        raise UsageError(f'{args.manifest}: spec.runPolicy.suspend is true: a suspended job runs nothing; '
                         'set it to false to run it locally')
    body = with_defaults(doc, args.namespace, uid)
    body['metadata']['creationTimestamp'] = core.timestamp(datetime.datetime.now(datetime.timezone.utc))
    python = _python(args.python)
    placement = plan_placement(job, gpu_devices(args.gpus), secrets.token_urlsafe(32), args.base_port)
    if args.clean_pod_grace is not None and args.clean_pod_grace < 0:
        raise UsageError(f'--clean-pod-grace {args.clean_pod_grace:g}: must be >= 0')
    opts = core.ChildOptions() if args.clean_pod_grace is None else core.ChildOptions(
        clean_pod_grace_seconds=args.clean_pod_grace)
    workdir = None
    if args.workdir is not None:
        if not os.path.isdir(args.workdir):
            raise UsageError(f'--workdir {args.workdir}: no such directory')
        workdir = os.path.abspath(args.workdir)
    for rtype, i in core.replica_indexes(job):        # every problem shows before anything starts
        launch_spec(core.desired_pod(job, rtype, i, opts), job, placement, python, workdir)
    run_dir = RunDir(pathlib.Path(args.run_dir) if args.run_dir else default_run_dir(job.name))
    tui = sys.stdout.isatty() and not args.no_tui
    return LocalRun(body, job, placement, python, run_dir, tui, args.grace_period, args.restart_backoff,
                    args.manifest, workdir, opts).run()
