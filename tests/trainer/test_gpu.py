"""GPU backend: memory policy and OOM errors (CPU, with a fake pool and simulated GPUs), and real-GPU tests.

Tests marked `gpu` need cupy and a CUDA device; they are skipped in CI and run on
an H100 whenever GPU code changes.
"""
import numpy as np
import pytest

import tensorfleet as tf
from tensorfleet.devices import SimulatedDevice
from tensorfleet.kernels import gpu_memory
from tensorfleet.kernels.gpu_memory import DeviceMemory, FakePool, memory_cap

GPU0 = "/job:localhost/replica:0/task:0/device:GPU:0"
CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"


# -- memory policy, no hardware ----------------------------------------------------
def test_memory_cap_computation():
    assert memory_cap(80 << 30, 0.0) == 80 << 30  # default: the whole device, grown on demand
    assert memory_cap(80 << 30, 0.25) == 20 << 30
    assert memory_cap(1000, 0.333) == 333
    with pytest.raises(ValueError, match="per_process_gpu_memory_fraction"):
        memory_cap(1000, 1.5)


def test_fraction_caps_the_pool_and_oom_names_op_size_and_cap():
    pool = FakePool(total_bytes=1 << 30)
    mem = DeviceMemory(GPU0, 1 << 30, tf.GPUOptions(per_process_gpu_memory_fraction=0.5), pool=pool)
    assert pool.get_limit() == 1 << 29 and mem.cap_bytes == 1 << 29
    pool.malloc(1 << 28)
    with pytest.raises(MemoryError) as raw:
        pool.malloc(1 << 29)
    assert gpu_memory.is_oom(raw.value)
    err = mem.translate(raw.value, type("Op", (), {"name": "dense/MatMul"})())
    assert isinstance(err, tf.errors.ResourceExhaustedError)
    msg = str(err)
    assert "OOM when allocating 536870912 bytes for op 'dense/MatMul'" in msg
    assert f"on {GPU0}" in msg and "cap of 536870912 bytes" in msg
    assert "per_process_gpu_memory_fraction=0.5 of 1073741824 bytes" in msg
    assert "268435456 bytes already in use" in msg


def test_default_policy_sets_no_limit_and_reserves_nothing():
    pool = FakePool(total_bytes=1 << 30)
    DeviceMemory(GPU0, 1 << 30, tf.GPUOptions(), pool=pool)
    assert pool.get_limit() == 0 and pool.used_bytes() == 0


def test_allow_growth_false_with_fraction_reserves_up_front():
    class Recording(FakePool):
        def __init__(self, total):
            super().__init__(total)
            self.reserved = []

        def malloc(self, nbytes):
            self.reserved.append(nbytes)
            return super().malloc(nbytes)

    pool = Recording(1 << 30)
    DeviceMemory(GPU0, 1 << 30, tf.GPUOptions(per_process_gpu_memory_fraction=0.5, allow_growth=False), pool=pool)
    assert pool.reserved == [(1 << 29) - (1 << 20)]


def test_requested_bytes_parses_cupy_message():
    exc = MemoryError("Out of memory allocating 1,048,576 bytes (allocated so far: 0 bytes).")
    assert gpu_memory.requested_bytes(exc) == 1048576


def _sim_config(limit, fraction=0.0, **kw):
    cfg = tf.ConfigProto(gpu_options=tf.GPUOptions(per_process_gpu_memory_fraction=fraction), **kw)
    cfg.experimental.simulated_devices = [SimulatedDevice("/cpu:0"), SimulatedDevice("/gpu:0", limit)]
    return cfg


def test_simulated_gpu_request_over_the_cap_raises_resource_exhausted():
    x = tf.placeholder(tf.float32, [None], name="x")
    y = tf.multiply(x, 2.0, name="double")
    with tf.Session(config=_sim_config(1 << 20, fraction=0.25)) as s:
        assert s.list_devices()[0].memory_limit_bytes == 1 << 20
        np.testing.assert_allclose(s.run(y, {x: np.ones(1000, np.float32)}), 2.0)  # 4000 bytes: fine
        with pytest.raises(tf.errors.ResourceExhaustedError) as e:
            s.run(y, {x: np.ones(100_000, np.float32)})  # 400,000 bytes > 262,144
    msg = str(e.value)
    assert "OOM when allocating 400000 bytes for op 'double'" in msg and "cap of 262144 bytes" in msg
    assert e.value.op is y.op


def test_simulated_gpu_without_fraction_is_not_checked():
    x = tf.placeholder(tf.float32, [None])
    y = x * 2.0
    with tf.Session(config=_sim_config(1 << 10)) as s:
        # 40,000 bytes on a 1 KiB device: no fraction, so no cap below the device and no per-op check
        np.testing.assert_array_equal(s.run(y, {x: np.ones(10_000, np.float32)}), np.full(10_000, 2.0, np.float32))


def test_cuda_graph_replay_is_not_attached_to_cpu_plans():
    x = tf.placeholder(tf.float32, [2])
    y = x + 1.0
    cfg = tf.ConfigProto(device_count={"GPU": 0})  # a CPU plan even where a GPU is present
    cfg.experimental.cuda_graph_replay = True
    with tf.Session(config=cfg) as s:
        np.testing.assert_array_equal(s.run(y, {x: [1.0, 2.0]}), [2.0, 3.0])
        (plan,) = s._plans.values()
    assert not any(d.is_real_gpu for d in plan.step_devices)
    assert plan.replay is None


def test_copy_kernels_between_host_and_simulated_devices_pass_arrays_through():
    from tensorfleet.devices import local_devices
    from tensorfleet.kernels.transfer_kernels import copy_kernel

    cfg = _sim_config(1 << 20)
    gpu, cpu = local_devices(cfg)
    arr = np.arange(3.0)
    assert copy_kernel(cpu, gpu)(None, arr) is arr
    assert copy_kernel(gpu, cpu)(None, arr) is arr


# -- real GPU ----------------------------------------------------------------------
@pytest.mark.gpu
def test_gpu_devices_listed_and_default_placement():
    import cupy as cp

    x = tf.placeholder(tf.float32, [2, 2], name="x")
    y = tf.matmul(x, x, name="y")
    with tf.Session() as s:
        names = [d.name for d in s.list_devices()]
        assert GPU0 in names and CPU0 in names
        out = s.run(y, {x: np.eye(2, dtype=np.float32)})
        assert isinstance(out, np.ndarray)
        np.testing.assert_allclose(out, np.eye(2))
        assert s.device_placement()["y"] == GPU0
        (plan,) = s._plans.values()
        assert plan.step_devices[-1].xp is cp
        assert [n.name for n in plan.copy_nodes] == ["x/_feed/_copy_0_to_GPU_0"]


@pytest.mark.gpu
def test_gpu_cpu_round_trip_through_copy_nodes():
    with tf.device("/cpu:0"):
        a = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3), name="a")
    with tf.device("/gpu:0"):
        b = tf.matmul(a, a, transpose_b=True, name="b")
    with tf.device("/cpu:0"):
        c = tf.add(b, 1.0, name="c")
    ref = np.arange(6, dtype=np.float32).reshape(2, 3)
    with tf.Session() as s:
        np.testing.assert_allclose(s.run(c), ref @ ref.T + 1.0)
        (plan,) = s._plans.values()
        assert len(plan.copy_nodes) == 2


@pytest.mark.gpu
def test_gpu_variables_train_and_int32_variable_error():
    with tf.device("/gpu:0"):
        v = tf.Variable(np.ones(4, np.float32), name="v")
        vi = tf.Variable(3, name="vi")
    upd = v.assign_sub(np.full(4, 0.5, np.float32))
    with tf.Session() as s:
        s.run(v.initializer)
        s.run(upd)
        np.testing.assert_allclose(s.run(v), 0.5)
        with pytest.raises(tf.errors.InvalidArgumentError, match="no supported kernel for GPU devices"):
            s.run(vi.initializer)


@pytest.mark.gpu
def test_gpu_memory_fraction_oom_is_resource_exhausted():
    import cupy as cp

    free, total = cp.cuda.runtime.memGetInfo()
    mem = DeviceMemory(GPU0, total, tf.GPUOptions(per_process_gpu_memory_fraction=0.01), pool=cp.cuda.MemoryPool())
    # cupy's pool rounds every request up to 512 bytes and reports the rounded size: ask for a multiple
    n = int(total * 0.02) // 512 * 128
    with pytest.raises(MemoryError) as raw:
        with cp.cuda.using_allocator(mem.pool.malloc):
            cp.empty(n, cp.float32)
    err = mem.translate(raw.value, type("Op", (), {"name": "big"})())
    assert isinstance(err, tf.errors.ResourceExhaustedError)
    assert f"OOM when allocating {n * 4} bytes for op 'big'" in str(err)


@pytest.mark.gpu
def test_pinned_transfers_round_trip():
    from tensorfleet.kernels import backend

    host = np.random.default_rng(0).standard_normal((512, 256)).astype(np.float32)
    dev = backend.host_to_device(host, 0)
    back = backend.to_host(dev * 2)
    np.testing.assert_allclose(back, host * 2, rtol=1e-6)


@pytest.mark.gpu
def test_back_to_back_pinned_uploads_do_not_overwrite_each_other():
    """ndarray.set from pinned memory is async: each staging buffer must not be reused before its copy ran."""
    import cupy as cp

    from tensorfleet.kernels import backend

    rng = np.random.default_rng(1)
    big = cp.ones((4096, 4096), cp.float32)
    for _ in range(3):
        big = big @ big * np.float32(1e-4)  # keep the stream busy so the copies queue behind it
    hosts = [rng.standard_normal((256, 300)).astype(np.float32) for _ in range(9)]
    devs = [backend.host_to_device(h, 0) for h in hosts]
    for h, d in zip(hosts, devs):
        np.testing.assert_array_equal(d.get(), h)


@pytest.mark.gpu
def test_scalar_feed_on_gpu():
    x = tf.placeholder(tf.float32, [], name="s")
    v = tf.placeholder(tf.float32, [3], name="v")
    y = tf.multiply(v, x, name="y")
    with tf.Session() as s:
        np.testing.assert_allclose(s.run(y, {x: np.float32(2.0), v: np.ones(3, np.float32)}), 2.0)
        np.testing.assert_allclose(s.run(y, {x: 3.0, v: np.ones(3, np.float32)}), 3.0)
        assert s.device_placement()["y"] == GPU0


@pytest.mark.gpu
def test_cuda_graph_replay_matches_normal_runs():
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((8, 4)).astype(np.float32)
    x = tf.placeholder(tf.float32, [16, 8], name="x")
    w = tf.Variable(w0, name="w")
    y = tf.matmul(x, w)
    loss = tf.reduce_sum(y * y)
    (gw,) = tf.gradients(loss, [w])
    step = tf.assign_sub(w, 0.001 * gw)
    batches = [rng.standard_normal((16, 8)).astype(np.float32) for _ in range(5)]

    def train(replay):
        cfg = tf.ConfigProto()
        cfg.experimental.cuda_graph_replay = replay
        with tf.Session(config=cfg) as s:
            s.run(w.initializer)
            losses = [s.run([loss, step], {x: b})[0] for b in batches]
            plan = s._plans[next(k for k in s._plans if step in k[0])]
            return losses, s.run(w), plan.replay

    ref_losses, ref_w, _ = train(False)
    losses, got_w, replay = train(True)
    assert replay is not None and replay.last_error is None and replay.replays == len(batches) - 1
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-5)
    np.testing.assert_allclose(got_w, ref_w, rtol=1e-5)
