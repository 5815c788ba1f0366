"""A real Prometheus scrapes a running tensorfleet-train and answers a query through its HTTP API.

Prometheus is Debian's package unpacked by scripts/install-tools.sh into .tools/bin (no service), or
the binary named by $TENSORFLEET_PROMETHEUS, or `prometheus` on PATH; skipped with that reason
elsewhere. Everything listens on 127.0.0.1; the query loop is bounded in count and time.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.parse
import urllib.request

import pytest
from launcher_helpers import REPO


def _prometheus_binary():
    for candidate in (os.environ.get("TENSORFLEET_PROMETHEUS", ""), os.path.join(REPO, ".tools", "bin", "prometheus"),
                      shutil.which("prometheus") or ""):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _query(port, expr):
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(url, timeout=10) as r:
        doc = json.loads(r.read())
    assert doc["status"] == "success", doc
    return doc["data"]["result"]


def test_prometheus_scrapes_a_running_trainer(launcher, tmp_path):
    binary = _prometheus_binary()
    if binary is None:
        pytest.skip("no Prometheus binary: run scripts/install-tools.sh (Debian's prometheus package, unpacked) "
                    "or set TENSORFLEET_PROMETHEUS")
    from tensorfleet import metrics

    trainer = launcher(["--model", "mnist-mlp", "--steps", "100000000", "--log-every", "20", "--data", "digits",
                        "--log-format", "json"], env={"TENSORFLEET_JOB_NAME": "scraped"})
    line = trainer.wait_for(lambda ln: ln.startswith("{") and json.loads(ln).get("event") == "metrics_serving")
    target = json.loads(line)["port"]
    web = _free_port()
    (tmp_path / "prometheus.yml").write_text(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
        f"scrape_configs:\n  - job_name: trainer\n    static_configs:\n      - targets: ['127.0.0.1:{target}']\n")
    prom = subprocess.Popen([binary, f"--config.file={tmp_path / 'prometheus.yml'}",
                             f"--storage.tsdb.path={tmp_path / 'tsdb'}", f"--web.listen-address=127.0.0.1:{web}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        trained = "TrainerMetrics" in dir(metrics)
        expr = 'tensorfleet_train_global_step{job_name="scraped"}' if trained else "tensorfleet_executor_runs_total"
        result = []
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                result = [r for r in _query(web, expr) if float(r["value"][1]) > 0]
            except OSError:   # Prometheus still starting
                result = []
            if result:
                break
            time.sleep(0.5)
        assert result, f"Prometheus never had {expr} > 0"
        sample = result[0]
        assert sample["metric"]["job"] == "trainer" and sample["metric"]["instance"] == f"127.0.0.1:{target}"
        if trained:
            assert sample["metric"]["replica_type"] == "worker" and sample["metric"]["replica_index"] == "0"
            scraped = float(sample["value"][1])
            # a global step the trainer logs after the query is at least what Prometheus scraped before it
            later = trainer.wait_for(lambda ln: ln.startswith("{") and json.loads(ln).get("event") == "progress"
                                     and json.loads(ln)["global_step"] >= scraped)
            assert json.loads(later)["global_step"] >= scraped > 0
    finally:
        prom.send_signal(signal.SIGTERM)
        try:
            prom.wait(timeout=30)
        except subprocess.TimeoutExpired:
            prom.kill()
            prom.wait()
        trainer.signal(signal.SIGTERM)
    assert trainer.wait() == 143
