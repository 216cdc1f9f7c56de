"""Recorded runs: the .vdtrace file (``trace``: writer, a reader that needs no compiled
core, overlays), writing a run's rows as one (``recording``), what a run ran on
(``provenance``) and the MCAP export for Foxglove and PlotJuggler (``mcap``, written by
``_mcap_writer``; ``run_export``: ``vdsim-gym export``). Their animations are
``vdsim_gym.render.trace``. This package imports nothing itself.
"""
