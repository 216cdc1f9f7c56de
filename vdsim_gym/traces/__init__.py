"""Recorded runs: the .vdtrace file (``trace``: writer, a reader that needs no compiled
core, overlays), writing a run's rows as one (``recording``), what a run ran on
(``provenance``), GIF/MP4/PNG animations (``render``) and the MCAP export for Foxglove
and PlotJuggler (``mcap``, written by ``_mcap_writer``). This package imports nothing itself.
"""
