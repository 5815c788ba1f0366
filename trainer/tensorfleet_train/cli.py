"""`tensorfleet-train`: the process inside every ps, worker, chief and evaluator pod.

    tensorfleet-train --model mnist-mlp --steps 2000 --checkpoint-dir /ckpt      # a built-in model
    tensorfleet-train --model mnist-cnn --steps 2000 --export-dir /models/mnist  # ... and a SavedModel at the end
    tensorfleet-train --script my_script.py -- --my-flag 1                       # this Python on a script
    tensorfleet-train -- python my_script.py --my-flag 1                         # any command

Flow: parse arguments -> read TF_CONFIG (task.py) -> set up logging with the role and index
(runlog.py) and SIGTERM handling (shutdown.py) -> wait for the peers this task needs (startup.py) ->
the role: a user command (script_runner.py), or a built-in model's ps (ps.py), chief/worker
(training.py) or evaluator (evaluator.py) with /metrics served (telemetry.py) -> an exit code from
exit_codes.py (the table the operator's ExitCode policy reads).

Also `python -m tensorfleet_train`. (`tensorfleet` never imports this package, so there is no
`python -m tensorfleet.launch`.)
"""
from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import Optional, Sequence

from . import runlog
from .exit_codes import ExitCode, LauncherExit, describe
from .shutdown import DEFAULT_GRACE_SECONDS, Shutdown

MODELS = ("mnist-softmax", "mnist-mlp", "mnist-cnn")   # models.MODELS, without importing tensorfleet here
DATA_SOURCES = ("auto", "mnist", "mnist_5k", "digits")


def _positive(kind):
    def parse(text: str):
        value = kind(text)
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be positive, got {text}")
        return value
    parse.__name__ = f"positive {kind.__name__}"
    return parse


def _non_negative(kind):
    def parse(text: str):
        value = kind(text)
        if value < 0:
            raise argparse.ArgumentTypeError(f"must be 0 or more, got {text}")
        return value
    parse.__name__ = f"non-negative {kind.__name__}"
    return parse


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tensorfleet-train",
        usage="tensorfleet-train [options] (--model NAME | --script FILE [-- ARGS...] | -- COMMAND [ARGS...])",
        description="Run a built-in model or a user script as the task TF_CONFIG describes "
                    "(no TF_CONFIG: a single process). Exit codes: 0 success, 1-127 permanent, 128+ retryable "
                    "(docs/launcher.md).")
    what = p.add_argument_group("what to run")
    what.add_argument("--model", choices=MODELS, help="a built-in model")
    what.add_argument("--script", metavar="FILE", help="a Python script run with this interpreter (its arguments "
                                                       "after --)")
    model = p.add_argument_group("built-in models")
    model.add_argument("--steps", type=_positive(int), default=1000, help="train until the global step reaches this")
    model.add_argument("--batch-size", type=_positive(int), default=100)
    model.add_argument("--learning-rate", type=_positive(float), default=None,
                       help="default: 0.5 softmax, 0.3 mlp (gradient descent), 0.002 cnn (Adam)")
    model.add_argument("--sync-replicas", action="store_true", help="SyncReplicasOptimizer across the workers")
    model.add_argument("--replicas-to-aggregate", type=_positive(int), default=None,
                       help="with --sync-replicas (default: every worker)")
    model.add_argument("--data", choices=DATA_SOURCES, default="auto",
                       help="auto: full MNIST when fetched, else the 5k sample (tensorfleet.datasets)")
    model.add_argument("--checkpoint-dir", default=None, help="the chief saves here; the evaluator reads here")
    model.add_argument("--save-checkpoint-steps", type=_non_negative(int), default=100, help="0: only at the end")
    model.add_argument("--keep-checkpoints", type=_positive(int), default=5)
    model.add_argument("--export-dir", default=None, metavar="DIR",
                       help="the chief writes the trained model as a SavedModel in DIR/<timestamp> at the end "
                            "(TF Serving's --model_base_path); docs/saved-model.md")
    model.add_argument("--eval-interval", type=_positive(float), default=5.0, help="evaluator: seconds between polls")
    model.add_argument("--eval-timeout", type=_non_negative(float), default=0.0,
                       help="evaluator: exit (retryable) after this long without a new checkpoint; 0: never")
    logs = p.add_argument_group("logs and metrics")
    logs.add_argument("--log-every", type=_positive(int), default=100, help="a progress line every N steps")
    logs.add_argument("--log-format", choices=runlog.FORMATS, default="text")
    logs.add_argument("--metrics-port", type=int, default=None,
                      help="default $TENSORFLEET_METRICS_PORT or 9100; 0 any free port; -1 off")
    logs.add_argument("--metrics-address", default="0.0.0.0")
    life = p.add_argument_group("start-up and shutdown")
    life.add_argument("--startup-timeout", type=_non_negative(float), default=300.0,
                      help="seconds to wait for peers (and, on a worker, for the chief's initialisation)")
    life.add_argument("--wait-for", choices=("needed", "all", "none"), default="needed",
                      help="peers to wait for at start-up: the ones this task talks to (ps tasks, or the chief in a "
                           "worker-only cluster), every training task, or none")
    life.add_argument("--recovery-timeout", type=_non_negative(float), default=60.0,
                      help="seconds to wait for a lost peer before exiting (retryable)")
    life.add_argument("--max-recoveries", type=_non_negative(int), default=5)
    life.add_argument("--release-timeout", type=_non_negative(float), default=60.0,
                      help="chief: seconds to wait for the other workers to finish before releasing the ps tasks")
    life.add_argument("--grace-period", type=_positive(float), default=DEFAULT_GRACE_SECONDS,
                      help="after SIGTERM/SIGINT, exit at the latest after this many seconds")
    return p


def _split_command(argv: Sequence[str]) -> tuple:
    argv = list(argv)
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1:]
    return argv, []


def parse_args(argv: Sequence[str]):
    """(args, command after `--`); invalid arguments exit 2 through argparse."""
    own, command = _split_command(argv)
    parser = build_parser()
    args = parser.parse_args(own)
    chosen = sum(bool(x) for x in (args.model, args.script, command and not args.script))
    if chosen != 1:
        parser.error("give exactly one of --model NAME, --script FILE or -- COMMAND ...")
    if args.replicas_to_aggregate and not args.sync_replicas:
        parser.error("--replicas-to-aggregate needs --sync-replicas")
    return args, command


def _run(args, command: list, environ, shutdown: Shutdown) -> int:
    from .task import task_from_environ

    task = task_from_environ(environ)
    runlog.configure(task.type, task.index, args.log_format)
    runlog.log("start", f"tensorfleet-train as {task.name}", role=task.type, index=task.index,
               chief=task.is_chief, cluster=",".join(f"{j}={len(a)}" for j, a in sorted(task.cluster.items())),
               cuda_visible_devices=environ.get("CUDA_VISIBLE_DEVICES", "unset"))
    peers = {"needed": task.peers_needed, "all": task.peers_all, "none": dict}[args.wait_for]()
    if not args.model:
        from . import script_runner

        argv = script_runner.resolve_command(command, args.script, command if args.script else [])
        if peers:
            from .startup import wait_for_peers

            shutdown.install()
            waited = wait_for_peers(peers, args.startup_timeout, stop=lambda: shutdown.requested)
            runlog.log("peers_ready", f"{len(peers)} peer(s) reachable", waited_sec=round(waited, 3))
        code = script_runner.run_command(argv, args.grace_period)
        script_runner.report_script_end(task, code)
        return code

    shutdown.install()
    from .telemetry import Telemetry, metrics_port_from

    telemetry = Telemetry(task.type, task.index, metrics_port_from(environ, args.metrics_port),
                          args.metrics_address, environ).start()
    try:
        if task.type == "evaluator":
            from .evaluator import evaluate_checkpoints

            return evaluate_checkpoints(args, task, shutdown, telemetry)
        if task.type == "ps":
            from .ps import serve

            return serve(args, task, shutdown, telemetry)
        if peers:
            from .startup import wait_for_peers

            waited = wait_for_peers(peers, args.startup_timeout, stop=lambda: shutdown.requested)
            runlog.log("peers_ready", f"{len(peers)} peer(s) reachable", waited_sec=round(waited, 3))
        from .training import train

        return train(args, task, shutdown, telemetry)
    finally:
        telemetry.stop()


def main(argv: Optional[Sequence[str]] = None) -> int:
    args, command = parse_args(sys.argv[1:] if argv is None else argv)
    runlog.configure("launcher", 0, args.log_format)
    shutdown = Shutdown(args.grace_period)
    try:
        code = _run(args, command, os.environ, shutdown)
    except LauncherExit as e:
        code = e.code
        runlog.log("exit", e.message, level=logging.ERROR, exit_code=code, exit_class=describe(code))
    except KeyboardInterrupt:
        code = ExitCode.SIGINT
        runlog.log("exit", "interrupted", level=logging.ERROR, exit_code=code)
    except Exception as e:   # a Python exception in the model or in user code: permanent ...
        # ... unless it happened while stopping on a signal (peers shutting down too): the signal's code
        code = shutdown.exit_code if shutdown.requested else ExitCode.TRAINING_ERROR
        runlog.log("exit", f"{type(e).__name__}: {e}", level=logging.ERROR, exc_info=True, exit_code=code)
    else:
        runlog.log("exit", "", exit_code=int(code), exit_class=describe(int(code)))
    for handler in runlog.get().handlers:
        handler.flush()
    return int(code)
