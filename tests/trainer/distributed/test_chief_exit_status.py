"""A chief's exit status decides the release (distributed/shutdown.py): a non-zero exit never releases the ps.

Real processes on 127.0.0.1 (life_script.py: a ps running `server.join()` and the chief, worker 0):
- a chief that ends with `raise SystemExit(1)`, builtin `exit(1)` / `quit(1)`, `sys.exit(1)`, or
  `raise SystemExit(1)` / `raise SystemExit("message")` inside its MonitoredTrainingSession block leaves the ps
  serving (all but sys.exit used to release it);
- a chief that ends normally, with `sys.exit(0)`, after a caught `sys.exit(1)`, or at the end of its
  MonitoredTrainingSession releases it (the ps exits 0);
- a chief that cannot tell its exit status (a top-level `raise SystemExit(0)`, an error through its session that
  it then caught) does not release by itself; under the launcher, the launcher releases when the script's real
  status is 0, and does not when it is not.
"""
import json
import subprocess
import sys

import pytest

from life_procs import SCRIPT, OutputProc, spec
from tensorfleet.distributed import shutdown
from tensorfleet_train import script_runner

NOT_RELEASED_FOR = 3.0   # seconds a ps must keep serving after the chief's exit (a released one stops at once)


def _chief_under_launcher(started, cluster, mode):
    tf_config = json.dumps({"cluster": cluster, "task": {"type": "worker", "index": 0}})
    argv = [sys.executable, "-m", "tensorfleet_train", "--wait-for", "none", "--log-format", "json", "--",
            sys.executable, SCRIPT, json.dumps(cluster), "worker", "0", mode]
    return started(OutputProc(argv, env={"TF_CONFIG": tf_config, "TENSORFLEET_METRICS_PORT": "-1"}))


@pytest.mark.parametrize("mode", ["raise_exit1", "builtin_exit1", "quit1", "sys_exit1", "mts_raise1",
                                  "mts_raise_str"])
def test_a_chief_that_exits_non_zero_never_releases(procs, mode):
    cluster = spec()
    ps = procs(cluster, "ps", 0)
    chief = procs(cluster, "worker", 0, mode)
    assert chief.wait() == 1, chief.output
    said = "exit status it cannot tell" if mode == "raise_exit1" else "exiting after an error (exit status 1)"
    assert said in chief.output, chief.output   # a top-level raise hides its code from the process itself
    assert ps.running_after(NOT_RELEASED_FOR), ps.output   # it keeps the variables for the chief's restart


@pytest.mark.parametrize("mode", ["", "sys_exit0", "caught_exit1", "mts"])
def test_a_chief_that_exits_0_releases(procs, mode):
    cluster = spec()
    ps = procs(cluster, "ps", 0)
    chief = procs(cluster, "worker", 0, mode)
    assert chief.wait() == 0, chief.output
    assert ps.wait(60) == 0, ps.output
    assert "PS-FINALLY" in ps.output and "FELL THROUGH" not in ps.output


@pytest.mark.parametrize("mode", ["raise_exit0", "mts_error_caught"])
def test_a_chief_that_cannot_tell_its_status_leaves_the_release_to_the_launcher(procs, started, mode):
    cluster = spec()
    ps = procs(cluster, "ps", 0)
    alone = procs(cluster, "worker", 0, mode)
    assert alone.wait() == 0, alone.output
    assert "exit status it cannot tell" in alone.output, alone.output
    assert ps.running_after(NOT_RELEASED_FOR), ps.output
    chief = _chief_under_launcher(started, cluster, mode)   # its restart, under the launcher
    assert chief.wait() == 0, chief.output
    assert '"event": "released"' in chief.output, chief.output
    assert ps.wait(60) == 0, ps.output


@pytest.mark.parametrize("mode", ["raise_exit1", "mts_raise1"])
def test_the_launcher_does_not_release_for_a_chief_script_that_exits_non_zero(procs, started, mode):
    cluster = spec()
    ps = procs(cluster, "ps", 0)
    chief = _chief_under_launcher(started, cluster, mode)
    assert chief.wait() == 1, chief.output
    assert '"event": "released"' not in chief.output, chief.output
    assert ps.running_after(NOT_RELEASED_FOR), ps.output


def test_the_launcher_names_the_library_s_variable():
    assert script_runner.CHIEF_EXIT_FILE_ENV == shutdown.CHIEF_EXIT_FILE_ENV


def test_the_status_a_process_tells_at_its_exit(tmp_path):
    # no cluster: the decision alone (`exit_status`), printed by an atexit handler registered after the library's
    # (atexit runs it first); what a chief session's creation does happens inside main(), as in a script
    script = tmp_path / "s.py"
    script.write_text(
        "import atexit, sys\n"
        "from tensorfleet.distributed import shutdown\n"
        "def main(mode):\n"
        "    shutdown._main_frame = shutdown._outermost_main_frame()\n"
        "    shutdown._install_crash_hooks()\n"
        "    atexit.register(lambda: print('STATUS', shutdown.exit_status()[0]))\n"
        "    if mode == 'sys_exit2':\n"
        "        sys.exit(2)\n"
        "    if mode == 'exit3':\n"
        "        exit(3)\n"
        "    if mode == 'quit_str':\n"
        "        quit('bye')\n"
        "    if mode == 'in_finally':\n"
        "        try:\n"
        "            sys.exit(0)\n"
        "        finally:\n"
        "            pass\n"
        "    if mode == 'thread_exit5':\n"
        "        import threading\n"
        "        t = threading.Thread(target=sys.exit, args=(5,))\n"
        "        t.start()\n"
        "        t.join()\n"
        "    return 4 if mode == 'returns4' else 0\n"
        "mode = sys.argv[1]\n"
        "if mode == 'raise0':\n"
        "    main(mode)\n"
        "    raise SystemExit(0)\n"
        "if mode in ('returns4', 'returns0'):\n"
        "    sys.exit(main(mode))   # sys.exit is looked up before main() runs\n"
        "main(mode)\n")
    expected = {"raise0": "None", "sys_exit2": "2", "exit3": "3", "quit_str": "1", "in_finally": "0",
                "normal": "0", "returns4": "4", "returns0": "0", "thread_exit5": "0"}
    from dist_cluster import task_env

    for mode, status in expected.items():
        out = subprocess.run([sys.executable, str(script), mode], capture_output=True, text=True, timeout=60,
                             env=task_env())
        assert out.stdout.strip() == f"STATUS {status}", (mode, out.stdout, out.stderr)
