"""The launcher's exit codes: the one table the operator's `ExitCode` restart policy reads.

Sits at the very end of the flow: every path out of `tensorfleet-train` (cli.py) returns one of
these. The operator (tensorfleet_operator/core/observe.py) treats 1-127 as permanent (the job fails, the pod
is not recreated) and 128 or more as retryable (the pod is recreated); 0 is success. The classes are
pinned against the operator's own constant by tests/launcher/test_contract.py, and the table is
reproduced in docs/launcher.md.

| Code | Name | Class | When |
|---|---|---|---|
| 0 | SUCCESS | success | training (or the user script) finished |
| 1 | TRAINING_ERROR | permanent | a Python exception in the model or in user code |
| 2 | BAD_ARGUMENTS | permanent | bad command line or bad environment value (argparse's own code) |
| 3 | INVALID_TF_CONFIG | permanent | TF_CONFIG is not valid JSON or does not describe this task |
| 4 | DATA_UNAVAILABLE | permanent | the data set asked for is not on this machine |
| 126 | SCRIPT_NOT_EXECUTABLE | permanent | the user command exists but cannot be executed (shell convention) |
| 127 | SCRIPT_NOT_FOUND | permanent | the user command or --script file does not exist (shell convention) |
| 128+n | signal n | retryable | killed by or stopped on signal n (SIGTERM 143, SIGINT 130, SIGKILL 137) |
| 200 | STARTUP_TIMEOUT | retryable | a peer did not resolve or accept connections within --startup-timeout |
| 201 | LOST_PEER | retryable | a worker or chief peer became unreachable and stayed so past --recovery-timeout |
| 202 | PS_UNAVAILABLE | retryable | a ps task became unreachable and stayed so past --recovery-timeout |
| 203 | PS_IDLE_TIMEOUT | retryable | a ps served no call for TENSORFLEET_PS_IDLE_TIMEOUT_SECONDS (chief gone) |

A user script's own exit status is passed through unchanged (so a script that exits 1 fails the job
and one killed by a signal is retried); a child killed by signal n gives 128+n.
"""
from __future__ import annotations

import enum

# The boundary the operator's ExitCode policy uses (tensorfleet_operator.api.EXIT_CODE_RETRYABLE_MIN).
RETRYABLE_MIN = 128


class ExitCode(enum.IntEnum):
    SUCCESS = 0
    TRAINING_ERROR = 1
    BAD_ARGUMENTS = 2
    INVALID_TF_CONFIG = 3
    DATA_UNAVAILABLE = 4
    SCRIPT_NOT_EXECUTABLE = 126
    SCRIPT_NOT_FOUND = 127
    SIGINT = 128 + 2
    SIGKILL = 128 + 9
    SIGTERM = 128 + 15
    STARTUP_TIMEOUT = 200
    LOST_PEER = 201
    PS_UNAVAILABLE = 202
    PS_IDLE_TIMEOUT = 203   # = tensorfleet.distributed.shutdown.PS_IDLE_TIMEOUT_EXIT_CODE (pinned by test_contract)


def for_signal(signum: int) -> int:
    """The exit code of a process that ends because of signal `signum` (the shell's 128+n)."""
    if not 0 < int(signum) < RETRYABLE_MIN:
        raise ValueError(f"not a signal number: {signum!r}")
    return RETRYABLE_MIN + int(signum)


def from_returncode(returncode: int) -> int:
    """A child's `Popen.returncode` as this process's exit code: -n (killed by signal n) becomes 128+n,
    anything else passes through."""
    return for_signal(-returncode) if returncode < 0 else int(returncode)


def is_retryable(code: int) -> bool:
    """The operator's ExitCode policy: 128 and above are retried, 1-127 are permanent."""
    return code >= RETRYABLE_MIN


def is_permanent(code: int) -> bool:
    return 0 < code < RETRYABLE_MIN


def describe(code: int) -> str:
    """A short name for a code (`SIGTERM`, `STARTUP_TIMEOUT`, `signal 10`, `exit 5`)."""
    try:
        return ExitCode(code).name
    except ValueError:
        pass
    if RETRYABLE_MIN < code < RETRYABLE_MIN + 65:
        return f"signal {code - RETRYABLE_MIN}"
    return f"exit {code}"


class LauncherExit(Exception):
    """Raised anywhere in the launcher to end the process with `code` after logging `message`."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = int(code)
        self.message = message
