"""The end of a distributed estimator job: the chief's release of the cluster (in-process servers on 127.0.0.1)
and the chief's reading of the evaluator's summaries."""
import threading
import time

import pytest

import tensorfleet as tf
from tensorfleet.estimator import evaluator_wait, ps_release

import cluster_util as cu


@pytest.fixture
def servers(monkeypatch):
    cluster = cu.operator_cluster({"chief": 1, "ps": 1, "worker": 1})
    made = {}

    def config(task_type):
        monkeypatch.setenv("TF_CONFIG", cu.tf_config(cluster, task_type, 0))
        return tf.estimator.RunConfig()

    spec = tf.train.ClusterSpec(cluster)
    for job in ("ps", "chief", "worker"):
        made[job] = tf.train.Server(spec, job_name=job, task_index=0)
    yield made, config
    for server in made.values():
        server.stop()


def join_in_thread(server):
    """server.join() on a thread; the thread's `exit` records the SystemExit code join() ends with."""
    def join():
        try:
            server.join()
        except SystemExit as e:
            t.exit = e.code

    t = threading.Thread(target=join, daemon=True)
    t.exit = None
    t.start()
    return t


def test_chief_release_ends_the_ps_once_chief_and_worker_have_ended_and_tells_the_worker(servers):
    made, config = servers
    ps_join = join_in_thread(made["ps"])
    assert ps_release.release_ps_tasks(made["chief"], config("chief")) == []
    assert made["worker"].training_finished.wait(30)      # told, and still serving (keep_serving)
    assert ps_release.release_ps_tasks(made["chief"], config("chief")) == []   # idempotent
    ps_join.join(1)
    assert ps_join.is_alive()   # released, but serving the chief and the worker until they have ended
    assert made["ps"].lifetime.waiting_for == ["/job:chief/replica:0/task:0", "/job:worker/replica:0/task:0"]
    made["chief"].stop()
    made["worker"].stop()   # each reports its end to the ps
    ps_join.join(30)
    assert not ps_join.is_alive() and ps_join.exit == 0 == made["ps"].exit_code   # join() raised SystemExit(0)


def test_no_release_without_ps(monkeypatch):
    cluster = cu.operator_cluster({"chief": 1, "worker": 1})
    monkeypatch.setenv("TF_CONFIG", cu.tf_config(cluster, "chief", 0))
    assert ps_release.release_ps_tasks(object(), tf.estimator.RunConfig()) == []


def test_evaluated_step_reads_the_eval_summaries(tmp_path):
    assert evaluator_wait.evaluated_step(str(tmp_path)) == -1
    from tensorfleet.estimator.estimator import write_dict_to_summary
    write_dict_to_summary(str(tmp_path), {"accuracy": 0.5, "global_step": 10}, 10)
    write_dict_to_summary(str(tmp_path), {"accuracy": 0.7, "global_step": 30}, 30)
    assert evaluator_wait.evaluated_step(str(tmp_path)) == 30
    assert evaluator_wait.wait_for_final_evaluation(str(tmp_path), 30, timeout=5)
    start = time.monotonic()
    assert not evaluator_wait.wait_for_final_evaluation(str(tmp_path), 31, timeout=1)
    assert time.monotonic() - start < 10


def test_the_chief_waits_for_the_evaluation_the_evaluator_makes_last(tmp_path):
    # async workers pushed the global step to 303 after max_steps 300; the evaluator scored 302 and left
    from tensorfleet.estimator.estimator import write_dict_to_summary
    write_dict_to_summary(str(tmp_path), {"accuracy": 0.7, "global_step": 302}, 302)
    target = evaluator_wait.step_to_wait_for(303, 300)
    assert target == 300
    start = time.monotonic()
    assert evaluator_wait.wait_for_final_evaluation(str(tmp_path), target, timeout=60)
    assert time.monotonic() - start < 5
    assert evaluator_wait.step_to_wait_for(250, 300) == 250   # training ended early: its last checkpoint
    assert evaluator_wait.step_to_wait_for(250, None) == 250
