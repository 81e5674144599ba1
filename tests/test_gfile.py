import pytest

import nbflow as tf


def test_gfile_writes_reads_lists_and_removes(tmp_path):
    d = str(tmp_path / "a" / "b")
    tf.gfile.MakeDirs(d)
    path = f"{d}/x.txt"
    with tf.gfile.GFile(path, "w") as f:
        f.write("hello\nworld\n")
    with tf.gfile.GFile(path) as f:
        assert f.readlines() == ["hello\n", "world\n"]
    assert tf.gfile.Exists(path) and tf.gfile.IsDirectory(d)
    assert tf.gfile.ListDirectory(d) == ["x.txt"]
    assert tf.gfile.Glob(f"{d}/*.txt") == [path]
    assert tf.gfile.Stat(path).length == 12
    tf.gfile.Copy(path, f"{d}/y.txt")
    with pytest.raises(tf.errors.AlreadyExistsError):
        tf.gfile.Copy(path, f"{d}/y.txt")
    tf.gfile.Remove(path)
    assert not tf.gfile.Exists(path)
    tf.gfile.DeleteRecursively(str(tmp_path / "a"))
    with pytest.raises(tf.errors.NotFoundError):
        tf.gfile.GFile(path)
