"""tf.train.Saver: round trips, kept checkpoints, the state file, corruption, all-or-nothing restore, atomicity."""
import os

import numpy as np
import pytest
from tf_bundle_oracle import read_bundle

import tensorfleet as tf
from tensorfleet.train import saver as saver_mod

VALUES = {
    "w": np.arange(6, dtype=np.float32).reshape(3, 2) / 7,
    "d": np.array([1e-300, -2.5, np.pi]),
    "i": np.array([[1, -2], [3, 2 ** 31 - 1]], np.int32),
    "flag": np.array([True, False, True]),
    "u": np.array([0, 255], np.uint8),
}


def _build(values=VALUES):
    vs = {k: tf.Variable(v, name=k) for k, v in values.items()}
    vs["global_step"] = tf.train.get_or_create_global_step()
    return vs


def _assign_all(sess, vs, fn):
    for v in vs.values():
        cur = sess.run(v)
        sess.run(tf.assign(v, fn(cur)))


def _read_all(sess, vs):
    return {k: sess.run(v) for k, v in vs.items()}


def test_round_trip_several_dtypes_same_and_fresh_session(tmp_path):
    vs = _build()
    inc = tf.assign_add(vs["global_step"], 41)
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(inc)
        prefix = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=vs["global_step"])
        assert prefix == str(tmp_path / "model.ckpt-41")
        saved = _read_all(sess, vs)
        _assign_all(sess, vs, lambda a: np.zeros_like(a))
        saver.restore(sess, prefix)
        got = _read_all(sess, vs)
    with tf.Session() as sess2:  # a new session: restore alone initializes the variables
        saver.restore(sess2, prefix)
        got2 = _read_all(sess2, vs)
    for k in saved:
        for g in (got, got2):
            assert g[k].dtype == saved[k].dtype
            np.testing.assert_array_equal(g[k], saved[k])
    assert got["global_step"] == 41 and got["global_step"].dtype == np.int64
    np.testing.assert_array_equal(got["d"], VALUES["d"])


def test_restore_into_fresh_graph(tmp_path):
    _build()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        prefix = tf.train.Saver().save(sess, str(tmp_path / "m"), global_step=7)
    assert prefix.endswith("m-7")
    g = tf.Graph()
    with g.as_default():
        vs2 = {k: tf.Variable(np.zeros_like(v), name=k) for k, v in VALUES.items()}
        saver = tf.train.Saver(list(vs2.values()))
        with tf.Session(graph=g) as sess:
            saver.restore(sess, tf.train.latest_checkpoint(str(tmp_path)))
            for k, v in vs2.items():
                np.testing.assert_array_equal(sess.run(v), VALUES[k])


def test_files_are_tf_bundle_index_and_data_read_by_an_independent_reader(tmp_path):
    w = tf.Variable(VALUES["w"], name="w")
    s = tf.Variable([b"ab", b"", "h\u00e9".encode()], name="s")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        prefix = tf.train.Saver([w, s]).save(sess, str(tmp_path / "c"))
    files = sorted(os.listdir(tmp_path))
    assert files == ["c.data-00000-of-00001", "c.index", "c.meta", "checkpoint"]  # .meta: write_meta_graph=True
    header, values = read_bundle(prefix)
    assert header == {"num_shards": 1, "version": {1: [1]}}  # TF's header: one shard, producer version 1
    assert sorted(values) == ["s", "w"]
    assert values["w"].dtype == np.float32
    np.testing.assert_array_equal(values["w"], VALUES["w"])
    assert values["s"].tolist() == [b"ab", b"", "h\u00e9".encode()]
    raw = (tmp_path / "c.data-00000-of-00001").read_bytes()  # s first (sorted names), then w's raw floats
    assert raw[-24:] == VALUES["w"].astype("<f4").tobytes()
    assert prefix == str(tmp_path / "c")


def test_max_to_keep_deletes_old_checkpoints_and_state_file(tmp_path):
    w = tf.Variable(1.0, name="w")
    saver = tf.train.Saver(max_to_keep=2)
    base = str(tmp_path / "model.ckpt")
    with tf.Session() as sess:
        sess.run(w.initializer)
        for step in range(1, 5):
            saver.save(sess, base, global_step=step)
    assert saver.last_checkpoints == [base + "-3", base + "-4"]
    assert not tf.train.checkpoint_exists(base + "-1") and not tf.train.checkpoint_exists(base + "-2")
    assert not os.path.exists(base + "-2.data-00000-of-00001")
    assert tf.train.checkpoint_exists(base + "-3") and tf.train.checkpoint_exists(base + "-4")
    text = (tmp_path / "checkpoint").read_text()
    assert text == (f'model_checkpoint_path: "{base}-4"\n'
                    f'all_model_checkpoint_paths: "{base}-3"\n'
                    f'all_model_checkpoint_paths: "{base}-4"\n')
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert state.model_checkpoint_path == base + "-4"
    assert state.all_model_checkpoint_paths == [base + "-3", base + "-4"]
    assert tf.train.latest_checkpoint(str(tmp_path)) == base + "-4"


def test_max_to_keep_none_keeps_everything(tmp_path):
    w = tf.Variable(1.0, name="w")
    saver = tf.train.Saver(max_to_keep=None)
    with tf.Session() as sess:
        sess.run(w.initializer)
        for step in range(3):
            saver.save(sess, str(tmp_path / "k"), global_step=step)
    assert all(tf.train.checkpoint_exists(str(tmp_path / f"k-{s}")) for s in range(3))
    assert tf.train.get_checkpoint_state(str(tmp_path)).all_model_checkpoint_paths == [str(tmp_path / "k-2")]


def test_relative_save_dir_paths_like_tf(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.mkdir("ckpts")
    w = tf.Variable(1.0, name="w")
    with tf.Session() as sess:
        sess.run(w.initializer)
        prefix = tf.train.Saver().save(sess, "ckpts/model", global_step=3)
    assert prefix == "ckpts/model-3"
    assert (tmp_path / "ckpts" / "checkpoint").read_text().startswith('model_checkpoint_path: "model-3"\n')
    assert tf.train.latest_checkpoint("ckpts") == os.path.join("ckpts", "model-3")


def test_latest_checkpoint_none_cases(tmp_path):
    assert tf.train.latest_checkpoint(str(tmp_path)) is None
    assert tf.train.get_checkpoint_state(str(tmp_path)) is None
    (tmp_path / "checkpoint").write_text('model_checkpoint_path: "gone"\n')
    assert tf.train.latest_checkpoint(str(tmp_path)) is None  # recorded but its files are missing
    assert tf.train.get_checkpoint_state(str(tmp_path)).model_checkpoint_path == str(tmp_path / "gone")


def test_var_list_dict_with_renamed_keys(tmp_path):
    a = tf.Variable(np.array([1.0, 2.0], np.float32), name="a")
    with tf.Session() as sess:
        sess.run(a.initializer)
        prefix = tf.train.Saver({"layer/kernel": a}).save(sess, str(tmp_path / "r"))
    g = tf.Graph()
    with g.as_default():
        b = tf.Variable(np.zeros(2, np.float32), name="b")
        saver = tf.train.Saver({"layer/kernel": b})
        with tf.Session(graph=g) as sess:
            saver.restore(sess, prefix)
            np.testing.assert_array_equal(sess.run(b), [1.0, 2.0])
        with pytest.raises(tf.errors.NotFoundError, match="Key b not found in checkpoint"):
            with tf.Session(graph=g) as sess:
                tf.train.Saver([b]).restore(sess, prefix)


def _saved_pair(tmp_path):
    """Two variables saved as checkpoint `p`; returns (vars, saver, prefix)."""
    a = tf.Variable(np.arange(100, dtype=np.float32), name="a")
    b = tf.Variable(np.arange(50, dtype=np.int64), name="b")
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        prefix = saver.save(sess, str(tmp_path / "p"))
    return (a, b), saver, prefix


def _expect_untouched(saver, vars_, prefix, exc, match):
    a, b = vars_
    with tf.Session() as sess:
        sess.run([tf.assign(a, np.full(100, -1.0, np.float32)), tf.assign(b, np.full(50, -1, np.int64))])
        with pytest.raises(exc, match=match):
            saver.restore(sess, prefix)
        np.testing.assert_array_equal(sess.run(a), np.full(100, -1.0))
        np.testing.assert_array_equal(sess.run(b), np.full(50, -1))


def test_truncated_data_file(tmp_path):
    vars_, saver, prefix = _saved_pair(tmp_path)
    data = prefix + ".data-00000-of-00001"
    raw = open(data, "rb").read()
    open(data, "wb").write(raw[:-10])
    _expect_untouched(saver, vars_, prefix, tf.errors.DataLossError, r"p\.data-00000-of-00001 is truncated")


def test_flipped_byte_is_a_checksum_mismatch(tmp_path):
    vars_, saver, prefix = _saved_pair(tmp_path)
    data = prefix + ".data-00000-of-00001"
    raw = bytearray(open(data, "rb").read())
    raw[len(raw) - 3] ^= 0x40  # inside the last tensor (b): a is assigned first, and must stay untouched too
    open(data, "wb").write(bytes(raw))
    _expect_untouched(saver, vars_, prefix, tf.errors.DataLossError, r"p\.data.*checksum mismatch for tensor 'b'")



def test_garbage_index(tmp_path):
    vars_, saver, prefix = _saved_pair(tmp_path)
    open(prefix + ".index", "wb").write(b"\x00\x01garbage{{{")
    _expect_untouched(saver, vars_, prefix, tf.errors.DataLossError, r"p\.index is not a checkpoint index")


def test_edited_index_fails_its_block_checksum(tmp_path):
    vars_, saver, prefix = _saved_pair(tmp_path)
    raw = bytearray(open(prefix + ".index", "rb").read())
    raw[12] ^= 0x01  # inside the data block (the header's or a's entry)
    open(prefix + ".index", "wb").write(bytes(raw))
    _expect_untouched(saver, vars_, prefix, tf.errors.DataLossError, r"p\.index is corrupt: .*fails its checksum")


@pytest.mark.parametrize("content", [b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00", b"", b'{"format": "x"}'])
def test_foreign_or_empty_index(tmp_path, content):
    vars_, saver, prefix = _saved_pair(tmp_path)
    open(prefix + ".index", "wb").write(content)
    _expect_untouched(saver, vars_, prefix, tf.errors.DataLossError, r"p\.index")


def test_missing_checkpoint_and_data_file(tmp_path):
    vars_, saver, prefix = _saved_pair(tmp_path)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.NotFoundError, match="not a valid checkpoint"):
            saver.restore(sess, str(tmp_path / "nope"))
        with pytest.raises(ValueError):  # TF 1.15 raises ValueError here: both work
            saver.restore(sess, str(tmp_path / "nope"))
        with pytest.raises(ValueError, match="Can't load save_path when it is None."):
            saver.restore(sess, None)
    os.remove(prefix + ".data-00000-of-00001")
    _expect_untouched(saver, vars_, prefix, tf.errors.NotFoundError, r"p\.data-00000-of-00001 not found")


def test_missing_key_leaves_everything_untouched(tmp_path):
    vars_, saver, prefix = _saved_pair(tmp_path)
    c = tf.Variable(np.zeros(3, np.float32), name="c")
    saver2 = tf.train.Saver()
    a, b = vars_
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(tf.errors.NotFoundError, match="Key c not found in checkpoint"):
            saver2.restore(sess, prefix)
        np.testing.assert_array_equal(sess.run(a), np.arange(100))  # initial values: not from the checkpoint
        assert c is not None


def test_shape_and_dtype_mismatch(tmp_path):
    vars_, saver, prefix = _saved_pair(tmp_path)
    g = tf.Graph()
    with g.as_default():
        a = tf.Variable(np.zeros(99, np.float32), name="a")
        b = tf.Variable(np.zeros(50, np.int64), name="b")
        with tf.Session(graph=g) as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"lhs shape= \[99\] rhs shape= \[100\] "
                                                                     r"\(variable a"):
                tf.train.Saver([a, b]).restore(sess, prefix)
    g2 = tf.Graph()
    with g2.as_default():
        a = tf.Variable(np.zeros(100, np.float64), name="a")
        with tf.Session(graph=g2) as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="tensor_name = a; expected dtype float64"):
                tf.train.Saver([a]).restore(sess, prefix)


def test_crash_before_index_rename_keeps_previous_checkpoint(tmp_path, monkeypatch):
    w = tf.Variable(np.array([1.0, 2.0], np.float32), name="w")
    saver = tf.train.Saver()
    base = str(tmp_path / "model.ckpt")
    real_replace = os.replace

    def crashing_replace(src, dst):
        if str(dst).endswith(".index"):
            raise OSError("simulated crash before the index rename")
        return real_replace(src, dst)

    with tf.Session() as sess:
        sess.run(w.initializer)
        first = saver.save(sess, base, global_step=1)
        sess.run(tf.assign(w, [5.0, 6.0]))
        monkeypatch.setattr(saver_mod.os, "replace", crashing_replace)
        with pytest.raises(tf.errors.UnknownError, match="model.ckpt-2: simulated crash"):
            saver.save(sess, base, global_step=2)
        monkeypatch.setattr(saver_mod.os, "replace", real_replace)
        assert tf.train.latest_checkpoint(str(tmp_path)) == first
        assert not tf.train.checkpoint_exists(base + "-2")
        assert sorted(os.listdir(tmp_path)) == ["checkpoint", "model.ckpt-1.data-00000-of-00001",
                                                "model.ckpt-1.index", "model.ckpt-1.meta"]  # no temporaries
        saver.restore(sess, tf.train.latest_checkpoint(str(tmp_path)))
        np.testing.assert_array_equal(sess.run(w), [1.0, 2.0])


def test_crash_while_writing_state_file_keeps_old_state(tmp_path, monkeypatch):
    w = tf.Variable(1.0, name="w")
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(w.initializer)
        first = saver.save(sess, str(tmp_path / "s"), global_step=1)
        real_replace = os.replace

        def crash_on_state(src, dst):
            if os.path.basename(dst) == "checkpoint":
                raise OSError("crash")
            return real_replace(src, dst)

        monkeypatch.setattr(saver_mod.os, "replace", crash_on_state)
        with pytest.raises(tf.errors.UnknownError, match="Failed to save checkpoint .*s-2: crash"):
            saver.save(sess, str(tmp_path / "s"), global_step=2)
    assert tf.train.latest_checkpoint(str(tmp_path)) == first
    assert not [f for f in os.listdir(tmp_path) if "tempstate" in f]


def test_saver_errors(tmp_path):
    with pytest.raises(ValueError, match="No variables to save"):
        tf.train.Saver()
    w = tf.Variable(1.0, name="w")
    saver = tf.train.Saver([w])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value w"):
            saver.save(sess, str(tmp_path / "x"))
        sess.run(w.initializer)
        # TF's bundle writer creates the prefix's own directory (one level) for an unsharded save ...
        assert saver.save(sess, str(tmp_path / "missing" / "x")) == str(tmp_path / "missing" / "x")
        assert tf.train.latest_checkpoint(str(tmp_path / "missing")) == str(tmp_path / "missing" / "x")
        # ... not two levels, and a sharded save writes into a directory that must exist (TF 2.15 checked)
        with pytest.raises(ValueError, match="Parent directory of .* doesn't exist, can't save."):
            saver.save(sess, str(tmp_path / "a" / "b" / "x"))
        with pytest.raises(ValueError, match="Parent directory of .* doesn't exist, can't save."):
            tf.train.Saver([w], sharded=True).save(sess, str(tmp_path / "shard" / "x"))
        assert not (tmp_path / "a").exists() and not (tmp_path / "shard").exists()
    with pytest.raises(TypeError, match="Variable to save is not a Variable"):
        tf.train.Saver([tf.constant(1.0)])


def test_resuming_adam_training_from_checkpoint_is_exact(tmp_path):
    x = tf.constant(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))
    w = tf.Variable(np.ones((3, 1), np.float32), name="w")
    loss = tf.reduce_sum(tf.matmul(x, w) * tf.matmul(x, w))
    gs = tf.train.get_or_create_global_step()
    train = tf.train.AdamOptimizer(0.05).minimize(loss, global_step=gs)
    saver = tf.train.Saver()  # all global variables: w, global_step, beta powers, slots
    assert {"w/Adam", "w/Adam_1", "beta1_power", "beta2_power", "global_step"} <= set(saver._vars)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run(train)
        prefix = saver.save(sess, str(tmp_path / "adam"), global_step=gs)
        for _ in range(2):
            sess.run(train)
        want = sess.run(w)
    with tf.Session() as sess:
        saver.restore(sess, prefix)
        assert tf.train.global_step(sess, gs) == 3
        for _ in range(2):
            sess.run(train)
        np.testing.assert_array_equal(sess.run(w), want)


def test_relative_paths_with_a_relative_save_path_as_tf(tmp_path, monkeypatch):
    """`Saver(save_relative_paths=True).save(sess, "sub/model.ckpt")` from the working directory: TF's state
    file names `model.ckpt-1` (made relative to `sub`), and latest_checkpoint("sub") finds `sub/model.ckpt-1`."""
    monkeypatch.chdir(tmp_path)
    w = tf.Variable(1.0, name="w")
    saver = tf.train.Saver([w], save_relative_paths=True)
    with tf.Session() as sess:
        sess.run(w.initializer)
        saver.save(sess, "sub/model.ckpt", global_step=1)
    state = (tmp_path / "sub" / "checkpoint").read_text()
    assert state == 'model_checkpoint_path: "model.ckpt-1"\nall_model_checkpoint_paths: "model.ckpt-1"\n'
    assert tf.train.latest_checkpoint("sub") == os.path.join("sub", "model.ckpt-1")
