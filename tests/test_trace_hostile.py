"""The trace reader against hostile files (issue: no hostile file loses data or hangs):
each a TraceError naming the file and the field, in bounded time and memory: bad
shapes, a channel table of the wrong type, a manifest nested 10^5 deep, an encrypted
member, a deflate bomb (refused before inflating), a FIFO as the path (refused, not
read), a lying n_rows, NaN or 2-D t, a time that goes back or repeats (the row named),
duplicate members."""

from __future__ import annotations

import json
import os
import warnings
import zipfile

import numpy as np
import pytest

from vdsim_gym.traces.trace import MAX_MEMBER_BYTES, TraceError, read_trace

T = np.arange(5, dtype="<f8") * 0.01


def _manifest(**over):
    m = {"schema_version": "0.5", "producer": "test", "role": "run", "repro": {},
         "channels": {"t": {"shape": [], "unit": "s"}, "x": {"shape": [2], "unit": "m"}},
         "n_rows": 5}
    m.update(over)
    return m


def _write(path, manifest, members=None, compress=zipfile.ZIP_STORED):
    members = {"channels/t.f64": T.tobytes(),
               "channels/x.f64": np.zeros((5, 2), "<f8").tobytes()} if members is None \
        else members
    with zipfile.ZipFile(path, "w", compress) as z:
        z.writestr("manifest.json", manifest if isinstance(manifest, str)
                   else json.dumps(manifest))
        for name, data in members.items():
            z.writestr(name, data)
    return path


def test_the_well_formed_file_reads(tmp_path):
    tr = read_trace(_write(tmp_path / "ok.vdtrace", _manifest()))
    assert tr["x"].shape == (5, 2)


@pytest.mark.parametrize("over, match", [
    ({"channels": {"t": {"shape": [], "unit": "s"}, "x": {"shape": [0]}}}, "dimension < 1"),
    ({"channels": {"t": {"shape": [], "unit": "s"}, "x": {"shape": [-1]}}}, "dimension < 1"),
    ({"channels": {"t": {"shape": [], "unit": "s"}, "x": {"shape": "ab"}}},
     r"'shape' must be a list of whole numbers"),
    ({"channels": {"t": {"shape": [], "unit": "s"}, "x": {"shape": [2**40, 2**40]}}},
     "wider than the reader's bound"),
    ({"channels": ["t", "x"]}, r"'channels' must be an object"),
    ({"channels": {"t": None}}, r"channel 't' must be an object"),
    ({"n_rows": 7}, r"n_rows = 7, channel 't' has 5 rows"),
])
def test_bad_manifests(tmp_path, over, match):
    path = _write(tmp_path / "bad.vdtrace", _manifest(**over))
    with pytest.raises(TraceError, match=match) as info:
        read_trace(path)
    assert str(path) in str(info.value)


def test_deep_nesting_nan_and_2d_time(tmp_path):
    deep = '{"a": ' * 100_000 + "1" + "}" * 100_000
    with pytest.raises(TraceError, match="nested too deeply|not JSON"):
        read_trace(_write(tmp_path / "deep.vdtrace", deep))
    nan_t = T.copy()
    nan_t[2] = np.nan
    with pytest.raises(TraceError, match=r"channel 't' holds a non-finite time \(row 2\)"):
        read_trace(_write(tmp_path / "nan.vdtrace", _manifest(), {
            "channels/t.f64": nan_t.tobytes(),
            "channels/x.f64": np.zeros((5, 2), "<f8").tobytes()}))
    m = _manifest(n_rows=None)
    m["channels"]["t"] = {"shape": [2], "unit": "s"}
    with pytest.raises(TraceError, match="channel 't' must be 1-D"):
        read_trace(_write(tmp_path / "t2d.vdtrace", m, {
            "channels/t.f64": np.zeros((5, 2), "<f8").tobytes(),
            "channels/x.f64": np.zeros((5, 2), "<f8").tobytes()}))


def test_duplicate_and_encrypted_members(tmp_path):
    path = tmp_path / "dup.vdtrace"
    _write(path, _manifest())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about the duplicate name
        with zipfile.ZipFile(path, "a") as z:
            z.writestr("channels/t.f64", T.tobytes())
    with pytest.raises(TraceError, match=r"'channels/t.f64' appears twice"):
        read_trace(path)
    enc = _write(tmp_path / "enc.vdtrace", _manifest())
    raw = bytearray(enc.read_bytes())
    # set the encryption flag of every member (local headers and the central directory)
    for sig, off in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        i = raw.find(sig)
        while i >= 0:
            raw[i + off] |= 0x1
            i = raw.find(sig, i + 4)
    enc.write_bytes(bytes(raw))
    with pytest.raises(TraceError, match="is encrypted"):
        read_trace(enc)


def test_a_deflate_bomb_is_refused_before_it_is_inflated(tmp_path):
    path = tmp_path / "bomb.vdtrace"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("manifest.json", json.dumps(_manifest(n_rows=None)))
        z.writestr("channels/x.f64", np.zeros((5, 2), "<f8").tobytes())
        with z.open("channels/t.f64", "w", force_zip64=True) as fh:  # 1 GiB + 8 of zeros
            block = bytes(1 << 24)
            for _ in range(MAX_MEMBER_BYTES // len(block)):
                fh.write(block)
            fh.write(bytes(8))
    assert path.stat().st_size < 8 << 20  # the file is small; inflated it would not be
    with pytest.raises(TraceError, match="more than the reader's bound"):
        read_trace(path)


def test_a_fifo_is_refused_not_read(tmp_path):
    fifo = tmp_path / "pipe.vdtrace"
    os.mkfifo(fifo)
    with pytest.raises(TraceError, match="not a regular file"):
        read_trace(fifo)


@pytest.mark.parametrize("t, row, how", [
    ([0.0, 0.01, 0.02, 0.015, 0.04], 3, "goes back from row 2"),  # reversed
    ([0.0, 0.01, 0.01, 0.03, 0.04], 2, "repeats row 1"),  # duplicated
    ([0.04, 0.03, 0.02, 0.01, 0.0], 1, "goes back from row 0"),  # the whole column reversed
])
def test_a_time_that_does_not_increase_is_refused_naming_the_row(tmp_path, t, row, how):
    path = _write(tmp_path / "t.vdtrace", _manifest(),
                  {"channels/t.f64": np.asarray(t, "<f8").tobytes(),
                   "channels/x.f64": np.zeros((5, 2), "<f8").tobytes()})
    with pytest.raises(TraceError, match=f"row {row} .*{how}") as err:
        read_trace(path)
    assert str(path) in str(err.value) and "must increase" in str(err.value)
