"""The ``.vdtrace`` file (docs/TRACES.md): a zip, stored uncompressed, of ``manifest.json``,
``channels/<name>.f64`` (little-endian float64, C order, shape (n,) + trailing, listed in
the manifest's channel table) and ``overlays/<name>.json`` (kinds path2d, region, event,
timeseries; unknown kinds are kept and ignored). Schema 0.5.

``TraceWriter`` builds one and writes it atomically (``vdsim_gym._files.atomic_path``: a
temporary file beside the target, renamed over it when complete: a crash, an exception or
an interrupt leaves the old file or none, never half a trace);
``read_trace`` reads one without importing the compiled core; ``attach_overlay`` adds an
overlay to an existing trace (atomically too).
"""

from __future__ import annotations

import json
import stat
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

if (__package__ or "").startswith("vdsim_gym"):
    from vdsim_gym.errors import TraceError
else:  # loaded on its own (no vdsim_gym package, no compiled core): the same error
    class TraceError(ValueError):  # type: ignore[no-redef]
        """A file that is not a readable .vdtrace; the message names the file and the
        cause (in the package: vdsim_gym.errors.TraceError, a VDSimError)."""

SCHEMA_VERSION = "0.5"
REQUIRED_KEYS = ("schema_version", "producer", "role", "repro", "channels")
REQUIRED_CHANNELS = ("t",)
# The manifest's geometry keys that place the body and the wheels in a drawing [m].
BODY_KEYS = ("cg_to_front_m", "cg_to_rear_m", "body_width_m", "track_m", "front_overhang_m",
             "rear_overhang_m", "wheel_radius_m")
OVERLAY_KINDS = {"path2d": ("points",), "region": ("polygon",), "event": ("t",),
                 "timeseries": ("t", "y")}


@dataclass(frozen=True)
class Trace:
    """A read trace: the manifest, every channel by name, every overlay by name."""

    path: Path
    manifest: dict[str, Any]
    channels: dict[str, np.ndarray]
    overlays: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __getitem__(self, name: str) -> np.ndarray:
        return self.channels[name]

    @property
    def units(self) -> dict[str, str]:
        return {k: v.get("unit", "") for k, v in self.manifest["channels"].items()}

    def body_geometry(self) -> dict[str, float]:
        """The manifest's vehicle dimensions that draw its body ({} without a
        ``geometry``: no body is drawn); a TraceError naming the file, the key and the fix
        when it is not an object of finite numbers (null, NaN, text)."""
        geo = self.manifest.get("geometry", {})
        fix = ("write the trace again from its run (the writer records the vehicle's "
               "dimensions), or drop the manifest's 'geometry' to draw no body")
        if not isinstance(geo, Mapping):
            shown = "null" if geo is None else repr(geo)[:60]
            raise TraceError(f"{self.path}: the manifest's geometry is {shown}, not an "
                             f"object of the vehicle's dimensions in m; {fix}")
        out = {}
        for key in BODY_KEYS:
            if key not in geo:
                continue
            v = geo[key]
            if isinstance(v, bool) or not isinstance(v, (int, float)) \
                    or not np.isfinite(v) or v < 0:
                raise TraceError(f"{self.path}: the manifest's geometry has {key} = {v!r}, "
                                 f"not a finite length >= 0 in m; {fix}")
            out[key] = float(v)
        return out


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, (np.floating, float)):
        v = float(value)
        return v if np.isfinite(v) else repr(v)  # JSON has no NaN or inf
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.bool_,)):
        return bool(value)
    return value


def check_overlay(overlay: Mapping[str, Any]) -> dict[str, Any]:
    """An overlay: a mapping with ``name`` and ``kind``; known kinds need their fields
    (path2d: points (M, 2); region: polygon (M, 2); event: t; timeseries: t and y)."""
    if not isinstance(overlay, Mapping) or not isinstance(overlay.get("name"), str) \
            or not overlay["name"] or not isinstance(overlay.get("kind"), str):
        kinds = ", ".join(OVERLAY_KINDS)
        raise TraceError(f"an overlay is a dict with a 'name' and a 'kind' ({kinds} or your "
                         f"own), got {overlay!r:.120}")
    name = overlay["name"]
    if "/" in name or name.startswith("."):
        raise TraceError(f"overlay name {name!r} must be a plain file name")
    for key in OVERLAY_KINDS.get(overlay["kind"], ()):
        if key not in overlay:
            raise TraceError(f"overlay {name!r} of kind {overlay['kind']!r} needs {key!r}")
    if overlay["kind"] in ("path2d", "region"):
        key = OVERLAY_KINDS[overlay["kind"]][0]
        try:
            pts = np.asarray(overlay[key], dtype=float)
        except (TypeError, ValueError):
            pts = np.empty((0, 0))
        if pts.ndim != 2 or pts.shape[1] != 2:
            raise TraceError(f"overlay {name!r}: {key} must be finite (M, 2) coordinates "
                             f"[m], got shape {pts.shape}")
        bad = np.flatnonzero(~np.isfinite(pts).all(axis=1))
        if len(bad):
            raise TraceError(f"overlay {name!r}: {key} row {int(bad[0])} is "
                             f"{tuple(pts[bad[0]].tolist())}, not finite coordinates; drop "
                             "the non-finite points (or the overlay) before attaching it")
    return _jsonable(dict(overlay))


class TraceWriter:
    """Collects a trace's manifest, channels and overlays; ``write()`` writes it
    atomically. Channels are whole arrays with their unit (and column names for
    trailing axes); ``optional=True`` marks the ones a reader may not know."""

    def __init__(self, path: str | Path, manifest: Mapping[str, Any]) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            raise TraceError(f"trace path {str(self.path)!r} is a folder; give a file path "
                             "(e.g. run.vdtrace)")
        self.manifest = dict(manifest)
        self.channels: dict[str, np.ndarray] = {}
        self.table: dict[str, dict[str, Any]] = {}
        self.overlays: dict[str, dict[str, Any]] = {}

    def add_channel(self, name: str, data: Any, unit: str, *, columns: Any = None,
                    optional: bool = False, description: str = "") -> None:
        arr = np.ascontiguousarray(np.asarray(data, dtype="<f8"))
        if arr.ndim == 0:
            raise TraceError(f"channel {name!r} must have a leading time axis")
        if self.channels and arr.shape[0] != len(next(iter(self.channels.values()))):
            raise TraceError(f"channel {name!r} has {arr.shape[0]} rows, the others "
                             f"{len(next(iter(self.channels.values())))}")
        self.channels[name] = arr
        entry: dict[str, Any] = {"unit": unit, "shape": list(arr.shape[1:]),
                                 "dtype": "float64", "optional": bool(optional)}
        if columns is not None:
            entry["columns"] = list(columns)
        if description:
            entry["description"] = description
        self.table[name] = entry

    def add_overlay(self, overlay: Mapping[str, Any]) -> None:
        ov = check_overlay(overlay)
        self.overlays[ov["name"]] = ov

    def write(self) -> Path:
        for name in REQUIRED_CHANNELS:
            if name not in self.channels:
                raise TraceError(f"a trace needs the channel {name!r}")
        manifest = {"schema_version": SCHEMA_VERSION, **self.manifest,
                    "channels": self.table, "n_rows": len(self.channels["t"])}
        missing = [k for k in REQUIRED_KEYS if k not in manifest]
        if missing:
            raise TraceError(f"trace manifest is missing {', '.join(missing)}")
        files = {"manifest.json": json.dumps(_jsonable(manifest), indent=1,
                                             sort_keys=True).encode()}
        for name, arr in self.channels.items():
            files[f"channels/{name}.f64"] = arr.tobytes(order="C")
        for name, ov in self.overlays.items():
            files[f"overlays/{name}.json"] = json.dumps(ov, indent=1).encode()
        return _write_zip(self.path, files)


def _write_zip(path: Path, files: Mapping[str, bytes]) -> Path:
    """The zip written atomically (``vdsim_gym._files.atomic_path``: a temporary file
    beside ``path``, published over it when complete, removed on an error or an
    interrupt). Writing needs the vdsim_gym package; reading needs only this file."""
    from vdsim_gym._files import atomic_path

    with atomic_path(path) as tmp, open(tmp, "wb") as fh, \
            zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED) as z:
        for name, data in files.items():
            z.writestr(name, data)
    return path


def _version(text: Any) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in str(text).split("."))
    except ValueError:
        return (999,)


# Bounds of what the reader takes from a file (a deflate bomb or a lying header is refused
# before it is inflated): a member's bytes, the manifest's, a channel's trailing shape.
MAX_MEMBER_BYTES = 1 << 30  # 1 GiB: an hour at 100 Hz of a 4-wide channel is 12 MB
MAX_MANIFEST_BYTES = 16 << 20
MAX_TRAILING_WIDTH = 1 << 16


def _read_member(z: zipfile.ZipFile, member: str, limit: int, path: Path) -> bytes:
    """A member's bytes, at most ``limit`` (the declared size and the inflated one: a
    header may lie); an encrypted or corrupt member is a TraceError."""
    info = z.getinfo(member)
    if info.flag_bits & 0x1:
        raise TraceError(f"{path}: {member} is encrypted; a .vdtrace is never encrypted")
    if info.file_size > limit:
        raise TraceError(f"{path}: {member} declares {info.file_size} bytes, more than the "
                         f"reader's bound of {limit} bytes")
    try:
        with z.open(member) as fh:
            data = fh.read(limit + 1)
    except (zipfile.BadZipFile, RuntimeError, OSError, EOFError, ValueError) as exc:
        raise TraceError(f"{path}: {member} cannot be read ({exc})") from None
    if len(data) > limit:
        raise TraceError(f"{path}: {member} inflates past the reader's bound of {limit} bytes")
    return data


def _trailing_shape(name: str, entry: Any, path: Path) -> tuple[int, ...]:
    if not isinstance(entry, Mapping):
        raise TraceError(f"{path}: the manifest's channel {name!r} must be an object with "
                         f"'shape' and 'unit', got {type(entry).__name__}")
    shape = entry.get("shape", [])
    if not isinstance(shape, list) or not all(
            isinstance(d, int) and not isinstance(d, bool) for d in shape):
        raise TraceError(f"{path}: channel {name!r}: 'shape' must be a list of whole numbers "
                         f"(the trailing dimensions), got {shape!r}")
    width = 1
    for d in shape:
        if d < 1:
            raise TraceError(f"{path}: channel {name!r}: 'shape' {shape} has a dimension < 1")
        width *= d
        if width > MAX_TRAILING_WIDTH:
            raise TraceError(f"{path}: channel {name!r}: 'shape' {shape} is wider than the "
                             f"reader's bound of {MAX_TRAILING_WIDTH} values per row")
    return tuple(shape)


def read_trace(path: str | Path) -> Trace:
    """Read a .vdtrace; errors (``TraceError``) name the file and the cause: not a zip,
    not a regular file, no manifest, a newer schema, a missing manifest key or channel, a
    malformed channel table or shape, a channel whose size does not match its shape, a
    non-finite or non-1-D time, a time that does not increase row by row (reversed or
    repeated; the row is named), a row count that disagrees with the manifest, duplicate or
    encrypted members, members beyond the reader's bounds (MAX_MEMBER_BYTES: a deflate
    bomb is refused before it is inflated). Time and memory stay bounded by those."""
    path = Path(path)
    try:
        st = path.stat()
    except FileNotFoundError:
        raise TraceError(f"{path}: no such trace file") from None
    except OSError as exc:
        raise TraceError(f"{path}: cannot read it ({exc.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        raise TraceError(f"{path}: not a regular file (a .vdtrace is a zip file)")
    try:
        z = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise TraceError(f"{path}: not a .vdtrace (a zip of manifest.json and channels): "
                         f"{exc}") from None
    with z:
        listed = z.namelist()
        names = set(listed)
        if len(names) != len(listed):
            dup = next(n for n in listed if listed.count(n) > 1)
            raise TraceError(f"{path}: the member {dup!r} appears twice; a .vdtrace has each "
                             "once")
        if "manifest.json" not in names:
            raise TraceError(f"{path}: a zip, but not a .vdtrace (no manifest.json)")
        try:
            manifest = json.loads(_read_member(z, "manifest.json", MAX_MANIFEST_BYTES, path))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise TraceError(f"{path}: manifest.json is not JSON ({exc})") from None
        except RecursionError:
            raise TraceError(f"{path}: manifest.json is nested too deeply") from None
        if not isinstance(manifest, dict):
            raise TraceError(f"{path}: manifest.json must be an object")
        missing = [k for k in REQUIRED_KEYS if k not in manifest]
        if missing:
            raise TraceError(f"{path}: the manifest is missing {', '.join(missing)}")
        version = _version(manifest["schema_version"])
        if version[:1] != _version(SCHEMA_VERSION)[:1] or version > _version(SCHEMA_VERSION):
            raise TraceError(f"{path}: schema {manifest['schema_version']} is newer than this "
                             f"reader's {SCHEMA_VERSION}; upgrade vdsim_gym to read it")
        table = manifest["channels"]
        if not isinstance(table, dict):
            raise TraceError(f"{path}: the manifest's 'channels' must be an object of name: "
                             f"{{shape, unit}}, got {type(table).__name__}")
        channels: dict[str, np.ndarray] = {}
        for name, entry in table.items():
            trailing = _trailing_shape(name, entry, path)
            member = f"channels/{name}.f64"
            if member not in names:
                raise TraceError(f"{path}: channel {name!r} is listed but {member} is missing")
            raw = _read_member(z, member, MAX_MEMBER_BYTES, path)
            width = int(np.prod(trailing)) if trailing else 1
            if len(raw) % (8 * width):
                raise TraceError(f"{path}: {member} has {len(raw)} bytes, not a whole number "
                                 f"of rows of shape {trailing}")
            channels[name] = np.frombuffer(raw, dtype="<f8").reshape((-1, *trailing)).copy()
        for name in REQUIRED_CHANNELS:
            if name not in channels:
                raise TraceError(f"{path}: the required channel {name!r} is missing")
        t = channels["t"]
        if t.ndim != 1:
            raise TraceError(f"{path}: channel 't' must be 1-D (one time per row), got shape "
                             f"{t.shape}")
        if not np.all(np.isfinite(t)):
            raise TraceError(f"{path}: channel 't' holds a non-finite time (row "
                             f"{int(np.flatnonzero(~np.isfinite(t))[0])})")
        back = np.flatnonzero(np.diff(t) <= 0)
        if len(back):
            i = int(back[0]) + 1
            how = "repeats" if t[i] == t[i - 1] else "goes back from"
            raise TraceError(f"{path}: channel 't' must increase row by row, but row {i} "
                             f"(t = {t[i]!r} s) {how} row {i - 1} (t = {t[i - 1]!r} s); "
                             "the file is damaged or was not written by a trace writer: "
                             "write it again from the run")
        n = len(t)
        declared = manifest.get("n_rows")
        if declared is not None and declared != n:
            raise TraceError(f"{path}: the manifest says n_rows = {declared!r}, channel 't' "
                             f"has {n} rows")
        bad = [k for k, v in channels.items() if len(v) != n]
        if bad:
            raise TraceError(f"{path}: channel {bad[0]!r} has {len(channels[bad[0]])} rows, "
                             f"t has {n}")
        overlays = {}
        for member in sorted(n for n in names if n.startswith("overlays/")
                             and n.endswith(".json")):
            try:
                ov = json.loads(_read_member(z, member, MAX_MANIFEST_BYTES, path))
            except (json.JSONDecodeError, UnicodeDecodeError, RecursionError, TraceError):
                continue  # an overlay is an annotation: a broken one does not spoil the run
            if isinstance(ov, dict) and isinstance(ov.get("name"), str):
                overlays[ov["name"]] = ov
    return Trace(path, manifest, channels, overlays)


def attach_overlay(path: str | Path, overlay: Mapping[str, Any]) -> Path:
    """Adds (or replaces) ``overlay`` in the trace at ``path``, atomically: e.g.
    ``{"name": "reference", "kind": "path2d", "points": path_xy}``, cone gates as
    ``{"name": "gate_1", "kind": "region", "polygon": [...]}``, a mu patch likewise."""
    path = Path(path)
    read_trace(path)  # a clear error for anything that is not a trace
    ov = check_overlay(overlay)
    with zipfile.ZipFile(path) as z:
        files = {n: z.read(n) for n in z.namelist() if n != f"overlays/{ov['name']}.json"}
    files[f"overlays/{ov['name']}.json"] = json.dumps(ov, indent=1).encode()
    return _write_zip(path, files)


def to_mcap(trace_or_path: Trace | str | Path, out: str | Path, **kwargs: Any) -> Path:
    """The trace as an MCAP file for Foxglove or PlotJuggler: ``vdsim_gym.traces.mcap.
    to_mcap`` (its writer is imported here only when called; it needs the ``export``
    extra)."""
    from vdsim_gym.traces._mcap_writer import write_mcap

    tr = trace_or_path if isinstance(trace_or_path, Trace) else read_trace(trace_or_path)
    return write_mcap(tr, out, **kwargs)


__all__ = ["MAX_MEMBER_BYTES", "OVERLAY_KINDS", "SCHEMA_VERSION", "Trace", "TraceError",
           "TraceWriter",
           "attach_overlay", "check_overlay", "read_trace", "to_mcap"]
