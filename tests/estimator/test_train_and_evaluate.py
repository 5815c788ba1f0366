"""tf.estimator.train_and_evaluate: locally (evaluations after each checkpoint, summaries read back by
TensorBoard's loader), and as 1 chief + 1 ps + 2 workers + 1 evaluator real processes on 127.0.0.1 running
examples/estimator_mnist.py with the operator's TF_CONFIG shape: every process exits 0, the chief releases the
ps, the evaluator scores the final checkpoint and exits; plus TrainSpec/EvalSpec checks."""
import json
import os
import re

import numpy as np
import pytest

import tensorfleet as tf

import cluster_util as cu


def scalars(logdir):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    acc = EventAccumulator(logdir)
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


def digits():
    from tensorfleet.datasets import load_digits_arrays
    x, y = load_digits_arrays()
    return x.reshape(len(x), -1).astype(np.float32) / 16.0, y.astype(np.int64)


def test_local_train_and_evaluate(tmp_path, monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    x, y = digits()
    col = tf.feature_column.numeric_column("pixels", shape=(x.shape[1],))
    est = tf.estimator.DNNClassifier([32], [col], n_classes=10, model_dir=str(tmp_path),
                                     config=tf.estimator.RunConfig(save_checkpoints_steps=100))
    train = tf.estimator.TrainSpec(tf.estimator.inputs.numpy_input_fn({"pixels": x[:1500]}, y[:1500], batch_size=50,
                                                                      num_epochs=None, shuffle=True), max_steps=200)
    evaluate = tf.estimator.EvalSpec(lambda: tf.data.Dataset.from_tensor_slices(({"pixels": x[1500:]}, y[1500:]))
                                     .batch(100), steps=None, name="held_out", throttle_secs=0)
    metrics, exports = tf.estimator.train_and_evaluate(est, train, evaluate)
    assert exports == [] and metrics["global_step"] == 200 and metrics["accuracy"] > 0.85
    logged = scalars(str(tmp_path / "eval_held_out"))
    assert [s for s, _ in logged["accuracy"]] == [0, 100, 200]          # each checkpoint, then the last
    assert logged["accuracy"][-1][1] == pytest.approx(float(metrics["accuracy"]), rel=1e-6)
    assert logged["accuracy"][0][1] < 0.5 < logged["accuracy"][-1][1]


def test_spec_checks(monkeypatch):
    fn = lambda: None  # noqa: E731
    with pytest.raises(TypeError, match="`input_fn` must be callable"):
        tf.estimator.TrainSpec(1)
    with pytest.raises(ValueError, match="Must specify max_steps > 0, given: 0"):
        tf.estimator.TrainSpec(fn, max_steps=0)
    with pytest.raises(ValueError, match="Must specify throttle_secs >= 0, given: -1"):
        tf.estimator.EvalSpec(fn, throttle_secs=-1)
    spec = tf.estimator.EvalSpec(fn)
    assert (spec.steps, spec.start_delay_secs, spec.throttle_secs, spec.exporters) == (100, 120, 600, ())
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": {"chief": ["127.0.0.1:1"]},
                                                "task": {"type": "evaluator", "index": 1}}))
    est = tf.estimator.Estimator(lambda features, labels, mode: None, model_dir="/tmp/unused-est")
    with pytest.raises(ValueError, match="there can only be one `evaluator` task"):
        tf.estimator.train_and_evaluate(est, tf.estimator.TrainSpec(fn), spec)


def test_chief_ps_workers_evaluator_cluster(tmp_path):
    model_dir, logs = tmp_path / "model", tmp_path / "logs"
    logs.mkdir()
    cluster = cu.operator_cluster({"chief": 1, "ps": 1, "worker": 2, "evaluator": 1})
    argv = ["examples/estimator_mnist.py", "--model-dir", str(model_dir), "--data", "digits", "--steps", "300",
            "--save-checkpoints-steps", "100", "--throttle-secs", "1", "--max-worker-delay-secs", "1",
            "--hidden-units", "32"]
    procs = []
    try:
        for task_type, n in (("evaluator", 1), ("worker", 2), ("chief", 1), ("ps", 1)):
            procs += [cu.start(argv, cluster, task_type, i, str(logs)) for i in range(n)]
        finished = cu.wait_all(procs, 240)
        out = {os.path.basename(p.log_path)[:-4]: cu.read_log(p) for p in procs}
        assert finished, out
    finally:
        cu.kill_all(procs)
    assert [p.returncode for p in procs] == [0] * 5, out
    assert "released the ps tasks of the cluster" in out["chief-0"]
    assert "The chief released this ps task" in out["ps-0"]
    final = re.search(r"Exiting evaluation, global_step=(\d+) >= train max_steps=300", out["evaluator-0"])
    assert final, out["evaluator-0"]
    accuracy = float(re.search(r"final evaluation: global_step=\d+ accuracy=([0-9.]+)", out["evaluator-0"]).group(1))
    assert accuracy > 0.9
    assert "The evaluator has evaluated the final checkpoint" in out["chief-0"]
    logged = scalars(str(model_dir / "eval_test"))
    assert logged["accuracy"][-1] == (int(final.group(1)), pytest.approx(accuracy, abs=1e-4))
    assert "Waiting 1 secs before starting training." in out["worker-1"]     # min(1, (1 + 1) * 5)


SCRIPT = '''
import numpy as np, sys
import tensorfleet as tf
tf.logging.set_verbosity(tf.logging.INFO)

def model_fn(features, labels, mode):
    w = tf.get_variable("w", [2, 1], initializer=tf.zeros_initializer())
    loss = tf.losses.mean_squared_error(tf.reshape(labels, [-1, 1]), tf.matmul(features["x"], w))
    train_op = tf.train.GradientDescentOptimizer(0.05).minimize(loss, tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

def input_fn():
    x = np.random.RandomState(0).randn(256, 2).astype(np.float32)
    ds = tf.data.Dataset.from_tensor_slices(({"x": x}, x @ np.array([2.0, -1.0], np.float32))).repeat().batch(32)
    return tf.compat.v1.data.make_one_shot_iterator(ds).get_next()

config = tf.estimator.RunConfig(save_checkpoints_steps=50, experimental_max_worker_delay_secs=0)
est = tf.estimator.Estimator(model_fn, model_dir=sys.argv[1], config=config)
tf.estimator.train_and_evaluate(est, tf.estimator.TrainSpec(input_fn, max_steps=150),
                                tf.estimator.EvalSpec(input_fn, steps=2, throttle_secs=1, start_delay_secs=0))
if est.config.is_chief:
    print("w =", est.get_variable_value("w").ravel().tolist(), flush=True)
'''


@pytest.mark.parametrize("worker_late", [False, True])
def test_iterator_input_fn_across_a_ps_cluster(tmp_path, worker_late):
    """The TF1 idiom (an input_fn returning an iterator's get_next()) trains on a chief + ps + worker cluster:
    the iterator lives in each trainer's host-side input graph, never in a partition sent to the ps. The chief's end
    releases the ps, which serves until the worker has ended too; a worker that starts only after the chief has
    finished (and the ps is released) finds the final checkpoint, stops, and then the ps exits 0."""
    script = tmp_path / "linear.py"
    script.write_text(SCRIPT)
    cluster = cu.operator_cluster({"chief": 1, "ps": 1, "worker": 1})
    procs = []
    argv = [str(script), str(tmp_path / "model")]
    try:
        procs.append(cu.start(argv, cluster, "ps", 0, str(tmp_path)))
        if not worker_late:
            procs.append(cu.start(argv, cluster, "worker", 0, str(tmp_path)))
        procs.append(cu.start(argv, cluster, "chief", 0, str(tmp_path)))
        if worker_late:   # the chief trains alone, releases the cluster and exits; then the worker starts
            assert cu.wait_all(procs[-1:], 180), {os.path.basename(p.log_path): cu.read_log(p) for p in procs}
            assert "Loss for final step" in cu.read_log(procs[-1])
            assert procs[0].poll() is None   # the released ps waits for the worker, which has not ended yet
            procs.insert(1, cu.start(argv, cluster, "worker", 0, str(tmp_path)))
        finished = cu.wait_all(procs, 180)
        out = {os.path.basename(p.log_path)[:-4]: cu.read_log(p) for p in procs}
        assert finished, out
    finally:
        cu.kill_all(procs)
    assert [p.returncode for p in procs] == [0, 0, 0], out
    if worker_late:   # it finds the final checkpoint in model_dir (TF's check) and trains nothing
        assert "Skipping training since max_steps has already saved." in out["worker-0"]
    assert "released the ps tasks of the cluster" in out["chief-0"]
    w = json.loads(re.search(r"w = (\[.*\])", out["chief-0"]).group(1))
    np.testing.assert_allclose(w, [2.0, -1.0], atol=0.1)      # both trainers' steps moved the ps's w
