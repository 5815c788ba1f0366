"""RunConfig from every TF_CONFIG the operator writes (its own `tf_config()`), against TF 1.15's rules:
`run_config.py`'s values for master, is_chief, replica counts, global ids (chief first, other jobs
alphabetically, ps last) and per-role device_filters, and its error messages."""
import json

import pytest

import tensorfleet as tf
from tensorfleet_operator.core.api import ReplicaType as T
from tensorfleet_operator.core.children import tf_config
from tensorfleet_operator.core.spec import parse_job


def tfjob(name, **replicas):
    keys = {"chief": "Chief", "master": "Master", "ps": "PS", "worker": "Worker", "evaluator": "Evaluator"}
    specs = {keys[k]: {"replicas": n, "template": {"spec": {"containers": [
        {"name": "tensorflow", "image": "img", "command": ["python", "x.py"]}]}}} for k, n in replicas.items()}
    return parse_job({"apiVersion": "tensorfleet.io/v1", "kind": "TFJob",
                      "metadata": {"name": name, "namespace": "ns", "uid": "u"}, "spec": {"tfReplicaSpecs": specs}})


def config_for(monkeypatch, job, rtype, index, **kwargs):
    monkeypatch.setenv("TF_CONFIG", tf_config(job, rtype, index))
    return tf.estimator.RunConfig(**kwargs)


EST = dict(chief=1, ps=1, worker=2, evaluator=1)
CLUSTER = {"chief": ["est-chief-0.ns.svc:2222"], "evaluator": ["est-evaluator-0.ns.svc:2222"],
           "ps": ["est-ps-0.ns.svc:2222"], "worker": ["est-worker-0.ns.svc:2222", "est-worker-1.ns.svc:2222"]}


@pytest.mark.parametrize("rtype, index, master, is_chief, global_id, filters", [
    (T.CHIEF, 0, "grpc://est-chief-0.ns.svc:2222", True, 0, ["/job:ps", "/job:chief"]),
    (T.WORKER, 0, "grpc://est-worker-0.ns.svc:2222", False, 2, ["/job:ps", "/job:worker/task:0"]),
    (T.WORKER, 1, "grpc://est-worker-1.ns.svc:2222", False, 3, ["/job:ps", "/job:worker/task:1"]),
    (T.PS, 0, "grpc://est-ps-0.ns.svc:2222", False, 4, ["/job:ps", "/job:worker", "/job:chief", "/job:master"]),
])
def test_chief_ps_worker_evaluator_training_roles(monkeypatch, rtype, index, master, is_chief, global_id, filters):
    config = config_for(monkeypatch, tfjob("est", **EST), rtype, index)
    assert json.loads(tf_config(tfjob("est", **EST), rtype, index))["cluster"] == CLUSTER
    assert config.cluster_spec == tf.train.ClusterSpec(CLUSTER)      # the evaluator job stays in the spec
    assert (config.task_type, config.task_id) == (rtype.lower, index)
    assert config.master == master and config.is_chief is is_chief
    assert config.num_ps_replicas == 1 and config.num_worker_replicas == 3     # chief + workers
    assert config.global_id_in_cluster == global_id       # chief 0, evaluator 1, workers 2-3, ps 4 (TF's order)
    assert config.evaluation_master == "" and config.environment == "cloud"
    assert list(config.session_config.device_filters) == filters
    assert config.session_config.allow_soft_placement is True


def test_evaluator_is_outside_the_training_cluster(monkeypatch):
    config = config_for(monkeypatch, tfjob("est", **EST), T.EVALUATOR, 0)
    assert (config.task_type, config.task_id, config.is_chief) == ("evaluator", 0, False)
    assert config.cluster_spec == tf.train.ClusterSpec({}) and not config.cluster_spec
    assert config.master == "" and config.evaluation_master == ""
    assert (config.num_ps_replicas, config.num_worker_replicas, config.global_id_in_cluster) == (0, 0, None)
    assert config.session_config is None


@pytest.mark.parametrize("replicas, rtype", [(dict(worker=2), T.WORKER), (dict(ps=2, worker=2), T.PS),
                                             (dict(ps=2, worker=2), T.WORKER)])
def test_clusters_without_a_chief_are_refused_as_tf_does(monkeypatch, replicas, rtype):
    with pytest.raises(ValueError, match='If "cluster" is set in TF_CONFIG, it must have one "chief" node.'):
        config_for(monkeypatch, tfjob("j", **replicas), rtype, 0)


def test_legacy_master_cluster(monkeypatch):
    job = tfjob("m", master=1, ps=1, worker=1)
    config = config_for(monkeypatch, job, T.MASTER, 0)
    assert config.is_chief and config.master == "grpc://m-master-0.ns.svc:2222"
    assert config.num_worker_replicas == 2 and config.global_id_in_cluster == 0
    assert list(config.session_config.device_filters) == ["/job:ps", "/job:master"]
    worker = config_for(monkeypatch, job, T.WORKER, 0)
    assert not worker.is_chief and worker.global_id_in_cluster == 1


def test_no_tf_config_is_a_local_chief(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    config = tf.estimator.RunConfig()
    assert (config.task_type, config.task_id, config.is_chief, config.master) == ("worker", 0, True, "")
    assert (config.num_ps_replicas, config.num_worker_replicas, config.global_id_in_cluster) == (0, 1, 0)
    assert not config.cluster_spec and config.session_config is None and config.environment == "local"
    assert (config.save_checkpoints_secs, config.save_checkpoints_steps) == (600, None)
    assert (config.keep_checkpoint_max, config.log_step_count_steps, config.save_summary_steps) == (5, 100, 100)


def test_sparse_cluster(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": {"chief": ["a:1"], "ps": ["b:1"], "worker": {"1": "c:1"}},
                                                "task": {"type": "worker", "index": 1}}))
    config = tf.estimator.RunConfig()
    assert config.master == "grpc://c:1" and config.num_worker_replicas == 2
    assert config.global_id_in_cluster == 2        # chief 0, then worker task 1 (index 0 absent), ps 3
    assert list(config.session_config.device_filters) == ["/job:ps", "/job:worker/task:1"]
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": {"chief": ["a:1"], "ps": ["b:1"], "worker": {"1": "c:1"}},
                                                "task": {"type": "worker", "index": 0}}))
    with pytest.raises(ValueError, match="0 is not a valid task_id for task_type worker in the cluster_spec"):
        tf.estimator.RunConfig()


@pytest.mark.parametrize("tf_cfg, message", [
    ({"cluster": {"chief": ["a:1"], "worker": ["b:1"]}, "task": {"type": "worker", "index": 3}},
     "3 is not a valid task_id for task_type worker"),
    ({"cluster": {"chief": ["a:1"], "worker": ["b:1"]}, "task": {"type": "trainer", "index": 0}},
     "trainer is not a valid task_type in the cluster_spec"),
    ({"cluster": {"chief": ["a:1", "c:1"]}, "task": {"type": "chief", "index": 0}},
     'The "cluster" in TF_CONFIG must have only one "chief" node.'),
    ({"cluster": {"chief": ["a:1"]}, "task": {"index": 0}}, 'If "cluster" is set in TF_CONFIG, task type must be set.'),
    ({"cluster": {"chief": ["a:1"]}, "task": {"type": "chief"}}, "task index must be set"),
    ({"cluster": {"chief": ["a:1"]}, "task": {"type": "chief", "index": -1}}, "Task index must be non-negative"),
    ({"task": {"type": "ps", "index": 0}}, 'If "cluster" is not set in TF_CONFIG, task type must be WORKER.'),
    ({"cluster": {"master": ["a:1"], "chief": ["b:1"]}, "task": {"type": "master", "index": 0}},
     "If `master` node exists in `cluster`, job `chief` is not supported."),
])
def test_bad_tf_config_messages(monkeypatch, tf_cfg, message):
    monkeypatch.setenv("TF_CONFIG", json.dumps(tf_cfg))
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        tf.estimator.RunConfig()


def test_single_node_cluster_session_master_and_model_dir(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": {"chief": ["a:1"]}, "task": {"type": "chief", "index": 0},
                                                "model_dir": "/m"}))
    config = tf.estimator.RunConfig()
    assert config.master == "" and config.model_dir == "/m"     # one task: a direct (local) master
    with pytest.raises(ValueError, match="must have the same value as the model_dir in TF_CONFIG"):
        tf.estimator.RunConfig(model_dir="/other")
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": {"chief": ["a:1"], "ps": ["p:1"]}, "session_master": "x",
                                                "task": {"type": "chief", "index": 0}}))
    assert tf.estimator.RunConfig().master == "x"


def test_checkpoint_cadence_and_replace(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    c = tf.estimator.RunConfig(save_checkpoints_steps=100)
    assert (c.save_checkpoints_steps, c.save_checkpoints_secs) == (100, None)
    c = tf.estimator.RunConfig(save_checkpoints_secs=30)
    assert (c.save_checkpoints_steps, c.save_checkpoints_secs) == (None, 30)
    with pytest.raises(ValueError, match="cannot be both set"):
        tf.estimator.RunConfig(save_checkpoints_steps=1, save_checkpoints_secs=1)
    r = c.replace(save_checkpoints_steps=7, keep_checkpoint_max=2)
    assert (r.save_checkpoints_steps, r.save_checkpoints_secs, r.keep_checkpoint_max) == (7, None, 2)
    assert c.save_checkpoints_secs == 30       # the original is unchanged
    with pytest.raises(ValueError, match="Replacing master is not supported"):
        c.replace(master="grpc://x:1")
    with pytest.raises(ValueError, match="log_step_count_steps should be > 0"):
        tf.estimator.RunConfig(log_step_count_steps=0)
    with pytest.raises(ValueError, match="session_config must be instance of ConfigProto"):
        tf.estimator.RunConfig(session_config={"a": 1})


def test_estimator_places_variables_on_the_ps(monkeypatch):
    config = config_for(monkeypatch, tfjob("est", **EST), T.WORKER, 1)
    est = tf.estimator.Estimator(lambda features, labels, mode: None, model_dir="/tmp/unused-est", config=config)
    g = tf.Graph()
    with g.as_default(), g.device(est._device_fn):
        v = tf.get_variable("w", [2], initializer=tf.zeros_initializer())
        y = tf.identity(v * 2.0)
    assert v.op.device == "/job:ps/task:0"
    assert y.op.device == "/job:worker/task:1"
