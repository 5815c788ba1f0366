"""ConfigProto & friends, thread pools (shared vs per session), intra-op threads through threadpoolctl."""
import pytest

import tensorfleet as tf
from tensorfleet.executor import thread_pools
from tensorfleet.devices import parse_visible_device_list


def test_config_exports_and_defaults():
    for name in ("ConfigProto", "GPUOptions", "RunOptions", "RunMetadata"):
        assert hasattr(tf, name)
    cfg = tf.ConfigProto()
    assert cfg.inter_op_parallelism_threads == 0 and cfg.intra_op_parallelism_threads == 0
    assert cfg.allow_soft_placement is False and cfg.log_device_placement is False
    assert cfg.gpu_options.per_process_gpu_memory_fraction == 0.0
    assert cfg.gpu_options.allow_growth is None  # unset: Tensorfleet grows on demand (documented)
    assert cfg.experimental.cuda_graph_replay is False


def test_config_fields_set_like_tf():
    gpu = tf.GPUOptions(per_process_gpu_memory_fraction=0.5, allow_growth=True, visible_device_list="0")
    cfg = tf.ConfigProto(gpu_options=gpu, allow_soft_placement=True, inter_op_parallelism_threads=2)
    cfg.gpu_options.visible_device_list = "1,0"
    assert cfg.gpu_options.per_process_gpu_memory_fraction == 0.5
    assert cfg.gpu_options.visible_device_list == "1,0"
    assert cfg.allow_soft_placement and cfg.inter_op_parallelism_threads == 2
    assert tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE).trace_level == 3


def test_unknown_field_is_a_value_error():
    with pytest.raises(ValueError, match='Protocol message ConfigProto has no "allow_soft" field'):
        tf.ConfigProto(allow_soft=True)
    with pytest.raises(ValueError, match="GPUOptions"):
        tf.GPUOptions().memory = 3


def test_session_rejects_a_non_config():
    with pytest.raises(TypeError, match="ConfigProto"):
        tf.Session(config={"allow_soft_placement": True})


def test_visible_device_list_parsing():
    assert parse_visible_device_list("", 2) == [0, 1]
    assert parse_visible_device_list("1,0", 2) == [1, 0]
    with pytest.raises(ValueError, match="'2' is not a visible GPU"):
        parse_visible_device_list("0,2", 2)
    with pytest.raises(ValueError, match="listed twice"):
        parse_visible_device_list("0,0", 2)


def test_device_count_gpu_zero_hides_gpus():
    with tf.Session(config=tf.ConfigProto(device_count={"GPU": 0})) as s:
        assert [d.device_type for d in s.list_devices()] == ["CPU"]


@pytest.fixture
def fresh_shared_pools(monkeypatch):
    monkeypatch.setattr(thread_pools, "_SHARED", None)
    yield
    shared = thread_pools._SHARED
    if shared is not None:
        shared.shutdown()


def test_first_session_creates_shared_pools_later_sessions_reuse(fresh_shared_pools):
    cpu = "/job:localhost/replica:0/task:0/device:CPU:0"
    s1 = tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=3))
    s2 = tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=5))
    s3 = tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=2, use_per_session_threads=True))
    s4 = tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=1))
    try:
        assert s1._pools is s2._pools is thread_pools.shared_pools()
        assert s1._pools.inter_op_threads == 3  # the first session's setting wins, like TF
        assert s3._pools is not s1._pools and s3._pools.inter_op_threads == 2
        assert s4._pools is None  # one inter-op thread: everything inline, no pool
        dev = next(d for d in s3.list_devices() if d.name == cpu)
        assert s3._pools.pool_for(dev).num_threads == 2
        assert s1._pools.pool_for(dev).num_threads == 3
    finally:
        for s in (s1, s2, s3, s4):
            s.close()
    assert s3._pools.pools == {}  # per-session pools close with their session
    assert s1._pools.pools  # shared pools outlive sessions


def test_intra_op_threads_applied_through_threadpoolctl():
    threadpoolctl = pytest.importorskip("threadpoolctl")

    def blas_threads():
        return [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]

    original = blas_threads()
    if not original:
        pytest.skip("no BLAS library visible to threadpoolctl")
    s = tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=2))
    try:
        assert blas_threads() == [2] * len(original)
        with tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=1)):
            assert blas_threads() == [1] * len(original)
    finally:
        s.close()
    assert blas_threads() == original


def test_intra_op_threads_zero_leaves_blas_alone(monkeypatch):
    import threadpoolctl

    calls = []
    monkeypatch.setattr(threadpoolctl, "threadpool_limits", lambda *a, **k: calls.append((a, k)))
    with tf.Session():
        pass
    assert calls == []


SHARED_MACHINE_CASES = [
    # (environment, expected BLAS threads): TF_CONFIG/launcher say "one of several processes"
    ({}, None),
    ({"TF_CONFIG": '{"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 0}}'}, None),
    ({"TF_CONFIG": '{"cluster": {"ps": ["p:1"], "worker": ["a:1", "b:1"]}, "task": {"type": "worker", "index": 1}}'},
     1),
    ({"TF_CONFIG": "{not json"}, None),
    ({"TENSORFLEET_PROCESSES_PER_HOST": "1"}, None),
    ({"TENSORFLEET_PROCESSES_PER_HOST": "3", "_cpus": 2}, 1),
    ({"TENSORFLEET_PROCESSES_PER_HOST": "2", "_cpus": 8}, 4),
    # the user's own setting always wins
    ({"OPENBLAS_NUM_THREADS": "2", "TENSORFLEET_PROCESSES_PER_HOST": "3"}, None),
    ({"OMP_NUM_THREADS": "4", "TF_CONFIG": '{"cluster": {"worker": ["a:1", "b:1"]}}'}, None),
]


@pytest.mark.parametrize("env,expected", SHARED_MACHINE_CASES)
def test_shared_machine_blas_threads(env, expected, monkeypatch):
    from tensorfleet.executor import thread_pools

    env = dict(env)
    monkeypatch.setattr(thread_pools.os, "cpu_count", lambda: env.pop("_cpus", 2))
    assert thread_pools.shared_machine_blas_threads(env) == expected


def test_shared_machine_blas_threads_rejects_a_bad_process_count():
    from tensorfleet.executor import thread_pools

    with pytest.raises(ValueError, match="TENSORFLEET_PROCESSES_PER_HOST"):
        thread_pools.shared_machine_blas_threads({"TENSORFLEET_PROCESSES_PER_HOST": "two"})


def test_a_worker_of_a_multi_task_job_defaults_blas_to_one_thread_in_a_fresh_process():
    """End to end in a subprocess (the default is process-wide and applied once): BLAS really runs 1 thread."""
    import json
    import os
    import subprocess
    import sys

    threadpoolctl = pytest.importorskip("threadpoolctl")
    if not [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]:
        pytest.skip("no BLAS library visible to threadpoolctl")
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one CPU: BLAS runs one thread anyway")
    code = ("import threadpoolctl, tensorfleet as tf\n"
            "tf.Session().close()\n"
            "print([i['num_threads'] for i in threadpoolctl.threadpool_info() if i['user_api'] == 'blas'])\n")
    env = {k: v for k, v in os.environ.items() if k not in
           ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")}
    env["TF_CONFIG"] = json.dumps({"cluster": {"ps": ["localhost:2222"], "worker": ["localhost:2223"]},
                                   "task": {"type": "worker", "index": 0}})
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    threads = json.loads(out.stdout.strip().splitlines()[-1])
    assert threads and all(n == 1 for n in threads)
