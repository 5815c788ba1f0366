"""TF1's first program and string handling: "Hello, TensorFlow!", joining, splitting, number formatting and
parsing CSV lines into typed columns, all as graph ops run in a Session.

    python examples/strings_basics.py

Strings come back from `sess.run` as `bytes` (numpy object arrays of bytes for tensors), as in TF.
"""
import argparse

import tensorfleet as tf

CSV_LINES = ["alice,31,1.70", "bob,,1.82", '"carol, jr",27,1.64']


def main(argv=None):
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    hello = tf.constant("Hello, TensorFlow!")

    words = tf.placeholder(tf.string, [None], name="words")
    greeting = tf.string_join(["Hello, ", words, "!"])
    tokens = tf.string_split(["the quick brown fox", "jumps over"])
    dense_tokens = tf.sparse_tensor_to_dense(tokens, default_value="")
    scores = tf.constant([3.14159, 2.5, 10.0])
    formatted = tf.string_join(["score=", tf.as_string(scores, precision=2)])

    lines = tf.placeholder(tf.string, [None], name="lines")
    name, age, height = tf.decode_csv(lines, record_defaults=[[""], [-1], [0.0]])
    mean_height = tf.reduce_mean(height)

    with tf.Session() as sess:
        out = sess.run({"hello": hello, "greeting": greeting, "tokens": dense_tokens, "formatted": formatted},
                       {words: ["Ada", "Grace"]})
        out.update(zip(["name", "age", "height", "mean_height"],
                       sess.run([name, age, height, mean_height], {lines: CSV_LINES}), strict=True))
    print(out["hello"].decode())
    for g in out["greeting"]:
        print(g.decode())
    print("tokens:", [[t.decode() for t in row] for row in out["tokens"]])
    print("formatted:", [f.decode() for f in out["formatted"]])
    for n, a, h in zip(out["name"], out["age"], out["height"], strict=True):
        print(f"{n.decode():>10} age {a:3d} height {h:.2f}")
    print(f"mean height {out['mean_height']:.3f}")
    return out


if __name__ == "__main__":
    main()
