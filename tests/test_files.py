"""vdsim_gym._files: the one reader of user files and the one atomic writer."""

from __future__ import annotations

import os
import stat

import numpy as np
import pytest

from vdsim_gym._files import (
    atomic_open,
    atomic_path,
    clean_stale_temps,
    open_user_file,
    read_user_text,
    write_atomic,
)
from vdsim_gym.errors import ConfigError


def test_an_interrupted_write_leaves_the_previous_file_and_no_temp(tmp_path):
    out = tmp_path / "result.csv"
    write_atomic(out, "old\n")
    with pytest.raises(KeyboardInterrupt):
        with atomic_open(out) as fh:
            fh.write("half of the new")
            raise KeyboardInterrupt
    assert out.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result.csv"]


def test_a_writer_that_appends_its_suffix_finds_the_temp_path(tmp_path):
    """np.savez appends .npz to a path without it: the temp keeps the target's suffix."""
    out = tmp_path / "evaluations.npz"
    with atomic_path(out) as tmp:
        assert tmp.suffix == ".npz" and tmp.name.startswith(".evaluations.")
        np.savez(tmp, x=np.arange(3))
    assert np.load(out)["x"].tolist() == [0, 1, 2]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["evaluations.npz"]


def test_a_published_file_has_the_permissions_of_a_plain_one(tmp_path):
    mask = os.umask(0o022)
    try:
        out = write_atomic(tmp_path / "a.txt", "x")
    finally:
        os.umask(mask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o644  # mkstemp alone: 0600


def test_a_fifo_is_neither_read_nor_replaced(tmp_path):
    fifo = tmp_path / "f.yaml"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match="must be a regular file"):
        open_user_file(fifo, "the conf")
    with pytest.raises(ConfigError, match="not a regular file"):
        write_atomic(fifo, "x")
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_a_binary_or_oversized_input_is_named(tmp_path):
    (tmp_path / "b.csv").write_bytes(b"t,v\n\x00\x01")
    with pytest.raises(ConfigError, match=r"b.csv: the cycle file is not text \(it holds NUL"):
        read_user_text(tmp_path / "b.csv", "the cycle file")
    (tmp_path / "big.csv").write_text("1\n" * 1000)
    with pytest.raises(ConfigError, match="more than the bound"):
        read_user_text(tmp_path / "big.csv", "the log", max_bytes=100)
    with pytest.raises(ConfigError, match="is a directory"):
        read_user_text(tmp_path, "the log")


def test_stale_temps_of_one_target_only_are_cleaned(tmp_path):
    names = [".run.a1.tmp.gif", ".run.gif.b2.tmp", ".run.c3.tmp.vdtrace", ".other.d4.tmp.gif",
             "run.gif", ".hidden"]
    for n in names:
        (tmp_path / n).write_text("x")
    removed = sorted(p.name for p in clean_stale_temps(tmp_path, "run.gif"))
    assert removed == [".run.a1.tmp.gif", ".run.gif.b2.tmp"]
    assert sorted(p.name for p in clean_stale_temps(tmp_path)) == [".other.d4.tmp.gif",
                                                                   ".run.c3.tmp.vdtrace"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".hidden", "run.gif"]


def test_a_figure_interrupted_while_saved_leaves_the_previous_image(tmp_path, monkeypatch):
    """Every plot of the package is saved through _plotting.save_figure (atomic): a signal
    in the middle of savefig left a truncated PNG."""
    pytest.importorskip("matplotlib")
    from vdsim_gym._plotting import figure, save_figure

    fig = figure(figsize=(2, 2))
    fig.add_subplot().plot([0, 1], [1, 0])
    out = save_figure(fig, tmp_path / "plot.png", dpi=40)
    before = out.read_bytes()
    assert before.startswith(b"\x89PNG")

    def interrupted(path, **kw):
        with open(path, "wb") as fh:
            fh.write(b"\x89PNG half")
        raise KeyboardInterrupt

    monkeypatch.setattr(fig, "savefig", interrupted)
    with pytest.raises(KeyboardInterrupt):
        save_figure(fig, out)
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plot.png"]
