"""The MCAP writer behind ``vdsim_gym.traces.mcap`` (its docstring: topics, schemas, times):
``write_mcap`` turns a read trace into an MCAP file. It takes the ``Trace`` by its fields
and imports neither ``vdsim_gym.traces.trace`` nor ``trace_mcap``, so both of those can call it
(``trace.to_mcap`` and ``trace_mcap.to_mcap``, which read a path first) without an import
cycle (docs/ARCHITECTURE.md, "Layers"). The ``mcap`` package (the ``export`` extra) is
imported only when a file is written.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from vdsim_gym._checks import check_integer
from vdsim_gym._files import atomic_path, check_target
from vdsim_gym.errors import ConfigError


class Trace(Protocol):
    """What the writer reads of a ``vdsim_gym.traces.trace.Trace``."""

    # Read-only (properties): the trace is a frozen dataclass.
    @property
    def path(self) -> Path: ...
    @property
    def manifest(self) -> dict[str, Any]: ...
    @property
    def channels(self) -> dict[str, np.ndarray]: ...
    @property
    def overlays(self) -> dict[str, dict[str, Any]]: ...

    def __getitem__(self, name: str) -> np.ndarray: ...

    @property
    def units(self) -> dict[str, str]: ...

    def body_geometry(self) -> dict[str, float]: ...


WORLD = "world"
BASE_LINK = "base_link"
TOPIC_TF = "/tf"
TOPIC_POSE = "/vehicle/pose"
TOPIC_SCENE = "/vdsim/scene"
TOPIC_SIGNALS = "/vdsim/signals"
SIGNALS_SCHEMA = "vdsim.Signals"
BODY_HEIGHT_M = 1.5
CONE_DIAMETER_M, CONE_HEIGHT_M = 0.3, 0.5
INSTALL_HINT = "MCAP export needs the mcap package: pip install 'vdsim-gym[export]'"

# ------------------------------------------------------------------ foxglove schemas


def _object(title: str, description: str, props: dict[str, Any]) -> dict[str, Any]:
    return {"title": title, "description": description, "type": "object",
            "properties": props, "required": list(props)}


def _numbers(title: str, description: str, names: str) -> dict[str, Any]:
    return _object(title, description, {n: {"type": "number"} for n in names})


def _time(description: str) -> dict[str, Any]:
    return {"type": "object", "title": "time", "description": description,
            "properties": {"sec": {"type": "integer", "minimum": 0},
                           "nsec": {"type": "integer", "minimum": 0, "maximum": 999_999_999}}}


def _duration(description: str) -> dict[str, Any]:
    return {"type": "object", "title": "duration", "description": description,
            "properties": {"sec": {"type": "integer"},
                           "nsec": {"type": "integer", "minimum": 0, "maximum": 999_999_999}}}


def _string(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def _array(items: dict[str, Any], description: str) -> dict[str, Any]:
    return {"type": "array", "items": items, "description": description}


def _enum(title: str, description: str, names: Sequence[str]) -> dict[str, Any]:
    return {"title": title, "description": description,
            "oneOf": [{"title": n, "const": i} for i, n in enumerate(names)]}


def _vector3(description: str) -> dict[str, Any]:
    return _numbers("foxglove.Vector3", description, "xyz")


def _quaternion(description: str) -> dict[str, Any]:
    return _numbers("foxglove.Quaternion", description, "xyzw")


def _color(description: str) -> dict[str, Any]:
    return _numbers("foxglove.Color", description, "rgba")


def _point3() -> dict[str, Any]:
    return _numbers("foxglove.Point3", "A point in 3D space", "xyz")


def _pose(description: str) -> dict[str, Any]:
    return _object("foxglove.Pose", description,
                   {"position": _vector3("Point denoting position in 3D space"),
                    "orientation": _quaternion("Quaternion denoting orientation in 3D space")})


def _primitive(name: str, props: dict[str, Any]) -> dict[str, Any]:
    return _object(f"foxglove.{name}", f"A primitive of a scene entity ({name})",
                   {"pose": _pose("Pose of the primitive"), **props})


def _scene_update_schema() -> dict[str, Any]:
    number, boolean = {"type": "number"}, {"type": "boolean"}
    indices = _array({"type": "integer", "minimum": 0}, "Indices into points and colors")
    colors = _array(_color("Per-point color"), "Per-point colors")
    points = _array(_point3(), "Points")
    primitives = {
        "arrows": _primitive("ArrowPrimitive", {
            "shaft_length": number, "shaft_diameter": number, "head_length": number,
            "head_diameter": number, "color": _color("Color of the arrow")}),
        "cubes": _primitive("CubePrimitive", {"size": _vector3("Size along each axis"),
                                              "color": _color("Color of the cube")}),
        "spheres": _primitive("SpherePrimitive", {"size": _vector3("Diameter along each axis"),
                                                  "color": _color("Color of the sphere")}),
        "cylinders": _primitive("CylinderPrimitive", {
            "size": _vector3("Size of the bounding box"), "bottom_scale": number,
            "top_scale": number, "color": _color("Color of the cylinder")}),
        "lines": _object("foxglove.LinePrimitive", "A line, line loop or line list", {
            "type": _enum("foxglove.LineType", "Drawing primitive to use for lines",
                          ("LINE_STRIP", "LINE_LOOP", "LINE_LIST")),
            "pose": _pose("Origin of lines relative to reference frame"),
            "thickness": number, "scale_invariant": boolean, "points": points,
            "color": _color("Solid color of the whole line"), "colors": colors,
            "indices": indices}),
        "triangles": _primitive("TriangleListPrimitive", {
            "points": points, "color": _color("Solid color of the whole shape"),
            "colors": colors, "indices": indices}),
        "texts": _primitive("TextPrimitive", {
            "billboard": boolean, "font_size": number, "scale_invariant": boolean,
            "color": _color("Color of the text"), "text": _string("Text")}),
        "models": _primitive("ModelPrimitive", {
            "scale": _vector3("Scale factor"), "color": _color("Solid color of the model"),
            "override_color": boolean, "url": _string("URL of the model"),
            "media_type": _string("Media type of the embedded model"),
            "data": {"type": "string", "contentEncoding": "base64",
                     "description": "Embedded model"}}),
    }
    entity = _object("foxglove.SceneEntity", "A visual element in a 3D scene", {
        "timestamp": _time("Timestamp of the entity"),
        "frame_id": _string("Frame of reference"),
        "id": _string("Identifier for the entity"),
        "lifetime": _duration("Time after which the entity is removed; 0: never"),
        "frame_locked": {"type": "boolean", "description": "Whether the entity moves with "
                                                           "its frame"},
        "metadata": _array(_object("foxglove.KeyValuePair", "A key with its value",
                                   {"key": _string("Key"), "value": _string("Value")}),
                           "Additional user-provided metadata"),
        **{k: _array(v, k.capitalize()) for k, v in primitives.items()}})
    deletion = _object("foxglove.SceneEntityDeletion", "Command to remove entities", {
        "timestamp": _time("Timestamp of the deletion"),
        "type": _enum("foxglove.SceneEntityDeletionType", "Type of deletion action",
                      ("MATCHING_ID", "ALL")),
        "id": _string("Identifier which must match if type is MATCHING_ID")})
    return _object("foxglove.SceneUpdate", "An update to the entities displayed in a 3D scene",
                   {"deletions": _array(deletion, "Scene entities to delete"),
                    "entities": _array(entity, "Scene entities to add or replace")})


def foxglove_schemas() -> dict[str, dict[str, Any]]:
    """The JSON Schemas of the foxglove messages written, by name."""
    frame_transform = _object(
        "foxglove.FrameTransform", "A transform between two reference frames in 3D space", {
            "timestamp": _time("Timestamp of transform"),
            "parent_frame_id": _string("Name of the parent frame"),
            "child_frame_id": _string("Name of the child frame"),
            "translation": _vector3("Position of the child frame's origin in the parent "
                                    "frame"),
            "rotation": _quaternion("Orientation of the child frame in the parent frame")})
    pose_in_frame = _object(
        "foxglove.PoseInFrame", "A timestamped pose for an object or reference frame in 3D "
                                "space", {
            "timestamp": _time("Timestamp of pose"),
            "frame_id": _string("Frame of reference for pose position and orientation"),
            "pose": _pose("Pose in 3D space")})
    return {s["title"]: s for s in (frame_transform, pose_in_frame, _scene_update_schema())}


# ----------------------------------------------------------------------- the signals


def _axis_names(entry: Mapping[str, Any], shape: tuple[int, ...]) -> list[list[str] | None]:
    """Per trailing axis, its column names (unique strings, one per index) or None."""
    cols = entry.get("columns")
    if len(shape) == 1 and isinstance(cols, list) and all(isinstance(c, str) for c in cols):
        cols = [cols]
    out: list[list[str] | None] = [None] * len(shape)
    if isinstance(cols, list) and len(cols) == len(shape):
        for k, (names, size) in enumerate(zip(cols, shape, strict=True)):
            if isinstance(names, list) and len(names) == size and len(set(names)) == size \
                    and all(isinstance(c, str) and c for c in names):
                out[k] = names
    return out


def _field_schema(names: list[list[str] | None], shape: tuple[int, ...],
                  description: str = "") -> dict[str, Any]:
    if not shape:
        out: dict[str, Any] = {"type": ["number", "null"]}
    elif names[0] is not None:
        inner = _field_schema(names[1:], shape[1:])
        out = {"type": "object", "properties": {n: inner for n in names[0]},
               "required": list(names[0])}
    else:
        out = {"type": "array", "items": _field_schema(names[1:], shape[1:]),
               "minItems": shape[0], "maxItems": shape[0]}
    if description:
        out["description"] = description
    return out


def _shaper(names: list[list[str] | None]) -> Callable[[Any], Any]:
    """A function from a row's nested list (``tolist()``) to its JSON value."""
    if not names:
        return lambda v: v
    inner = _shaper(names[1:])
    axis = names[0]
    if axis is None:
        return lambda v: [inner(x) for x in v]
    return lambda v: {n: inner(x) for n, x in zip(axis, v, strict=False)}


def _as_lists(arr: np.ndarray) -> list[Any]:
    finite = np.isfinite(arr)
    if finite.all():
        return arr.tolist()
    obj = arr.astype(object)
    obj[~finite] = None
    return obj.tolist()


def _ordered(tr: Trace) -> dict[str, np.ndarray]:
    """The channels, t first (the top of a plot tool's tree)."""
    return {"t": tr["t"], **{k: v for k, v in tr.channels.items() if k != "t"}}


def signals_schema(tr: Trace) -> dict[str, Any]:
    """The JSON Schema of ``/vdsim/signals`` for this trace: a field per channel."""
    table = tr.manifest.get("channels", {})
    props = {}
    for name, arr in _ordered(tr).items():
        entry = table.get(name, {}) if isinstance(table.get(name), Mapping) else {}
        what = "; ".join(x for x in (f"[{entry.get('unit', '')}]" if entry.get("unit") else "",
                                     str(entry.get("description", ""))) if x)
        props[name] = _field_schema(_axis_names(entry, arr.shape[1:]), arr.shape[1:], what)
    return {"title": SIGNALS_SCHEMA, "description": "Every channel of a .vdtrace row "
            "(vdsim_gym, docs/TRACES.md); units in the field descriptions", "type": "object",
            "properties": props, "required": list(props)}


def _signal_rows(tr: Trace, block: int = 4096) -> Iterator[dict[str, Any]]:
    """The rows' messages, made a block of rows at a time (an hour of a trace stays a
    few blocks of Python objects, not millions at once)."""
    table = tr.manifest.get("channels", {})
    shapers = {}
    for name, arr in _ordered(tr).items():
        entry = table.get(name, {}) if isinstance(table.get(name), Mapping) else {}
        shapers[name] = _shaper(_axis_names(entry, arr.shape[1:]))
    for start in range(0, len(tr["t"]), block):
        values = {name: _as_lists(arr[start:start + block])
                  for name, arr in tr.channels.items()}
        for i in range(len(values["t"])):
            yield {name: shaper(values[name][i]) for name, shaper in shapers.items()}


# ------------------------------------------------------------------------- the scene


def _stamp(ns: int) -> dict[str, int]:
    sec, nsec = divmod(int(ns), 1_000_000_000)
    return {"sec": sec, "nsec": nsec}


def _xyz(x: float, y: float, z: float) -> dict[str, float]:
    return {"x": float(x), "y": float(y), "z": float(z)}


def _yaw(psi: float) -> dict[str, float]:
    return {"x": 0.0, "y": 0.0, "z": math.sin(psi / 2.0), "w": math.cos(psi / 2.0)}


def _rgba(r: float, g: float, b: float, a: float = 1.0) -> dict[str, float]:
    return {"r": r, "g": g, "b": b, "a": a}


_IDENTITY = {"position": _xyz(0, 0, 0), "orientation": _yaw(0.0)}
_COLORS = {"line": _rgba(0.2, 0.5, 1.0), "cone": _rgba(1.0, 0.45, 0.0),
           "region": _rgba(0.3, 0.8, 0.3), "body": _rgba(0.85, 0.15, 0.1, 0.6)}


def _entity(stamp: dict[str, int], frame: str, ident: str, metadata: Mapping[str, str],
            locked: bool = False, **primitives: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "timestamp": stamp, "frame_id": frame, "id": ident, "lifetime": {"sec": 0, "nsec": 0},
        "frame_locked": locked,
        "metadata": [{"key": k, "value": str(v)} for k, v in metadata.items()]}
    for kind in ("arrows", "cubes", "spheres", "cylinders", "lines", "triangles", "texts",
                 "models"):
        out[kind] = primitives.get(kind, [])
    return out


def _points(ov: Mapping[str, Any], key: str) -> np.ndarray | None:
    try:
        pts = np.asarray(ov.get(key), dtype=float)
    except (TypeError, ValueError):
        return None
    if pts.ndim != 2 or pts.shape[1] != 2 or len(pts) == 0 or not np.all(np.isfinite(pts)):
        return None  # a broken overlay is an annotation: skipped, as the reader does
    return pts


def _line(pts: np.ndarray, kind: int, color: dict[str, float]) -> dict[str, Any]:
    return {"type": kind, "pose": _IDENTITY, "thickness": 0.1, "scale_invariant": False,
            "points": [_xyz(x, y, 0.01) for x, y in pts.tolist()], "color": color,
            "colors": [], "indices": []}


def _body(tr: Trace, stamp: dict[str, int]) -> dict[str, Any] | None:
    geo = tr.body_geometry()  # a clear error for a null or non-finite one
    need = ("cg_to_front_m", "cg_to_rear_m", "body_width_m")
    if not all(k in geo for k in need):
        return None
    front = geo["cg_to_front_m"] + geo.get("front_overhang_m", 0.8)
    rear = geo["cg_to_rear_m"] + geo.get("rear_overhang_m", 0.8)
    cube = {"pose": {"position": _xyz((front - rear) / 2.0, 0.0, BODY_HEIGHT_M / 2.0),
                     "orientation": _yaw(0.0)},
            "size": _xyz(front + rear, geo["body_width_m"], BODY_HEIGHT_M),
            "color": _COLORS["body"]}
    return _entity(stamp, BASE_LINK, "vehicle/body", {"what": "body"}, locked=True,
                   cubes=[cube])


def scene_update(tr: Trace, stamp: dict[str, int], with_body: bool) -> dict[str, Any] | None:
    """The SceneUpdate of the trace's overlays (and the body), or None when empty."""
    entities = []
    for name, ov in sorted(tr.overlays.items()):
        kind = ov.get("kind")
        meta = {"overlay": name, "kind": str(kind)}
        if kind == "path2d" and (pts := _points(ov, "points")) is not None:
            if ov.get("style") == "points":
                cones = [{"pose": {"position": _xyz(x, y, CONE_HEIGHT_M / 2.0),
                                   "orientation": _yaw(0.0)},
                          "size": _xyz(CONE_DIAMETER_M, CONE_DIAMETER_M, CONE_HEIGHT_M),
                          "bottom_scale": 1.0, "top_scale": 0.0, "color": _COLORS["cone"]}
                         for x, y in pts.tolist()]
                entities.append(_entity(stamp, WORLD, f"overlay/{name}", meta,
                                        cylinders=cones))
            else:
                entities.append(_entity(stamp, WORLD, f"overlay/{name}", meta,
                                        lines=[_line(pts, 0, _COLORS["line"])]))
        elif kind == "region" and (pts := _points(ov, "polygon")) is not None:
            entities.append(_entity(stamp, WORLD, f"overlay/{name}", meta,
                                    lines=[_line(pts, 1, _COLORS["region"])]))
    body = _body(tr, stamp) if with_body else None
    if body is not None:
        entities.append(body)
    return {"deletions": [], "entities": entities} if entities else None


# ------------------------------------------------------------------------ the writer


def _pose_rows(tr: Trace) -> np.ndarray | None:
    pose = tr.channels.get("pose")
    if pose is None or pose.ndim != 2 or pose.shape[1] != 3:
        return None
    return pose


def _log_times(t: np.ndarray, start_time_ns: int, path: Path) -> list[int]:
    ns = t * 1e9 + start_time_ns
    if len(ns) and (ns.min() < 0 or ns.max() >= 2.0**63):
        raise ConfigError(f"{path}: t runs from {t.min():g} to {t.max():g} s; with "
                          f"start_time_ns={start_time_ns} MCAP log times (ns from 0 to "
                          "2^63) cannot hold it; pass a start time that makes them so")
    return [start_time_ns + round(x * 1e9) for x in t.tolist()]


def _target(out: str | Path, source: Path | None) -> Path:
    out = Path(out)
    if out.is_dir():
        raise ConfigError(f"{out}: is a folder; give the MCAP file's path (e.g. run.mcap)")
    if not out.parent.is_dir():
        raise ConfigError(f"{out}: the folder {str(out.parent)!r} does not exist; create it "
                          "or write elsewhere")
    if source is not None and out.exists() and out.resolve() == source.resolve():
        raise ConfigError(f"{out}: is the trace itself; give the MCAP file another name")
    check_target(out)  # a FIFO or a device there would be replaced by the rename
    return out


def write_mcap(tr: Trace, out: str | Path, *, start_time_ns: int = 0) -> Path:
    """``vdsim_gym.traces.mcap.to_mcap`` once the trace is read: writes ``tr`` as an MCAP
    file at ``out``, atomically (``vdsim_gym._files.atomic_path``)."""
    start_time_ns = check_integer(start_time_ns, "start_time_ns", what="a whole number of ns")
    out = _target(out, tr.path)
    try:
        from mcap.well_known import MessageEncoding, SchemaEncoding
        from mcap.writer import CompressionType, Writer
    except ImportError as exc:
        raise ImportError(INSTALL_HINT, name="mcap") from exc
    times = _log_times(tr["t"], int(start_time_ns), tr.path)
    pose = _pose_rows(tr)
    if pose is not None:
        tr.body_geometry()  # a null or non-finite geometry named before anything is written
    with atomic_path(out) as tmp:
        with open(tmp, "wb") as fh:
            w = Writer(fh, compression=CompressionType.ZSTD)
            w.start(profile="", library="vdsim_gym.traces.mcap (mcap-python)")
            w.add_metadata("vdtrace", {"source": tr.path.name,
                                       "manifest": json.dumps(tr.manifest, default=str)})

            def channel(topic: str, schema: dict[str, Any], **meta: str) -> int:
                sid = w.register_schema(schema["title"], SchemaEncoding.JSONSchema,
                                        json.dumps(schema).encode())
                return w.register_channel(topic, MessageEncoding.JSON, sid, metadata=meta)

            def put(cid: int, i: int, ns: int, msg: Any) -> None:
                w.add_message(cid, log_time=ns, publish_time=ns, sequence=i,
                              data=json.dumps(msg, allow_nan=False,
                                              separators=(",", ":")).encode())

            fox = foxglove_schemas()
            scene = (scene_update(tr, _stamp(times[0]), with_body=pose is not None)
                     if times else None)
            if scene is not None:
                put(channel(TOPIC_SCENE, fox["foxglove.SceneUpdate"]), 0, times[0], scene)
            # The rows whose pose is sent (finite ones; none without a pose, the channel
            # ids then unused).
            tf_id = pose_id = -1
            finite = np.zeros(len(times), dtype=bool)
            if pose is not None:
                tf_id = channel(TOPIC_TF, fox["foxglove.FrameTransform"])
                pose_id = channel(TOPIC_POSE, fox["foxglove.PoseInFrame"])
                finite = np.all(np.isfinite(pose), axis=1)
            units = json.dumps(tr.units)
            sig_id = channel(TOPIC_SIGNALS, signals_schema(tr), units=units)
            for i, (ns, row) in enumerate(zip(times, _signal_rows(tr), strict=False)):
                if pose is not None and finite[i]:
                    x, y, psi = pose[i].tolist()
                    stamp, q = _stamp(ns), _yaw(psi)
                    put(tf_id, i, ns, {"timestamp": stamp, "parent_frame_id": WORLD,
                                       "child_frame_id": BASE_LINK,
                                       "translation": _xyz(x, y, 0.0), "rotation": q})
                    put(pose_id, i, ns, {"timestamp": stamp, "frame_id": WORLD,
                                         "pose": {"position": _xyz(x, y, 0.0),
                                                  "orientation": q}})
                put(sig_id, i, ns, row)
            w.finish()
    return out


__all__ = ["BASE_LINK", "INSTALL_HINT", "SIGNALS_SCHEMA", "TOPIC_POSE", "TOPIC_SCENE",
           "TOPIC_SIGNALS", "TOPIC_TF", "WORLD", "foxglove_schemas", "scene_update",
           "signals_schema", "write_mcap"]
