"""`%dataflow_board`'s display on one log directory or several (``name:path,name:path``)."""

import os

from nbflow.notebook.board import BOARD_MIME, board_display, logdir_spec_entries
from tests.board.training_logs import LOSS_TAG, write_run


def test_a_spec_names_several_directories_and_a_drive_is_a_path():
    assert logdir_spec_entries("logs") == [("", "logs")]
    assert logdir_spec_entries("a:logs/x, b:logs/y") == [("a", "logs/x"), ("b", "logs/y")]
    assert logdir_spec_entries("C:\\logs") == [("", "C:\\logs")]
    assert logdir_spec_entries("a:/srv/logs") == [("a", "/srv/logs")]
    assert logdir_spec_entries("") == [("", ".")]


def test_several_directories_show_inline_with_their_names(tmp_path, monkeypatch):
    for run in ("x/train", "y/train"):
        (tmp_path / run).mkdir(parents=True)
        write_run(tmp_path / run, steps=2)
    monkeypatch.chdir(tmp_path)
    bundle = board_display("a:x,b:y")._repr_mimebundle_()
    assert bundle[BOARD_MIME]["logdir"] == f"a:{tmp_path / 'x'},b:{tmp_path / 'y'}"
    inline = bundle["text/html"]
    assert "<td>a/train</td>" in inline and "<td>b/train</td>" in inline
    assert inline.count(LOSS_TAG) == 2
    single = board_display("x")._repr_mimebundle_()
    assert single[BOARD_MIME]["logdir"] == os.path.join(str(tmp_path), "x")
    assert "<td>train</td>" in single["text/html"]
