"""The launcher's ps role never reports success for a ps that was not released (tensorfleet_train/ps.py).

- a bad TENSORFLEET_PS_IDLE_TIMEOUT_SECONDS or TENSORFLEET_PS_RELEASE_GRACE_SECONDS exits BAD_ARGUMENTS (2)
  at start-up, naming the variable (the idle timeout's ValueError killed the join thread: the ps exited 0);
- a `server.join()` that fails in any other way exits TRAINING_ERROR (1), not 0.
"""
import json
import types

import pytest
from launcher_helpers import free_ports, tf_config
from tensorfleet_train import ps as ps_role
from tensorfleet_train.exit_codes import ExitCode, LauncherExit, is_permanent
from tensorfleet_train.shutdown import Shutdown


def _cluster():
    ps, worker = free_ports(2)
    return {"ps": [f"127.0.0.1:{ps}"], "worker": [f"127.0.0.1:{worker}"]}


@pytest.mark.parametrize("name,value", [("TENSORFLEET_PS_IDLE_TIMEOUT_SECONDS", "soon"),
                                        ("TENSORFLEET_PS_IDLE_TIMEOUT_SECONDS", "-5"),
                                        ("TENSORFLEET_PS_RELEASE_GRACE_SECONDS", "2m")])
def test_a_bad_ps_timeout_value_is_a_configuration_error(launcher, name, value):
    p = launcher(["--model", "mnist-mlp", "--log-format", "json"], tf_config=tf_config(_cluster(), "ps", 0),
                 env={name: value})
    assert p.wait(60) == ExitCode.BAD_ARGUMENTS and is_permanent(ExitCode.BAD_ARGUMENTS), p.output
    exit_event = p.events("exit")[-1]
    assert name in exit_event["msg"] and repr(value) in exit_event["msg"], p.output
    assert not p.events("server_started"), p.output


class _FailingServer:
    target = "grpc://127.0.0.1:1"
    exit_code = None
    stopped = False

    def __init__(self, *args, **kwargs):
        pass

    def join(self):
        raise RuntimeError("the join broke")

    def stop(self):
        _FailingServer.stopped = True


def test_a_join_that_fails_is_a_training_error_not_a_success(monkeypatch):
    monkeypatch.setattr(ps_role.tf.train, "Server", _FailingServer)
    task = types.SimpleNamespace(training_cluster=lambda: json.loads(json.dumps(_cluster())), type="ps", index=0,
                                 name="ps:0")
    telemetry = types.SimpleNamespace(target_steps=lambda n: None, ps_variable_bytes=lambda n: None)
    with pytest.raises(LauncherExit) as e:
        ps_role.serve(types.SimpleNamespace(steps=10), task, Shutdown(), telemetry)
    assert e.value.code == ExitCode.TRAINING_ERROR
    assert "RuntimeError: the join broke" in e.value.message
    assert _FailingServer.stopped
