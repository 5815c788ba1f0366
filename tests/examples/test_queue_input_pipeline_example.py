"""examples/queue_input_pipeline.py runs end to end: every written example is read num_epochs times, the final
batch is the remainder, and the linear model recovers the weights the data was generated from."""
import importlib.util
import math
import os
import threading

import numpy as np

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "queue_input_pipeline.py")


def test_queue_input_pipeline_example_trains_until_num_epochs_end(tmp_path):
    spec = importlib.util.spec_from_file_location("queue_input_pipeline", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = mod.main(["--epochs", "4", "--batch_size", "16", "--data_dir", str(tmp_path)])
    written = 4 * 50  # write_data's defaults
    assert len(list(tmp_path.glob("train-*.tfrecord"))) == 4
    assert out["examples"] == written * 4
    assert out["steps"] == math.ceil(written * 4 / 16)
    np.testing.assert_allclose(out["w"], mod.TRUE_W, atol=0.05)
    assert abs(out["b"] - mod.TRUE_B) < 0.05
    left = [t for t in threading.enumerate() if t.name.startswith("QueueRunnerThread")]
    for t in left:
        t.join(30)
    assert not any(t.is_alive() for t in left)
