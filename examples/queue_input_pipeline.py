"""A TF1 queue-based input pipeline, end to end: write synthetic tf.train.Examples to TFRecord files, read them
back with `tf.train.string_input_producer` + `tf.TFRecordReader` + `tf.train.shuffle_batch`, and train a linear
regression in a `tf.train.MonitoredTrainingSession` until `num_epochs` runs out (OutOfRangeError ends it).

    python examples/queue_input_pipeline.py --epochs 20

Only the import differs from the TF 1.x program (the CIFAR-10 tutorial's input shape).
"""
import argparse
import os
import tempfile

import numpy as np

import tensorfleet as tf

DIM = 4
TRUE_W = np.array([1.5, -2.0, 0.5, 3.0], np.float32)
TRUE_B = 0.25


def write_data(directory, num_files=4, per_file=50, seed=0):
    """TFRecord files of Examples {"x": DIM floats, "y": x.w + b + noise}; returns the file names."""
    rng = np.random.default_rng(seed)
    files = []
    for j in range(num_files):
        path = os.path.join(directory, f"train-{j:02d}.tfrecord")
        with tf.python_io.TFRecordWriter(path) as writer:
            for _ in range(per_file):
                x = rng.normal(size=DIM).astype(np.float32)
                y = float(x @ TRUE_W + TRUE_B + rng.normal(scale=0.01))
                ex = tf.train.Example(features=tf.train.Features(feature={
                    "x": tf.train.Feature(float_list=tf.train.FloatList(value=x.tolist())),
                    "y": tf.train.Feature(float_list=tf.train.FloatList(value=[y]))}))
                writer.write(ex.SerializeToString())
        files.append(path)
    return files


def input_pipeline(filenames, batch_size, num_epochs):
    """string_input_producer -> TFRecordReader -> parse_single_example -> shuffle_batch."""
    filename_queue = tf.train.string_input_producer(filenames, num_epochs=num_epochs, shuffle=True)
    _, serialized = tf.TFRecordReader().read(filename_queue)
    features = tf.parse_single_example(serialized, {"x": tf.FixedLenFeature([DIM], tf.float32),
                                                    "y": tf.FixedLenFeature([], tf.float32)})
    return tf.train.shuffle_batch([features["x"], features["y"]], batch_size=batch_size, capacity=200,
                                  min_after_dequeue=50, num_threads=2, allow_smaller_final_batch=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch_size", type=int, default=16)
    parser.add_argument("--data_dir", default=None, help="where to write the TFRecords (default: a temp dir)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        files = write_data(args.data_dir or tmp)
        with tf.Graph().as_default():
            x, y = input_pipeline(files, args.batch_size, args.epochs)
            w = tf.Variable(tf.zeros([DIM, 1]), name="w")
            b = tf.Variable(0.0, name="b")
            pred = tf.squeeze(tf.matmul(x, w), 1) + b
            loss = tf.reduce_mean(tf.square(pred - y))
            global_step = tf.train.get_or_create_global_step()
            train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)
            batch_len = tf.shape(y)[0]  # the last batch may be smaller (allow_smaller_final_batch)
            final = tf.train.FinalOpsHook({"w": w, "b": b})  # read once the input has run out
            steps = examples = 0
            with tf.train.MonitoredTrainingSession(hooks=[final]) as sess:
                while not sess.should_stop():
                    _, batch_loss, n = sess.run([train_op, loss, batch_len])
                    steps, examples = steps + 1, examples + int(n)
                    if steps % 100 == 0:
                        print(f"step {steps}: loss {batch_loss:.5f}")
            learned = final.final_ops_values
    print(f"{steps} steps, {examples} examples; final batch loss {batch_loss:.5f}")
    print("learned w", np.round(learned["w"].ravel(), 3), "b", round(float(learned["b"]), 3), "(true", TRUE_W, TRUE_B,
          ")")
    return {"steps": steps, "examples": examples, "loss": float(batch_loss), "w": learned["w"].ravel(),
            "b": float(learned["b"])}


if __name__ == "__main__":
    main()
