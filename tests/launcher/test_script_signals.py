"""The launcher's signal forwarding at the edges of the script's start (`script_runner.run_command`).

- Every forwarded signal that arrives while the script is being started reaches it once it exists (not
  only SIGTERM/SIGINT): the script dies of it as it would have had it come a moment later.
- A signal the launcher was started ignoring (`nohup`: SIGHUP) is ignored by the script too, as a plain
  `nohup python script.py` would have it.
"""
import os
import signal
import subprocess
import sys

import pytest

from tensorfleet_train import script_runner
from tensorfleet_train.exit_codes import for_signal


@pytest.fixture
def signal_while_starting(monkeypatch):
    """Popen that sends the launcher `signum` just before the script starts."""
    sent: dict = {}
    real_popen = subprocess.Popen

    def popen(*args, **kwargs):
        os.kill(os.getpid(), sent["signum"])
        return real_popen(*args, **kwargs)

    monkeypatch.setattr(script_runner.subprocess, "Popen", popen)
    return sent


@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGUSR1, signal.SIGTERM], ids=lambda s: s.name)
def test_a_signal_during_the_start_reaches_the_script(signal_while_starting, signum, tmp_path):
    signal_while_starting["signum"] = signum
    ran_to_end = tmp_path / "ran"
    script = f"import time; time.sleep(5); open({str(ran_to_end)!r}, 'w').close()"
    before = signal.getsignal(signum)
    if before == signal.SIG_IGN:   # this test run itself under nohup: the script would ignore it too
        signal.signal(signum, signal.SIG_DFL)
    try:
        code = script_runner.run_command([sys.executable, "-c", script], grace_seconds=10)
    finally:
        signal.signal(signum, before)
    assert code == for_signal(signum)
    assert not ran_to_end.exists()


def test_a_signal_the_launcher_ignores_is_ignored_by_the_script(tmp_path):
    seen = tmp_path / "seen"
    script = ("import signal; "
              f"open({str(seen)!r}, 'w').write(str(signal.getsignal(signal.SIGHUP) == signal.SIG_IGN))")
    before = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        assert script_runner.run_command([sys.executable, "-c", script], grace_seconds=10) == 0
    finally:
        signal.signal(signal.SIGHUP, before)
    assert seen.read_text() == "True"
