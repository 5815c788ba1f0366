"""--keep-checkpoints holds across restarts of the chief (issue 26, item 5): a chief killed and restarted ten
times keeps at most that many checkpoints (+ the one being written when it was killed), and at most that
many once a run ends normally. Each run is the launcher's own `cli.main` in a forked child of the test
process (tensorfleet already imported, so ten restarts cost no interpreter starts), on scikit-learn's digits
(read from its bundled file, without importing scikit-learn); the child is SIGKILLed once a varying number
of new checkpoints appeared. Oracle: the checkpoints on disk (`.index` files, listed by the OS)."""
import os
import re
import signal
import time

from tensorfleet_train import cli

KEEP = 2
RESTARTS = 10


def _checkpoints(directory) -> list:
    if not os.path.isdir(directory):
        return []
    return sorted(int(m.group(1)) for m in (re.match(r"model\.ckpt-(\d+)\.index$", n) for n in os.listdir(directory))
                  if m)


def _fork_launcher(args, env):
    pid = os.fork()
    if pid == 0:
        code = 3
        try:
            os.environ.update(env)
            code = cli.main(args)
        finally:
            os._exit(code)
    return pid


def _wait(pid, timeout=120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    raise AssertionError(f"the launcher did not end within {timeout} s")


def test_a_chief_killed_and_restarted_ten_times_keeps_keep_checkpoints(tmp_path):
    ckpt = str(tmp_path / "ckpt")
    env = {"TENSORFLEET_METRICS_PORT": "0", "OPENBLAS_NUM_THREADS": "1"}
    env_before = {k: os.environ.get(k) for k in ("TF_CONFIG",)}
    assert env_before["TF_CONFIG"] is None   # a single-process chief
    args = ["--model", "mnist-softmax", "--save-checkpoint-steps", "5", "--keep-checkpoints", str(KEEP),
            "--checkpoint-dir", ckpt, "--data", "digits", "--log-format", "json", "--log-every", "1000"]
    seen = set()
    for run in range(RESTARTS):
        before = max(_checkpoints(ckpt), default=-1)
        pid = _fork_launcher(args + ["--steps", "100000000"], env)
        wanted = 1 + run % 3   # new checkpoints before the kill
        deadline = time.monotonic() + 120
        try:
            while sum(s > before for s in _checkpoints(ckpt)) < wanted:
                assert time.monotonic() < deadline, "no new checkpoint in time"
                assert os.waitpid(pid, os.WNOHANG) == (0, 0), "the launcher ended early"
                time.sleep(0.002)
        finally:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        on_disk = _checkpoints(ckpt)
        seen.update(on_disk)
        assert len(on_disk) <= KEEP + 1, f"restart {run + 1}: {on_disk}"
    last = max(seen) + 10
    assert _wait(_fork_launcher(args + ["--steps", str(last)], env)) == 0
    final = _checkpoints(ckpt)
    assert len(final) <= KEEP and final[-1] == last, final
    assert len(seen) > KEEP + 1, seen   # the oracle could fail: many more were written than may stay
