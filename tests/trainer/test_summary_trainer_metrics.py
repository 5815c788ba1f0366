"""Trainer metrics (tensorfleet/metrics.py) against the contract table in docs/metrics.md ("Trainer metrics"):
a real prometheus_client HTTP server on 127.0.0.1 is scraped and its text parsed by prometheus_client's own
parser; names, types, labels and buckets must equal the documented ones."""
import json
import pathlib
import re
import urllib.request

import pytest

import tensorfleet as tf
from tensorfleet import metrics

parser = pytest.importorskip("prometheus_client.parser")

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "metrics.md"
REPLICA = {"job_name": "mnist", "replica_type": "worker", "replica_index": "1"}


def _contract():
    """{name: (type, extra labels, bucket list or None)} from the Trainer metrics table."""
    text = DOC.read_text() if DOC.exists() else ""
    if "# Trainer metrics" not in text:
        pytest.skip("docs/metrics.md has no 'Trainer metrics' section yet (the deploy branch writes it)")
    section = text.split("# Trainer metrics", 1)[1]
    rows, buckets_of = {}, {}
    for line in section.splitlines():
        m = re.match(r"\|\s*`(tensorfleet_[a-z_]+)`\s*\|\s*(\w+)\s*\|([^|]*)\|(.*)\|\s*$", line)
        if not m:
            continue
        name, kind, labels, meaning = m.groups()
        extra = frozenset(re.findall(r"`(\w+)`", labels))
        b = re.search(r"Buckets ([0-9., ]+[0-9])", meaning)
        buckets = [float(x) for x in b.group(1).split(",")] if b else None
        if "Buckets as the step duration" in meaning:
            buckets = "step"
        rows[name] = (kind, extra)
        buckets_of[name] = buckets
    step = buckets_of.get("tensorfleet_train_step_duration_seconds")
    return {n: (k, e, step if buckets_of[n] == "step" else buckets_of[n]) for n, (k, e) in rows.items()}


class _FakeDeviceMemory:
    def __init__(self, name, used, cap):
        self.device_name, self._used, self.cap_bytes = name, used, cap

    def in_use(self):
        return self._used


def _scrape(registry):
    server, thread = metrics.serve_metrics(registry, port=0, addr="127.0.0.1")
    try:
        port = server.server_address[1]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as resp:
            assert resp.status == 200
            return resp.read().decode()
    finally:
        metrics.stop_serving(server)
        thread.join(timeout=30)
        assert not thread.is_alive()


def _families(text):
    """{exposed name: family} for tensorfleet_* families that have samples (counters with their _total)."""
    out = {}
    for fam in parser.text_string_to_metric_families(text):
        if not fam.name.startswith("tensorfleet_") or not fam.samples:
            continue
        out[fam.name + "_total" if fam.type == "counter" else fam.name] = fam
    return out


def _exercised(gpu=True):
    devices = [_FakeDeviceMemory("/job:localhost/replica:0/task:0/device:GPU:0", 1024, 4096)] if gpu else []
    m = metrics.TrainerMetrics("mnist", "worker", 1, gpu_devices=lambda: devices)
    m.record_step(0.02, examples=64, loss=0.5, global_step=10)
    m.set_rates(50.0, 3200.0)
    m.set_target_steps(1000)
    m.record_rpc("ps:0", "PushGradients", "sent", nbytes=4096, seconds=0.003)
    m.record_rpc("worker:0", "PullVariables", "received", nbytes=100)
    m.record_stale_gradients(2)
    m.record_barrier_wait(0.01)
    m.set_ps_variable_bytes(12345)
    m.record_checkpoint(0.4, when=1700000000.0)
    with tf.Session() as s:  # executor statistics move
        s.run(tf.constant(1.0) + 1.0)
    return m


def test_exposed_set_equals_the_documented_set():
    contract = _contract()
    fams = _families(_scrape(_exercised().registry))
    assert set(fams) == set(contract)
    for name, fam in fams.items():
        kind, extra, buckets = contract[name]
        assert fam.type == kind, name
        for sample in fam.samples:
            want = set(REPLICA) | extra | ({"le"} if sample.name.endswith("_bucket") else set())
            assert set(sample.labels) == want, (name, sample)
            assert {k: sample.labels[k] for k in REPLICA} == REPLICA
        if kind == "histogram":
            les = sorted({float(s.labels["le"]) for s in fam.samples if s.name.endswith("_bucket")})
            assert les == sorted(buckets) + [float("inf")], name


def test_values_reach_the_scrape():
    text = _scrape(_exercised().registry)
    values = {(s.name, tuple(sorted(s.labels.items()))): s.value
              for fam in parser.text_string_to_metric_families(text) for s in fam.samples}

    def value(name, **extra):
        return values[(name, tuple(sorted({**REPLICA, **extra}.items())))]

    assert value("tensorfleet_train_global_step") == 10
    assert value("tensorfleet_train_steps_total") == 1
    assert value("tensorfleet_train_examples_total") == 64
    assert value("tensorfleet_train_loss") == 0.5
    assert value("tensorfleet_train_target_steps") == 1000
    assert value("tensorfleet_rpc_bytes_total", peer="ps:0", direction="sent") == 4096
    assert value("tensorfleet_rpc_requests_total", peer="worker:0", method="PullVariables",
                 direction="received") == 1
    assert value("tensorfleet_rpc_duration_seconds_bucket", method="PushGradients", le="0.005") == 1
    assert value("tensorfleet_rpc_duration_seconds_bucket", method="PushGradients", le="0.0025") == 0
    assert value("tensorfleet_sync_stale_gradients_dropped_total") == 2
    assert value("tensorfleet_checkpoint_last_timestamp_seconds") == 1700000000.0
    assert value("tensorfleet_gpu_memory_used_bytes", device="/device:GPU:0") == 1024
    assert value("tensorfleet_gpu_memory_limit_bytes", device="/device:GPU:0") == 4096
    assert value("tensorfleet_executor_runs_total") >= 1


def test_absent_until_known_and_no_gpu_series_without_a_gpu():
    fresh = metrics.TrainerMetrics("j", "worker", 0, gpu_devices=lambda: [])
    fams = _families(_scrape(fresh.registry))
    for absent in ("tensorfleet_train_target_steps", "tensorfleet_checkpoint_last_timestamp_seconds",
                   "tensorfleet_gpu_memory_used_bytes", "tensorfleet_gpu_memory_limit_bytes",
                   "tensorfleet_ps_variable_bytes"):
        assert absent not in fams
    assert "tensorfleet_train_steps_total" in fams and "tensorfleet_executor_runs_total" in fams
    ps = metrics.TrainerMetrics("j", "ps", 0, gpu_devices=lambda: [])
    assert "tensorfleet_ps_variable_bytes" in _families(_scrape(ps.registry))


def test_bad_arguments():
    with pytest.raises(ValueError, match="replica_type"):
        metrics.TrainerMetrics("j", "gpu-worker", 0)
    with pytest.raises(ValueError, match="job_name"):
        metrics.TrainerMetrics("", "worker", 0)
    m = metrics.TrainerMetrics("j", "worker", 0, gpu_devices=lambda: [])
    with pytest.raises(ValueError, match="direction"):
        m.record_rpc("ps:0", "Push", "up")
    with pytest.raises(ValueError, match="TENSORFLEET_METRICS_PORT"):
        metrics.metrics_port({"TENSORFLEET_METRICS_PORT": "http"})
    assert metrics.metrics_port({}) == 9100 and metrics.metrics_port({"TENSORFLEET_METRICS_PORT": "9200"}) == 9200


def test_replica_labels_from_tf_config_and_pod_name():
    cluster = {"ps": ["mnist-ps-0.ns.svc:2222"], "worker": ["mnist-worker-0.ns.svc:2222",
                                                           "mnist-worker-1.ns.svc:2222"]}
    env = {"TF_CONFIG": json.dumps({"cluster": cluster, "task": {"type": "worker", "index": 1}}),
           "HOSTNAME": "mnist-worker-1"}
    assert metrics.replica_labels(env) == REPLICA
    env_no_host = {"TF_CONFIG": env["TF_CONFIG"], "HOSTNAME": "laptop"}
    assert metrics.replica_labels(env_no_host)["job_name"] == "mnist"  # from the cluster addresses
    env_named = {"TF_CONFIG": json.dumps({"cluster": cluster, "task": {"type": "PS", "index": 0}}),
                 "TENSORFLEET_JOB_NAME": "other", "HOSTNAME": "x"}
    assert metrics.replica_labels(env_named) == {"job_name": "other", "replica_type": "ps", "replica_index": "0"}
    assert metrics.replica_labels({"HOSTNAME": "laptop"}) == {"job_name": "local", "replica_type": "worker",
                                                             "replica_index": "0"}
    with pytest.raises(ValueError, match="TF_CONFIG"):
        metrics.replica_labels({"TF_CONFIG": "{not json"})
