"""Recorded runs: the .vdtrace file (``trace``: writer, a reader that needs no compiled
core, overlays), writing a run's rows as one (``recording``), what a run ran on
(``provenance``), GIF/MP4/PNG animations (``render``) and the MCAP export for Foxglove
and PlotJuggler (``mcap``, written by ``_mcap_writer``).

Each module keeps its old top-level path as well (``vdsim_gym.trace``,
``vdsim_gym.recording``, ``vdsim_gym.provenance``, ``vdsim_gym.trace_render``,
``vdsim_gym.trace_mcap``: the same module objects); this package imports nothing itself.
"""
