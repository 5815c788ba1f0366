"""The launcher's side of the operator contract, pinned against the operator's own source read as text.

The launcher never imports tensorfleet_operator (and vice versa), so this test parses
operator/tensorfleet_operator/core/api.py and core/observe.py with `ast` and compares: environment variable names,
the default ports (2222 tfjob-port, 9100 metrics), the ExitCode policy's boundary, and the exit-code table
in docs/launcher.md against `tensorfleet_train.exit_codes`.
"""
import ast
import json
import os
import re

from tensorfleet_train import exit_codes, script_runner, startup, telemetry
from tensorfleet_train.exit_codes import ExitCode
from tensorfleet_train.task import parse_tf_config

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _read(*parts) -> str:
    with open(os.path.join(REPO, *parts)) as f:
        return f.read()


def _constants(source: str) -> dict:
    """Module-level `NAME = <literal>` assignments of a source file."""
    out = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                out[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass
    return out


API = _constants(_read("operator", "tensorfleet_operator", "core", "api.py"))


def test_environment_names_and_ports_match_the_operator():
    assert API["ENV_TF_CONFIG"] == "TF_CONFIG"
    assert API["ENV_METRICS_PORT"] == telemetry.METRICS_PORT_ENV == "TENSORFLEET_METRICS_PORT"
    assert API["DEFAULT_TRAINER_METRICS_PORT"] == telemetry.DEFAULT_METRICS_PORT == 9100
    assert API["DEFAULT_PORT"] == 2222 and API["PORT_NAME"] == "tfjob-port"
    # where the trainer leaves its final progress for the operator (local mode's kubelet sets it)
    assert API["ENV_TERMINATION_MESSAGE_PATH"] == telemetry.TERMINATION_MESSAGE_ENV \
        == "TENSORFLEET_TERMINATION_MESSAGE_PATH"
    # names the launcher passes through untouched to the runtime and to user scripts
    assert API["ENV_RPC_TOKEN"] == "TENSORFLEET_RPC_TOKEN"
    assert API["ENV_CUDA_VISIBLE_DEVICES"] == "CUDA_VISIBLE_DEVICES"
    launcher_sources = "".join(_read("trainer", "tensorfleet_train", f) for f in ("task.py", "cli.py"))
    assert '"TF_CONFIG"' in launcher_sources and '"CUDA_VISIBLE_DEVICES"' in launcher_sources


def test_exit_code_classes_match_the_operator_policy():
    boundary = API["EXIT_CODE_RETRYABLE_MIN"]
    assert boundary == exit_codes.RETRYABLE_MIN == 128
    status = _read("operator", "tensorfleet_operator", "core", "observe.py")
    # the operator's rule, as written: retryable when missing, >= the boundary, or negative
    assert "exit_code >= api.EXIT_CODE_RETRYABLE_MIN" in status
    for code in ExitCode:
        operator_retries = code >= boundary
        assert operator_retries == exit_codes.is_retryable(code), code
        assert (0 < code < boundary) == exit_codes.is_permanent(code), code
    retryable_by_design = {ExitCode.SIGINT, ExitCode.SIGKILL, ExitCode.SIGTERM, ExitCode.STARTUP_TIMEOUT,
                           ExitCode.LOST_PEER, ExitCode.PS_UNAVAILABLE, ExitCode.PS_IDLE_TIMEOUT}
    assert {c for c in ExitCode if c >= boundary} == retryable_by_design
    assert ExitCode.SIGTERM == 143 and all(c <= 255 for c in ExitCode)
    assert startup.recovery_exit_code(["ps:0"]) >= boundary and startup.recovery_exit_code(["worker:0"]) >= boundary
    assert set(script_runner.STOPPING_SIGNALS) <= set(script_runner.FORWARDED_SIGNALS)


def test_ps_idle_exit_code_is_the_librarys():
    """The library's ps (Server.join) exits with its own constant (tensorfleet never imports the launcher):
    the launcher's table must name the same number, retryable."""
    from tensorfleet.distributed import shutdown as library_shutdown

    assert ExitCode.PS_IDLE_TIMEOUT == library_shutdown.PS_IDLE_TIMEOUT_EXIT_CODE
    assert exit_codes.is_retryable(library_shutdown.PS_IDLE_TIMEOUT_EXIT_CODE)


def test_docs_table_lists_every_exit_code():
    doc = _read("docs", "launcher.md")
    rows = {}
    for m in re.finditer(r"^\| (\d+) \| `(\w+)` \| (permanent|retryable|success) \|", doc, re.M):
        rows[int(m.group(1))] = (m.group(2), m.group(3))
    expected = {int(c): (c.name, "success" if c == 0 else "retryable" if c >= 128 else "permanent") for c in ExitCode}
    assert rows == expected
    module_doc = exit_codes.__doc__
    assert all(f"| {int(c)} | {c.name} |" in module_doc for c in ExitCode if c < 128 or c >= 200)


def test_operator_style_tf_config_from_the_operator_docs():
    """The TF_CONFIG example in docs/operator.md (the operator's exact format) parses into the right task."""
    text = _read("docs", "operator.md")
    raw = re.search(r"`(\{\"cluster\":.*?\"environment\":\"cloud\"\})`", text).group(1)
    task = parse_tf_config(raw)
    doc = json.loads(raw)
    assert (task.type, task.index) == (doc["task"]["type"], doc["task"]["index"])
    assert task.cluster == doc["cluster"] and all(a.endswith(":2222") for a in task.cluster["ps"])
    assert task.peers_needed() == {f"ps:{i}": a for i, a in enumerate(doc["cluster"]["ps"])}
