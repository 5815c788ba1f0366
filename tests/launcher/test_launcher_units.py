"""In-process tests of the launcher's pieces: TF_CONFIG parsing, peers, probing, log formats, exit codes."""
import io
import json
import signal
import socket

import pytest
from tensorfleet_train import cli, runlog, startup
from tensorfleet_train.exit_codes import (
    ExitCode,
    LauncherExit,
    describe,
    for_signal,
    from_returncode,
    is_retryable,
)
from tensorfleet_train.task import Task, parse_tf_config, task_from_environ

OPERATOR_STYLE = ('{"cluster":{"chief":["j-chief-0.ns.svc:2222"],"evaluator":["j-evaluator-0.ns.svc:2222"],'
                  '"ps":["j-ps-0.ns.svc:2222","j-ps-1.ns.svc:2222"],"worker":["j-worker-0.ns.svc:2222",'
                  '"j-worker-1.ns.svc:2222"]},"task":{"type":"worker","index":1},"environment":"cloud"}')


def test_operator_style_tf_config():
    task = parse_tf_config(OPERATOR_STYLE)
    assert (task.type, task.index, task.is_chief, task.address) == ("worker", 1, False, "j-worker-1.ns.svc:2222")
    assert task.training_cluster() == {"chief": ["j-chief-0.ns.svc:2222"],
                                       "ps": ["j-ps-0.ns.svc:2222", "j-ps-1.ns.svc:2222"],
                                       "worker": ["j-worker-0.ns.svc:2222", "j-worker-1.ns.svc:2222"]}
    assert task.peers_needed() == {"ps:0": "j-ps-0.ns.svc:2222", "ps:1": "j-ps-1.ns.svc:2222"}


def test_chief_rules():
    cluster = {"ps": ["a:1"], "worker": ["b:1", "c:1"]}
    assert Task("worker", 0, cluster).is_chief and not Task("worker", 1, cluster).is_chief
    with_chief = dict(cluster, chief=["d:1"])
    assert Task("chief", 0, with_chief).is_chief and not Task("worker", 0, with_chief).is_chief
    assert Task("master", 0, {"master": ["d:1"], "worker": ["b:1"]}).is_chief
    assert not Task("ps", 0, cluster).is_chief and not Task("evaluator", 0, dict(cluster, evaluator=["e:1"])).is_chief


def test_peers_needed_per_role():
    cluster = {"ps": ["p:1"], "worker": ["w0:1", "w1:1"], "evaluator": ["e:1"]}
    assert Task("ps", 0, cluster).peers_needed() == {}
    assert Task("evaluator", 0, cluster).peers_needed() == {}
    assert Task("worker", 0, cluster).peers_needed() == {"ps:0": "p:1"}
    worker_only = {"worker": ["w0:1", "w1:1"]}
    assert Task("worker", 0, worker_only).peers_needed() == {}
    assert Task("worker", 1, worker_only).peers_needed() == {"worker:0": "w0:1"}
    assert Task("worker", 0, {}).peers_needed() == {} and not Task("worker", 0, {}).is_distributed


def test_peers_all_is_every_other_training_task():
    cluster = {"chief": ["c:1"], "ps": ["p:1"], "worker": ["w0:1", "w1:1"], "evaluator": ["e:1"]}
    assert Task("worker", 1, cluster).peers_all() == {"chief:0": "c:1", "ps:0": "p:1", "worker:0": "w0:1"}
    assert Task("ps", 0, cluster).peers_all() == {"chief:0": "c:1", "worker:0": "w0:1", "worker:1": "w1:1"}
    assert Task("evaluator", 0, cluster).peers_all() == {}
    args, _ = cli.parse_args(["--model", "mnist-mlp"])
    assert args.wait_for == "needed"


def test_no_tf_config_is_a_single_chief():
    task = task_from_environ({})
    assert (task.type, task.index, task.is_chief, task.is_distributed) == ("worker", 0, True, False)


def test_sparse_cluster_form():
    task = parse_tf_config('{"cluster":{"ps":{"1":"b:2","0":"a:1"},"worker":["w:1"]},"task":{"type":"ps","index":1}}')
    assert task.cluster["ps"] == ["a:1", "b:2"] and task.address == "b:2"


@pytest.mark.parametrize("raw,needle", [
    ("{not json", "not valid JSON"),
    ("[1]", "JSON object"),
    ('{"cluster":{"ps":["a:1"],"worker":["b:1"]},"task":{"type":"worker","index":3}}', "worker:3 is not in"),
    ('{"cluster":{"worker":["b:1"]},"task":{"type":"trainer","index":0}}', "task.type"),
    ('{"cluster":{"worker":["b:1"]},"task":{"type":"worker","index":-1}}', "task.index"),
    ('{"cluster":{"worker":["b"]},"task":{"type":"worker","index":0}}', "cluster.worker[0]"),
    ('{"cluster":{"worker":["b:99999"]},"task":{"type":"worker","index":0}}', "port 1-65535"),
    ('{"cluster":{"gpu":["b:1"]},"task":{"type":"worker","index":0}}', "unknown job 'gpu'"),
    ('{"cluster":{"ps":["a:1"]},"task":{"type":"ps","index":0}}', "no chief, master or worker"),
    ('{"cluster":{"worker":"b:1"},"task":{"type":"worker","index":0}}', "cluster.worker must be a list"),
])
def test_invalid_tf_config_names_the_field(raw, needle):
    with pytest.raises(LauncherExit) as e:
        parse_tf_config(raw)
    assert e.value.code == ExitCode.INVALID_TF_CONFIG and needle in e.value.message


def test_exit_code_classes():
    assert from_returncode(-15) == 143 == ExitCode.SIGTERM and from_returncode(-9) == 137
    assert from_returncode(0) == 0 and from_returncode(7) == 7
    assert for_signal(signal.SIGINT) == 130
    permanent = [c for c in ExitCode if 0 < c < 128]
    retryable = [c for c in ExitCode if c >= 128]
    assert {c.name for c in permanent} == {"TRAINING_ERROR", "BAD_ARGUMENTS", "INVALID_TF_CONFIG", "DATA_UNAVAILABLE",
                                           "SCRIPT_NOT_EXECUTABLE", "SCRIPT_NOT_FOUND"}
    assert {c.name for c in retryable} == {"SIGINT", "SIGKILL", "SIGTERM", "STARTUP_TIMEOUT", "LOST_PEER",
                                           "PS_UNAVAILABLE", "PS_IDLE_TIMEOUT"}
    assert all(is_retryable(c) for c in retryable) and not any(is_retryable(c) for c in permanent)
    # launcher-defined retryable codes do not collide with signal codes 129-192 (SIGRTMAX is 64)
    assert all(c > 128 + 64 for c in (ExitCode.STARTUP_TIMEOUT, ExitCode.LOST_PEER, ExitCode.PS_UNAVAILABLE,
                                      ExitCode.PS_IDLE_TIMEOUT))
    assert describe(143) == "SIGTERM" and describe(138) == "signal 10" and describe(5) == "exit 5"
    assert startup.recovery_exit_code(["worker:0", "ps:1"]) == ExitCode.PS_UNAVAILABLE
    assert startup.recovery_exit_code(["chief:0"]) == ExitCode.LOST_PEER


def test_probe_and_wait_against_a_real_listener():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    address = f"127.0.0.1:{sock.getsockname()[1]}"
    try:
        reason = startup.probe(address)
        assert reason is not None and "TCP" in reason
        with pytest.raises(LauncherExit) as e:
            startup.wait_for_peers({"ps:0": address}, timeout=0.6, interval=0.1)
        assert e.value.code == ExitCode.STARTUP_TIMEOUT and "ps:0" in e.value.message and address in e.value.message
        sock.listen(1)
        assert startup.probe(address) is None
        assert startup.wait_for_peers({"ps:0": address}, timeout=5) < 5
    finally:
        sock.close()


@pytest.fixture
def restore_logging():
    import logging

    root, own = logging.getLogger(), logging.getLogger(runlog.LOGGER_NAME)
    saved = root.handlers[:], own.handlers[:], own.propagate, own.level
    yield
    root.handlers[:], own.handlers[:] = saved[0], saved[1]
    own.propagate, own.level = saved[2], saved[3]


def test_log_formats_carry_role_and_index(restore_logging):
    text, js = io.StringIO(), io.StringIO()
    runlog.configure("ps", 3, "text", stream=text)
    runlog.log("progress", "", global_step=10, loss=0.5)
    runlog.configure("ps", 3, "json", stream=js)
    runlog.log("progress", "hello", global_step=10, loss=float("nan"))
    import logging

    logging.getLogger("tensorfleet").warning("from the runtime")
    assert " INFO ps:3 progress global_step=10 loss=0.5" in text.getvalue()
    runtime = json.loads(js.getvalue().splitlines()[1])
    assert (runtime["role"], runtime["index"], runtime["event"], runtime["msg"]) == ("ps", 3, "tensorfleet",
                                                                                     "from the runtime")
    doc = json.loads(js.getvalue().splitlines()[0])
    assert doc["role"] == "ps" and doc["index"] == 3 and doc["event"] == "progress" and doc["msg"] == "hello"
    assert doc["global_step"] == 10 and doc["loss"] == "nan"


def test_cli_models_match_the_builders():
    from tensorfleet_train import models

    assert cli.MODELS == models.MODELS and cli.DATA_SOURCES == models.DATA_SOURCES


@pytest.mark.parametrize("argv", [[], ["--model", "mnist-rnn"], ["--model", "mnist-mlp", "--steps", "0"],
                                  ["--model", "mnist-mlp", "--script", "x.py"],
                                  ["--model", "mnist-mlp", "--replicas-to-aggregate", "2"],
                                  ["--model", "mnist-mlp", "--log-format", "xml"]])
def test_bad_arguments_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as e:
        cli.parse_args(argv)
    assert e.value.code == ExitCode.BAD_ARGUMENTS
    assert "tensorfleet-train" in capsys.readouterr().err


def test_command_after_double_dash():
    args, command = cli.parse_args(["--startup-timeout", "5", "--", "python", "x.py", "--steps", "3"])
    assert command == ["python", "x.py", "--steps", "3"] and args.model is None and args.startup_timeout == 5
    args, command = cli.parse_args(["--script", "x.py", "--", "--flag"])
    assert args.script == "x.py" and command == ["--flag"]


def test_the_last_progress_is_left_as_the_termination_message_the_operator_reads(tmp_path):
    import json

    from tensorfleet_train.telemetry import Telemetry

    path = tmp_path / "termination-log"
    t = Telemetry("chief", 0, -1, environ={"TENSORFLEET_TERMINATION_MESSAGE_PATH": str(path)}).start()
    t.target_steps(300)
    t.global_step(0)
    for step in (1, 2, 3):
        t.step(0.01, 100, 2.0 / step, step)
    t.rates(100.0, 10000.0)
    t.step(0.01, 100, float("nan"), 4)   # a NaN loss does not replace the last real one
    t.stop()
    assert json.loads(path.read_text()) == {"progress": {"globalStep": 4, "totalSteps": 300, "loss": 2.0 / 3,
                                                         "examplesPerSecond": 10000.0}}
    # a ps reports no global step: it leaves no message
    ps_path = tmp_path / "ps-log"
    ps = Telemetry("ps", 0, -1, environ={"TENSORFLEET_TERMINATION_MESSAGE_PATH": str(ps_path)}).start()
    ps.target_steps(300)
    ps.stop()
    assert not ps_path.exists()
