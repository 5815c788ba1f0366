"""ClusterSpec, Server argument handling and TFConfigClusterResolver against TF 1.15's documented behaviour."""
import json

import pytest

import tensorfleet as tf
from tensorfleet.distributed.cluster import ClusterDef


def test_cluster_spec_from_dict_of_lists():
    spec = tf.train.ClusterSpec({"worker": ["w0:2222", "w1:2222"], "ps": ["ps0:2222"]})
    assert spec.as_dict() == {"worker": ["w0:2222", "w1:2222"], "ps": ["ps0:2222"]}
    assert sorted(spec.jobs) == ["ps", "worker"]
    assert spec.num_tasks("worker") == 2
    assert spec.task_indices("worker") == [0, 1]
    assert spec.task_address("worker", 1) == "w1:2222"
    assert spec.job_tasks("ps") == ["ps0:2222"]
    assert bool(spec) and not bool(tf.train.ClusterSpec({}))


def test_sparse_cluster_spec_from_dict_of_dicts():
    spec = tf.train.ClusterSpec({"worker": {1: "w1:2222", 3: "w3:2222"}, "ps": ["ps0:2222"]})
    assert spec.as_dict() == {"worker": {1: "w1:2222", 3: "w3:2222"}, "ps": ["ps0:2222"]}
    assert spec.task_indices("worker") == [1, 3]
    assert spec.job_tasks("worker") == [None, "w1:2222", None, "w3:2222"]
    assert spec.num_tasks("worker") == 2


def test_cluster_def_round_trip_and_equality():
    spec = tf.train.ClusterSpec({"worker": ["w0:1", "w1:2"], "ps": ["p:3"]})
    cd = spec.as_cluster_def()
    assert isinstance(cd, ClusterDef)
    assert [j.name for j in cd.job] == ["ps", "worker"]
    assert dict(cd.job[1].tasks) == {0: "w0:1", 1: "w1:2"}
    assert tf.train.ClusterSpec(cd) == spec
    assert tf.train.ClusterSpec(spec) == spec
    assert spec != tf.train.ClusterSpec({"worker": ["w0:1"]})
    assert ClusterDef.FromString(cd.SerializeToString()) == cd


@pytest.mark.parametrize("bad, exc, fragment", [
    ("nope", TypeError, "must be a dictionary"),
    ({1: ["a:1"]}, TypeError, "Job name 1"),
    ({"worker": {"x": "a:1"}}, TypeError, "Task index must be an integer"),
    ({"worker": "a:1"}, TypeError, "'worker'"),
    ({"worker": [3]}, TypeError, "'worker'"),
])
def test_bad_cluster_specs_name_the_problem(bad, exc, fragment):
    with pytest.raises(exc, match=fragment):
        tf.train.ClusterSpec(bad)


def test_lookup_errors_name_the_job_and_task():
    spec = tf.train.ClusterSpec({"worker": ["w0:1"]})
    with pytest.raises(ValueError, match="No such job in cluster: 'ps'"):
        spec.num_tasks("ps")
    with pytest.raises(ValueError, match="No such task index in job 'worker': 3"):
        spec.task_address("worker", 3)


def test_server_infers_job_and_task_only_when_unique(local_servers):
    with pytest.raises(ValueError, match="Must specify an explicit `job_name`"):
        tf.train.Server({"ps": ["127.0.0.1:0"], "worker": ["127.0.0.1:0"]}, start=False)
    with pytest.raises(ValueError, match="Must specify an explicit `task_index`"):
        tf.train.Server({"worker": ["127.0.0.1:0", "127.0.0.1:0"]}, start=False)
    server = tf.train.Server({"worker": {3: "127.0.0.1:0"}}, start=False)
    local_servers.append(server)
    assert (server.job_name, server.task_index) == ("worker", 3)
    with pytest.raises(ValueError, match="Unsupported protocol"):
        tf.train.Server({"w": ["127.0.0.1:0"]}, protocol="grpc+verbs", start=False)


def test_create_local_server_binds_loopback_port_zero(local_servers):
    server = tf.train.Server.create_local_server()
    local_servers.append(server)
    assert server.target.startswith("grpc://127.0.0.1:")
    port = int(server.target.rsplit(":", 1)[1])
    assert port > 0
    assert server.server_def.job_name == "localhost"
    assert dict(server.server_def.cluster.job[0].tasks) == {0: f"127.0.0.1:{port}"}
    assert tf.distribute.Server is tf.train.Server


KUBEFLOW_TF_CONFIG = {"cluster": {"chief": ["j-chief-0.ns.svc:2222"], "evaluator": ["j-evaluator-0.ns.svc:2222"],
                                  "ps": ["j-ps-0.ns.svc:2222"],
                                  "worker": ["j-worker-0.ns.svc:2222", "j-worker-1.ns.svc:2222"]},
                      "task": {"type": "worker", "index": 1}, "environment": "cloud"}


def test_tf_config_resolver_reads_the_operators_tf_config(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", json.dumps(KUBEFLOW_TF_CONFIG))
    r = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    assert r.task_type == "worker" and r.task_id == 1
    assert r.environment == "cloud"
    assert r.cluster_spec().as_dict() == KUBEFLOW_TF_CONFIG["cluster"]
    assert r.master() == "j-worker-1.ns.svc:2222"
    assert r.master(rpc_layer="grpc") == "grpc://j-worker-1.ns.svc:2222"
    assert r.master("ps", 0, rpc_layer="grpc") == "grpc://j-ps-0.ns.svc:2222"
    assert r.num_accelerators() in ({}, {"GPU": r.num_accelerators().get("GPU")})
    monkeypatch.setenv("TF_CONFIG", json.dumps({**KUBEFLOW_TF_CONFIG, "rpc_layer": "grpc"}))
    assert r.master() == "grpc://j-worker-1.ns.svc:2222"


def test_tf_config_resolver_sparse_and_absent(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": {"worker": {"1": "w1:2222"}, "ps": ["p:1"]},
                                                "task": {"type": "worker", "index": 1}}))
    r = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    assert r.cluster_spec().as_dict() == {"worker": {1: "w1:2222"}, "ps": ["p:1"]}
    monkeypatch.delenv("TF_CONFIG")
    assert not r.cluster_spec() and r.task_type is None and r.master() == ""
    monkeypatch.setenv("TF_CONFIG", "{not json")
    with pytest.raises(ValueError, match="TF_CONFIG"):
        r.cluster_spec()
