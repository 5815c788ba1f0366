"""tensorfleet-train as real subprocesses: training, every exit-code class, SIGTERM, start-up wait, evaluator.

Everything runs on 127.0.0.1 with scikit-learn's digits (no fetch), bounded by the fixtures' timeouts;
handshakes are log lines the launcher writes, never sleeps.
"""
import json
import os
import signal
import sys

import pytest
import tensorfleet as tf
from tensorfleet_train.checkpoints import MARKER_NAME
from tensorfleet_train.exit_codes import ExitCode, is_permanent, is_retryable

DIGITS = ["--data", "digits", "--log-format", "json"]


def _event(name):
    return lambda line: line.startswith("{") and json.loads(line).get("event") == name


def test_single_process_model_trains_to_a_loss_drop(launcher, tmp_path):
    ckpt = tmp_path / "ckpt"
    p = launcher(["--model", "mnist-softmax", "--steps", "300", "--log-every", "10", "--checkpoint-dir", str(ckpt),
                  *DIGITS])
    assert p.wait() == 0, p.output
    progress = p.events("progress")
    assert [d["global_step"] for d in progress] == list(range(10, 301, 10))
    assert all(d["role"] == "worker" and d["index"] == 0 and d["examples_per_sec"] > 0 for d in progress)
    first, last = progress[0]["loss"], progress[-1]["loss"]
    assert last < first / 2, (first, last)
    test = p.events("test")[0]
    assert test["global_step"] == 300 and test["accuracy"] >= 0.85   # chance is 0.1
    assert tf.train.latest_checkpoint(str(ckpt)).endswith("model.ckpt-300")
    assert json.loads((ckpt / MARKER_NAME).read_text()) == {"checkpoint": "model.ckpt-300", "global_step": 300}
    assert p.events("exit")[-1]["exit_code"] == 0


@pytest.mark.parametrize("model", ["mnist-softmax", "mnist-mlp", "mnist-cnn"])
def test_every_built_in_model_learns(launcher, model):
    p = launcher(["--model", model, "--steps", "150", "--batch-size", "50", "--log-every", "50", *DIGITS])
    assert p.wait() == 0, p.output
    assert p.events("test")[0]["accuracy"] >= 0.8   # chance is 0.1


def test_text_log_lines_carry_role_and_index(launcher):
    p = launcher(["--model", "mnist-mlp", "--steps", "20", "--log-every", "10", "--data", "digits"])
    assert p.wait() == 0, p.output
    progress = [line for line in p.lines if " progress " in line]
    assert len(progress) == 2 and all(" INFO worker:0 progress global_step=" in line for line in progress)
    assert all("loss=" in line and "examples_per_sec=" in line for line in progress)


def test_bad_arguments_are_permanent(launcher):
    p = launcher(["--model", "mnist-mlp", "--batch-size", "-3"])
    assert p.wait() == ExitCode.BAD_ARGUMENTS and is_permanent(ExitCode.BAD_ARGUMENTS)
    assert "--batch-size" in p.output
    p = launcher(["--model", "mnist-mlp"], env={"TENSORFLEET_METRICS_PORT": "ninety"})
    assert p.wait() == ExitCode.BAD_ARGUMENTS and "TENSORFLEET_METRICS_PORT" in p.output


def test_invalid_tf_config_is_permanent(launcher):
    p = launcher(["--model", "mnist-mlp", *DIGITS], tf_config='{"cluster": {"worker": ["127.0.0.1:1"]}, "task": ')
    assert p.wait() == ExitCode.INVALID_TF_CONFIG
    assert "invalid TF_CONFIG: not valid JSON" in p.output
    p = launcher(["--", sys.executable, "-c", "pass"],
                 tf_config={"cluster": {"worker": ["127.0.0.1:1"]}, "task": {"type": "worker", "index": 2}})
    assert p.wait() == ExitCode.INVALID_TF_CONFIG and "worker:2 is not in cluster.worker" in p.output


def test_missing_data_is_permanent(launcher, tmp_path):
    p = launcher(["--model", "mnist-softmax", "--data", "mnist", "--steps", "5"],
                 env={"TENSORFLEET_DATA_DIR": str(tmp_path / "no-data"), "XDG_CACHE_HOME": str(tmp_path / "no-cache")})
    assert p.wait() == ExitCode.DATA_UNAVAILABLE == 4 and is_permanent(4)
    assert "python -m tensorfleet.datasets fetch" in p.output


def test_user_exception_and_script_codes(launcher, tmp_path):
    script = tmp_path / "boom.py"
    script.write_text("import sys\nprint('args', sys.argv[1:])\nraise ValueError('user code failed')\n")
    p = launcher(["--script", str(script), "--", "--lr", "0.1"])
    assert p.wait() == ExitCode.TRAINING_ERROR == 1
    assert "args ['--lr', '0.1']" in p.output and "ValueError: user code failed" in p.output
    p = launcher(["--", sys.executable, "-c", "import sys; sys.exit(7)"])
    assert p.wait() == 7   # passed through: permanent for the operator
    p = launcher(["--", sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"])
    assert p.wait() == 137 and is_retryable(137)
    p = launcher(["--script", str(tmp_path / "missing.py")])
    assert p.wait() == ExitCode.SCRIPT_NOT_FOUND and "missing.py: no such file" in p.output
    p = launcher(["--", "no-such-command-tensorfleet"])
    assert p.wait() == ExitCode.SCRIPT_NOT_FOUND and "command not found" in p.output


def test_script_sees_the_prepared_environment(launcher, tmp_path):
    out = tmp_path / "env.json"
    code = ("import json, os, sys; json.dump({k: os.environ.get(k) for k in ('TF_CONFIG', 'TENSORFLEET_RPC_TOKEN', "
            "'CUDA_VISIBLE_DEVICES', 'PYTHONUNBUFFERED')}, open(sys.argv[1], 'w'))")
    tf_config = {"cluster": {"worker": ["127.0.0.1:1"]}, "task": {"type": "worker", "index": 0}}
    p = launcher(["--", sys.executable, "-c", code, str(out)], tf_config=tf_config,
                 env={"TENSORFLEET_RPC_TOKEN": "s3cret", "CUDA_VISIBLE_DEVICES": ""})
    assert p.wait() == 0, p.output
    seen = json.loads(out.read_text())
    assert json.loads(seen["TF_CONFIG"]) == tf_config
    assert seen["TENSORFLEET_RPC_TOKEN"] == "s3cret" and seen["CUDA_VISIBLE_DEVICES"] == ""
    assert seen["PYTHONUNBUFFERED"] == "1"


def test_sigterm_chief_checkpoints_and_exits_143(launcher, tmp_path):
    ckpt = tmp_path / "ckpt"
    p = launcher(["--model", "mnist-mlp", "--steps", "100000000", "--log-every", "5", "--save-checkpoint-steps", "0",
                  "--checkpoint-dir", str(ckpt), *DIGITS])
    p.wait_for(_event("progress"))
    p.signal(signal.SIGTERM)
    assert p.wait() == ExitCode.SIGTERM == 143
    stopped = p.events("stopped")[0]
    saved = p.events("checkpoint")
    assert len(saved) == 1 and saved[0]["path"].endswith(f"model.ckpt-{stopped['global_step']}")
    assert tf.train.latest_checkpoint(str(ckpt)) == saved[0]["path"]
    assert not (ckpt / MARKER_NAME).exists()   # not complete: the evaluator keeps waiting
    # the checkpoint restores: a new run resumes from it and stops right there
    resumed = launcher(["--model", "mnist-mlp", "--steps", str(stopped["global_step"]), "--checkpoint-dir",
                        str(ckpt), *DIGITS])
    assert resumed.wait() == 0, resumed.output
    assert resumed.events("restored")[0]["path"] == saved[0]["path"]
    assert resumed.events("done")[0]["local_steps"] == 0


def test_sigterm_is_forwarded_to_a_script(launcher, tmp_path):
    script = tmp_path / "sleepy.py"
    script.write_text("import time\nprint('ready', flush=True)\ntime.sleep(600)\n")
    p = launcher(["--script", str(script)])
    p.wait_for(lambda line: line == "ready")
    p.signal(signal.SIGTERM)
    assert p.wait() == 143
    stubborn = tmp_path / "stubborn.py"
    stubborn.write_text("import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                        "print('ready', flush=True)\ntime.sleep(600)\n")
    p = launcher(["--grace-period", "1", "--script", str(stubborn)])
    p.wait_for(lambda line: line == "ready")
    p.signal(signal.SIGTERM)
    assert p.wait() == 143 and "grace period: killed" in p.output


def test_startup_timeout_is_retryable(launcher, closed_port):
    port, _ = closed_port
    tf_config = {"cluster": {"ps": [f"127.0.0.1:{port}"], "worker": ["127.0.0.1:1"]},
                 "task": {"type": "worker", "index": 0}}
    p = launcher(["--startup-timeout", "2", "--", sys.executable, "-c", "print('must not run')"], tf_config=tf_config)
    assert p.wait() == ExitCode.STARTUP_TIMEOUT and is_retryable(ExitCode.STARTUP_TIMEOUT)
    missing = [line for line in p.lines if "waiting for ps:0" in line]
    assert len(missing) == 1 and f"127.0.0.1:{port}" in missing[0]   # one line per missing peer
    assert "still unreachable after 2 s" in p.output and "must not run" not in p.output


@pytest.mark.parametrize("mode", [["--", sys.executable, "-c", "print('must not run')"],
                                  ["--model", "mnist-softmax", *DIGITS]])
def test_sigterm_while_waiting_for_peers_exits_143(launcher, closed_port, mode):
    port, _ = closed_port
    tf_config = {"cluster": {"ps": [f"127.0.0.1:{port}"], "worker": ["127.0.0.1:1"]},
                 "task": {"type": "worker", "index": 0}}
    p = launcher(["--log-format", "json", "--startup-timeout", "300", *mode], tf_config=tf_config)
    p.wait_for(_event("peer_missing"))
    p.signal(signal.SIGTERM)
    assert p.wait(timeout=60) == 143 and "must not run" not in p.output


def test_worker_started_before_its_peer_waits_then_proceeds(launcher, closed_port, tmp_path):
    port, sock = closed_port
    ran = tmp_path / "ran"
    tf_config = {"cluster": {"ps": [f"127.0.0.1:{port}"], "worker": ["127.0.0.1:1", "127.0.0.1:2"]},
                 "task": {"type": "worker", "index": 1}}
    p = launcher(["--log-format", "json", "--", sys.executable, "-c", f"open({str(ran)!r}, 'w').write('ok')"],
                 tf_config=tf_config)
    line = json.loads(p.wait_for(_event("peer_missing")))
    assert line["peer"] == "ps:0" and line["role"] == "worker" and line["index"] == 1
    assert not ran.exists()
    sock.listen(4)   # the peer comes up
    assert p.wait() == 0, p.output
    assert ran.read_text() == "ok" and p.events("peer_ready")[0]["peer"] == "ps:0"


def test_evaluator_follows_the_chief_and_stops_after_the_final_checkpoint(launcher, tmp_path):
    ckpt = tmp_path / "ckpt"
    tf_config = {"cluster": {"worker": ["127.0.0.1:1"], "evaluator": ["127.0.0.1:2"]},
                 "task": {"type": "evaluator", "index": 0}}
    evaluator = launcher(["--model", "mnist-mlp", "--checkpoint-dir", str(ckpt), "--eval-interval", "0.2", *DIGITS],
                         tf_config=tf_config)
    evaluator.wait_for(_event("evaluator"))
    chief = launcher(["--model", "mnist-mlp", "--steps", "300", "--save-checkpoint-steps", "100",
                      "--checkpoint-dir", str(ckpt), *DIGITS])
    assert chief.wait() == 0, chief.output
    assert evaluator.wait() == 0, evaluator.output
    evals = evaluator.events("eval")
    steps = [d["global_step"] for d in evals]
    assert steps == sorted(set(steps)) and steps[-1] == 300 and set(steps) <= {100, 200, 300}
    assert all(d["role"] == "evaluator" for d in evals)
    # the evaluator scored the final checkpoint on the same test split as the chief's own final evaluation
    test = chief.events("test")[0]
    assert (evals[-1]["loss"], evals[-1]["accuracy"]) == (test["loss"], test["accuracy"])
    assert evaluator.events("evaluator_done")


def test_evaluator_stops_on_sigterm_and_needs_a_directory(launcher, tmp_path):
    tf_config = {"cluster": {"worker": ["127.0.0.1:1"], "evaluator": ["127.0.0.1:2"]},
                 "task": {"type": "evaluator", "index": 0}}
    p = launcher(["--model", "mnist-softmax", "--checkpoint-dir", str(tmp_path), *DIGITS], tf_config=tf_config)
    p.wait_for(_event("evaluator"))
    p.signal(signal.SIGTERM)
    assert p.wait() == 143
    p = launcher(["--model", "mnist-softmax", *DIGITS], tf_config=tf_config)
    assert p.wait() == ExitCode.BAD_ARGUMENTS and "--checkpoint-dir" in p.output


def _scrape(port) -> dict:
    """{(name, labels...): value} of one /metrics scrape, parsed with prometheus_client's own parser."""
    import urllib.request

    from prometheus_client.parser import text_string_to_metric_families

    body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30).read().decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for fam in text_string_to_metric_families(body) for s in fam.samples}


def test_metrics_endpoint_serves_while_training(launcher, tmp_path):
    from tensorfleet import metrics

    tf_config = {"cluster": {"worker": ["127.0.0.1:1"], "evaluator": ["127.0.0.1:2"]},
                 "task": {"type": "evaluator", "index": 0}}
    p = launcher(["--model", "mnist-mlp", "--steps", "100000000", "--log-every", "5", "--save-checkpoint-steps", "50",
                  "--checkpoint-dir", str(tmp_path), *DIGITS], env={"TENSORFLEET_JOB_NAME": "mnist-job"})
    port = json.loads(p.wait_for(_event("metrics_serving")))["port"]
    p.wait_for(_event("progress"))
    first = _scrape(port)
    p.wait_for(_event("checkpoint"))
    first_step = max((v for (n, _), v in first.items() if n == "tensorfleet_train_global_step"), default=0)
    p.wait_for(lambda line: _event("progress")(line) and json.loads(line)["global_step"] > first_step)
    second = _scrape(port)
    evaluator = launcher(["--model", "mnist-mlp", "--checkpoint-dir", str(tmp_path), "--eval-interval", "0.2", *DIGITS],
                         tf_config=tf_config, env={"TENSORFLEET_JOB_NAME": "mnist-job"})
    eval_port = json.loads(evaluator.wait_for(_event("metrics_serving")))["port"]
    evaluated = json.loads(evaluator.wait_for(_event("eval")))
    evaluated_metrics = _scrape(eval_port)
    for proc in (p, evaluator):
        proc.signal(signal.SIGTERM)
        assert proc.wait() == 143

    def runs(scrape):
        return sum(v for (name, _), v in scrape.items() if name == "tensorfleet_executor_runs_total")

    assert runs(second) > runs(first) > 0   # the executor's own series, served in every build
    if not hasattr(metrics, "TrainerMetrics"):
        assert any(name.startswith("tensorfleet_executor_") for name, _ in second)
        return
    me = (("job_name", "mnist-job"), ("replica_index", "0"), ("replica_type", "worker"))
    assert second[("tensorfleet_train_target_steps", me)] == 100000000
    assert second[("tensorfleet_train_global_step", me)] > first[("tensorfleet_train_global_step", me)] >= 5
    assert second[("tensorfleet_train_steps_total", me)] > first[("tensorfleet_train_steps_total", me)]
    # one scrape may fall between the step counter's and the examples counter's update of a step: within one step
    steps = second[("tensorfleet_train_steps_total", me)]
    assert abs(second[("tensorfleet_train_examples_total", me)] - 100 * steps) <= 100
    assert second[("tensorfleet_train_examples_per_second", me)] > 0
    assert 0 < second[("tensorfleet_train_loss", me)] < 10
    assert second[("tensorfleet_checkpoint_duration_seconds_count", me)] >= 1
    assert abs(second[("tensorfleet_train_step_duration_seconds_count", me)] - steps) <= 1
    ev = (("job_name", "mnist-job"), ("replica_index", "0"), ("replica_type", "evaluator"))
    assert evaluated_metrics[("tensorfleet_train_global_step", ev)] == evaluated["global_step"]
    assert evaluated_metrics[("tensorfleet_train_loss", ev)] == pytest.approx(evaluated["loss"], abs=1e-6)


def test_module_and_console_script_agree():
    text = open(os.path.join(os.path.dirname(__file__), "..", "..", "pyproject.toml")).read()
    assert 'tensorfleet-train = "tensorfleet_train.cli:main"' in text
    assert '"tensorfleet_train*"' in text


def test_chief_and_evaluator_write_tensorboard_scalars(launcher, tmp_path):
    if not hasattr(tf, "summary"):
        pytest.skip("this tensorfleet has no tf.summary (issue 12's TensorBoard part)")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    ckpt = tmp_path / "ckpt"
    tf_config = {"cluster": {"worker": ["127.0.0.1:1"], "evaluator": ["127.0.0.1:2"]},
                 "task": {"type": "evaluator", "index": 0}}
    chief = launcher(["--model", "mnist-softmax", "--steps", "60", "--log-every", "20", "--checkpoint-dir", str(ckpt),
                      *DIGITS])
    assert chief.wait() == 0, chief.output
    evaluator = launcher(["--model", "mnist-softmax", "--checkpoint-dir", str(ckpt), *DIGITS], tf_config=tf_config)
    assert evaluator.wait() == 0, evaluator.output
    train = EventAccumulator(str(ckpt))
    train.Reload()
    losses = [(e.step, e.value) for e in train.Scalars("loss")]
    logged = [(d["global_step"], d["loss"]) for d in chief.events("progress")]
    assert [s for s, _ in losses] == [s for s, _ in logged] == [20, 40, 60]
    assert all(abs(v - lv) <= 1e-6 * max(1.0, abs(lv)) for (_, v), (_, lv) in zip(losses, logged, strict=True))
    assert len(train.Scalars("accuracy")) == 3
    evaluated = EventAccumulator(str(ckpt / "eval"))
    evaluated.Reload()
    final = evaluator.events("eval")[-1]
    assert [(e.step, round(e.value, 5)) for e in evaluated.Scalars("accuracy")][-1] == \
        (60, round(final["accuracy"], 5))
