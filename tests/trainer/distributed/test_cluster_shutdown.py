"""End of training and recovery with real processes on 127.0.0.1 (train_script.py: TF1 scripts, import changed).

- the chief's training ends (MonitoredTrainingSession closed or not; Supervisor stopped or not): every ps's
  `server.join()` ends its process with 0 (its `finally` blocks run); a worker that would train forever is
  told and exits 0;
- a chief that crashes (uncaught exception) does not release the ps, which still holds the variables;
- a ps nobody calls exits with the retryable idle code (tiny timeout through the environment);
- a ps killed (SIGKILL) and restarted on its address mid-run: the sessions are recreated, the chief restores
  the latest checkpoint, the global step never goes back past it, and MNIST still reaches 95%.
"""
import json
import os
import re
import sys
import time

import pytest

from dist_cluster import HERE
from life_procs import OutputProc, spec as cluster_spec

SCRIPT = os.path.join(HERE, "train_script.py")


class Proc(OutputProc):
    """A task of train_script.py."""

    WAIT = 120

    def __init__(self, spec, job, index, style, last_step, checkpoint_dir=None, env=None):
        args = [sys.executable, SCRIPT, json.dumps(spec), job, str(index), style, str(last_step)]
        if checkpoint_dir:
            args.append(str(checkpoint_dir))
        super().__init__(args, env)


@pytest.fixture
def procs(started):
    return lambda *args, **kwargs: started(Proc(*args, **kwargs))


@pytest.mark.parametrize("style", ["mts", "mts-noclose", "sv", "sv-nostop"])
def test_chief_end_releases_every_ps_and_the_other_worker(procs, style, tmp_path):
    spec = cluster_spec(2)
    ps = procs(spec, "ps", 0, style, 0)
    ps.wait_for("^READY")
    # worker 1 would train forever: only the chief's release can stop it
    other = procs(spec, "worker", 1, style, 10 ** 9)
    go = tmp_path / "go"
    chief = procs(spec, "worker", 0, style, 60, tmp_path if style.startswith("sv") else None,
                  env={"CHIEF_GO_FILE": str(go)})
    other.wait_for("^SESSION")   # training (a task that starts after the release is never told)
    go.touch()   # the chief's steps start
    assert chief.wait() == 0, chief.output
    chief.wait_for(r"^STOPPED \d+")   # its loop ended (worker 1 may have pushed the global step past 60 first)
    assert ps.wait() == 0, ps.output
    assert "PS_FINALLY" in ps.output and "PS_JOIN_RETURNED" not in ps.output   # join() ended the process
    assert other.wait() == 0, other.output
    assert re.search(r"^(STOPPED|ENDED)", other.output, re.M), other.output


@pytest.mark.parametrize("style", ["crash", "crash-finally"])
def test_crashed_chief_leaves_the_ps_serving_its_variables(procs, style):
    import numpy as np

    import tensorfleet as tf

    spec = cluster_spec(1)
    ps = procs(spec, "ps", 0, style, 0)
    ps.wait_for("^READY")
    chief = procs(spec, "worker", 0, style, 40)
    assert chief.wait() == 1, chief.output
    assert "RuntimeError: the chief crashes" in chief.output
    # the chief process is gone, so any release it sent was already answered: the ps must still serve and
    # hold the trained weights (a fresh client reads them by name, without initialising anything)
    g = tf.Graph()
    with g.as_default(), tf.device("/job:ps/task:0"):
        w = tf.Variable(tf.zeros([20, 1]), name="w")
        config = tf.ConfigProto(device_filters=["/job:ps"])   # the chief's task is gone
        with tf.Session(f"grpc://{spec['ps'][0]}", graph=g, config=config) as sess:
            trained = sess.run(w)
    target = np.arange(20, dtype=np.float32).reshape(20, 1) / 20
    assert np.abs(trained - target).max() < np.abs(target).max()   # moved towards the regression's weights
    assert ps.popen.poll() is None, ps.output


def test_orphaned_ps_exits_with_the_retryable_idle_code(procs):
    from tensorfleet.distributed.shutdown import PS_IDLE_TIMEOUT_EXIT_CODE

    spec = cluster_spec(1)
    ps = procs(spec, "ps", 0, "mts", 0, env={"TENSORFLEET_PS_IDLE_TIMEOUT_SECONDS": "1.5"})
    ps.wait_for("^READY")
    assert ps.wait(60) == PS_IDLE_TIMEOUT_EXIT_CODE == 203, ps.output
    assert PS_IDLE_TIMEOUT_EXIT_CODE >= 128   # the operator's ExitCode policy retries it
    assert "PS_FINALLY" in ps.output and "PS_JOIN_RETURNED" not in ps.output


def test_mnist_monitored_training_session_async_reaches_95_percent(procs, tmp_path, full_mnist_dir):
    """The MonitoredTrainingSession style, 1 ps + 2 workers, async: >= 95% on the 10,000 test images, and at
    the end every task exits 0 (the ps released by the chief)."""
    spec = cluster_spec(2)
    env = {"TRAIN_MODEL": "mnist", "TENSORFLEET_DATA_DIR": os.path.dirname(full_mnist_dir)}
    ps = procs(spec, "ps", 0, "mts", 0, env=env)
    ps.wait_for("^READY")
    other = procs(spec, "worker", 1, "mts", 1200, env=env)
    chief = procs(spec, "worker", 0, "mts", 1200, tmp_path, env=env)
    assert chief.wait(240) == 0, chief.output
    assert other.wait() == 0, other.output
    assert ps.wait() == 0, ps.output
    assert re.findall(r"^SESSION global_step=(\d+)", chief.output, re.M) == ["0"], chief.output
    assert float(chief.wait_for(r"^ACCURACY ([\d.]+)").group(1)) >= 0.95, chief.output


def test_ps_killed_and_restarted_training_resumes_from_the_checkpoint(procs, tmp_path, full_mnist_dir):
    import tensorfleet as tf

    spec = cluster_spec(2)
    env = {"TRAIN_MODEL": "mnist", "TENSORFLEET_DATA_DIR": os.path.dirname(full_mnist_dir)}
    ps = procs(spec, "ps", 0, "mts", 0, env=env)
    ps.wait_for("^READY")
    chief = procs(spec, "worker", 0, "mts", 1500, tmp_path, env=env)
    other = procs(spec, "worker", 1, "mts", 1500, env=env)
    deadline = time.monotonic() + Proc.WAIT

    def latest_step():
        path = tf.train.latest_checkpoint(str(tmp_path))
        return int(path.rsplit("-", 1)[1]) if path else -1

    while latest_step() < 200:   # a checkpoint mid-run to come back to (the step-0 one does not count)
        assert time.monotonic() < deadline and chief.popen.poll() is None, chief.output
        time.sleep(0.1)
    ps.kill()
    checkpointed = latest_step()
    ps_again = procs(spec, "ps", 0, "mts", 0, env=env)   # the pod, recreated on the same address
    assert chief.wait(240) == 0, chief.output
    assert other.wait() == 0, other.output
    assert ps_again.wait() == 0, ps_again.output   # released at the end
    sessions = [int(g) for g in re.findall(r"^SESSION global_step=(\d+)", chief.output, re.M)]
    assert len(sessions) >= 2 and sessions[0] == 0, chief.output   # recreated after the restart
    restored = sessions[1]
    assert restored >= checkpointed, (restored, checkpointed)
    # that checkpoint's global step (saved a few async steps after the step in its name), not a fresh start
    assert restored < checkpointed + 50, (restored, checkpointed)
    after = chief.output.split(f"SESSION global_step={restored}", 1)[1]
    steps = [int(s) for s in re.findall(r"^STEP (\d+)", after, re.M)]
    assert steps and min(steps) >= restored   # never back past the checkpoint
    assert float(chief.wait_for(r"^ACCURACY ([\d.]+)").group(1)) >= 0.95, chief.output
