"""`tf.gfile` on the local filesystem. Oracle: the os/shutil view of the same files, and TF 1.15's documented
error classes (NotFoundError, AlreadyExistsError, UnimplementedError for other file systems)."""
import os

import pytest

import tensorfleet as tf


def test_directories_exists_list_and_delete(tmp_path):
    d = str(tmp_path / "a" / "b" / "c")
    assert not tf.gfile.Exists(d)
    tf.gfile.MakeDirs(d)
    tf.gfile.MakeDirs(d)  # fine when it exists
    assert tf.gfile.Exists(d) and tf.gfile.IsDirectory(d) and os.path.isdir(d)
    with open(os.path.join(d, "f.txt"), "w") as f:
        f.write("x")
    assert not tf.gfile.IsDirectory(os.path.join(d, "f.txt"))
    assert sorted(tf.gfile.ListDirectory(str(tmp_path / "a" / "b"))) == ["c"]
    assert tf.gfile.ListDirectory(d) == ["f.txt"]
    with pytest.raises(tf.errors.AlreadyExistsError):
        tf.gfile.MkDir(d)
    with pytest.raises(tf.errors.NotFoundError):
        tf.gfile.MkDir(str(tmp_path / "no" / "parent"))
    with pytest.raises(tf.errors.NotFoundError):
        tf.gfile.ListDirectory(str(tmp_path / "missing"))
    walked = [(os.path.relpath(top, tmp_path), sorted(dirs), files)
              for top, dirs, files in tf.gfile.Walk(str(tmp_path))]
    assert walked == [(".", ["a"], []), ("a", ["b"], []), ("a/b", ["c"], []), ("a/b/c", [], ["f.txt"])]
    tf.gfile.DeleteRecursively(str(tmp_path / "a"))
    assert not os.path.exists(tmp_path / "a")
    with pytest.raises(tf.errors.NotFoundError):
        tf.gfile.DeleteRecursively(str(tmp_path / "a"))
    assert list(tf.gfile.Walk(str(tmp_path / "a"))) == []


def test_gfile_read_write_append_binary_and_iteration(tmp_path):
    p = str(tmp_path / "notes.txt")
    with tf.gfile.GFile(p, "w") as f:
        f.write("line 1\n")
        f.write(b"line 2\n")  # TF accepts bytes in text mode too
    with tf.gfile.Open(p, "a") as f:
        f.write("line 3\n")
    with open(p) as f:
        assert f.read() == "line 1\nline 2\nline 3\n"
    with tf.gfile.GFile(p) as f:
        assert list(f) == ["line 1\n", "line 2\n", "line 3\n"]
    with tf.gfile.GFile(p, "r") as f:
        assert f.read(4) == "line" and f.tell() == 4
        f.seek(5)
        assert f.readline() == "1\n" and f.readlines() == ["line 2\n", "line 3\n"] and f.size() == 21
    with tf.gfile.FastGFile(p, "rb") as f:
        assert f.read() == b"line 1\nline 2\nline 3\n"
    with tf.gfile.GFile(str(tmp_path / "b.bin"), "wb") as f:
        f.write(bytes(range(5)))
    assert (tmp_path / "b.bin").read_bytes() == bytes(range(5))
    assert tf.gfile.Stat(p).length == 21 and not tf.gfile.Stat(p).is_directory


def test_missing_file_raises_not_found_on_first_read(tmp_path):
    f = tf.gfile.GFile(str(tmp_path / "nope.txt"))  # lazy, as TF's
    with pytest.raises(tf.errors.NotFoundError, match="nope.txt"):
        f.read()
    with pytest.raises(tf.errors.NotFoundError):
        tf.gfile.Remove(str(tmp_path / "nope.txt"))


def test_glob_copy_rename_remove(tmp_path):
    for name in ("model.ckpt-1.index", "model.ckpt-2.index", "model.ckpt-2.data", "events.out"):
        (tmp_path / name).write_text(name)
    got = tf.gfile.Glob(str(tmp_path / "model.ckpt-*.index"))
    assert sorted(got) == [str(tmp_path / "model.ckpt-1.index"), str(tmp_path / "model.ckpt-2.index")]
    assert tf.gfile.Glob(str(tmp_path / "zzz*")) == []
    src, dst = str(tmp_path / "events.out"), str(tmp_path / "copy.out")
    tf.gfile.Copy(src, dst)
    assert (tmp_path / "copy.out").read_text() == "events.out"
    with pytest.raises(tf.errors.AlreadyExistsError):
        tf.gfile.Copy(src, dst)
    (tmp_path / "events.out").write_text("new")
    tf.gfile.Copy(src, dst, overwrite=True)
    assert (tmp_path / "copy.out").read_text() == "new"
    with pytest.raises(tf.errors.AlreadyExistsError):
        tf.gfile.Rename(dst, str(tmp_path / "model.ckpt-2.data"))
    tf.gfile.Rename(dst, str(tmp_path / "model.ckpt-2.data"), overwrite=True)
    assert not os.path.exists(dst) and (tmp_path / "model.ckpt-2.data").read_text() == "new"
    tf.gfile.Remove(src)
    assert not tf.gfile.Exists(src)
    with pytest.raises(tf.errors.NotFoundError):
        tf.gfile.Copy(src, dst)


def test_remote_file_systems_are_unimplemented_and_file_scheme_works(tmp_path):
    with pytest.raises(tf.errors.UnimplementedError, match="File system scheme 'gs' not implemented"):
        tf.gfile.Exists("gs://bucket/model")
    (tmp_path / "x").write_text("1")
    assert tf.gfile.Exists("file://" + str(tmp_path / "x"))
