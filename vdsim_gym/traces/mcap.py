"""A .vdtrace as an MCAP file (``vdsim-gym export``; docs/TRACES.md, "Open a run in
Foxglove or PlotJuggler"), every message JSON-encoded and stamped with the row's time:

- ``/tf`` (``foxglove.FrameTransform``): "world" -> "base_link" on every row, from the
  pose channel's X, Y, psi (base_link: the CG on the ground, x forward, z up);
- ``/vehicle/pose`` (``foxglove.PoseInFrame``): the same pose in "world";
- ``/vdsim/scene`` (``foxglove.SceneUpdate``), once, at the first row: the overlays in
  "world" (a path2d as a line, e.g. the reference; one drawn as points as cones, e.g. the
  cones; a region as a closed line) and the car's body as a box locked to "base_link"
  (from the manifest's geometry; 1.5 m high, the geometry has no height);
- ``/vdsim/signals`` (``vdsim.Signals``, its JSON Schema made from the channel table, with
  units): every channel of every row as a named field; a trailing axis with column names
  as an object of them (``v_body.vx``, ``wheel_force.F.fx``), one without as an array;
  NaN and inf as null (JSON has neither).

A trace without a pose (the dyno's) gets the signals only. Log and publish times are
``start_time_ns`` plus the row's ``t`` in ns (default epoch 0: the log time reads as the
trace's t); the messages' own timestamps are the same. The manifest goes in a metadata
record "vdtrace". Event and timeseries overlays are not exported.

The foxglove schemas are JSON Schemas written here with the fields, types and required
lists of Foxglove's well-known schemas (foxglove/foxglove-sdk, schemas/jsonschema, as of
sdk v0.26.0, commit ca8a1ced 2026-08-17); Foxglove recognises them by name. The ``mcap``
package comes with the ``export`` extra and is imported only when a file is written. The
writer is ``vdsim_gym.traces._mcap_writer``; this module reads the trace and re-exports its
public names. ``run_export`` is the ``vdsim-gym export`` command (the file written, then its
topics and message counts read back from its summary: ``mcap_summary``).
"""

from __future__ import annotations

from pathlib import Path

from vdsim_gym._files import clean_stale_temps
from vdsim_gym._signals import sigterm_as_interrupt
from vdsim_gym.errors import ConfigError
from vdsim_gym.traces._mcap_writer import (  # noqa: F401  (BODY_HEIGHT_M, CONE_*: importable here)
    BASE_LINK,
    BODY_HEIGHT_M,
    CONE_DIAMETER_M,
    CONE_HEIGHT_M,
    INSTALL_HINT,
    SIGNALS_SCHEMA,
    TOPIC_POSE,
    TOPIC_SCENE,
    TOPIC_SIGNALS,
    TOPIC_TF,
    WORLD,
    foxglove_schemas,
    scene_update,
    signals_schema,
    write_mcap,
)
from vdsim_gym.traces.trace import Trace, read_trace


def to_mcap(trace_or_path: Trace | str | Path, out: str | Path, *,
            start_time_ns: int = 0) -> Path:
    """Writes the trace (a ``Trace`` or a .vdtrace path) as an MCAP file at ``out``,
    atomically (a temporary file beside it, renamed over it when complete). Topics:
    ``/tf``, ``/vehicle/pose`` and ``/vdsim/scene`` when the trace has a pose,
    ``/vdsim/signals`` always (module docstring). Log times are ``start_time_ns`` plus
    ``t`` in ns. A ValueError names the file for a bad input or target; an ImportError
    names the extra when ``mcap`` is missing."""
    tr = trace_or_path if isinstance(trace_or_path, Trace) else read_trace(trace_or_path)
    return write_mcap(tr, out, start_time_ns=start_time_ns)


def mcap_summary(path: str | Path) -> dict[str, tuple[str, int]]:
    """{topic: (schema name, message count)} of an MCAP file, from its summary."""
    from mcap.reader import make_reader

    with open(path, "rb") as fh:
        s = make_reader(fh).get_summary()
    if s is None or s.statistics is None:
        raise ConfigError(f"{path}: an MCAP file without a summary")
    counts = s.statistics.channel_message_counts
    return {c.topic: (s.schemas[c.schema_id].name if c.schema_id in s.schemas else "",
                      counts.get(cid, 0)) for cid, c in s.channels.items()}


def run_export(trace: str | Path, mcap: str | Path | None = None, start_time_ns: int = 0
               ) -> list[str]:
    """The ``vdsim-gym export`` command: exports ``trace`` (to ``mcap``, default: beside it
    with .mcap) and returns the lines to print. SIGTERM stops it as Ctrl-C does
    (KeyboardInterrupt; the temporary file is removed), and the temporary files of the
    same output that an earlier export killed by SIGKILL left are removed first."""
    out = Path(trace).with_suffix(".mcap") if mcap is None else Path(mcap)
    with sigterm_as_interrupt():  # SIGTERM stops as Ctrl-C does: no temporary left
        clean_stale_temps(out.parent, out.name)  # what a killed export of it left
        written = to_mcap(trace, out, start_time_ns=start_time_ns)
    topics = mcap_summary(written)
    kib = written.stat().st_size / 1024
    listed = ", ".join(f"{topic} {n} ({schema})" for topic, (schema, n) in topics.items())
    return [f"wrote {written} ({kib:.0f} KiB)", f"topics (messages): {listed}"]


__all__ = ["BASE_LINK", "INSTALL_HINT", "SIGNALS_SCHEMA", "TOPIC_POSE", "TOPIC_SCENE",
           "TOPIC_SIGNALS", "TOPIC_TF", "WORLD", "foxglove_schemas", "mcap_summary",
           "run_export", "scene_update", "signals_schema", "to_mcap"]
