"""The ``vdsim-gym render`` command's work (``run_render``): the animation and the PNG of
traces (``trace``) written under the names asked for, SIGTERM stopping it as Ctrl-C does
(no file, no temporary left), the temporaries a render killed by SIGKILL left removed
first."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from vdsim_gym._files import clean_stale_temps
from vdsim_gym._signals import sigterm_as_interrupt
from vdsim_gym.render.trace import render_gif, render_png


def run_render(traces: Sequence[str | Path], out: str | Path | None = None, *,
               png: str | Path | None = None, at: float | None = None,
               labels: Sequence[str] | None = None, fps: float = 10.0, speed: float = 1.0,
               progress: bool = True, echo: Callable[[str], Any] = print) -> list[Path]:
    """Renders ``traces`` (overlaid by time) as the animation ``out`` (.gif or .mp4) and/or
    the PNG ``png`` of the frame at ``at`` (None: the end); neither: the GIF beside the
    first trace. ``echo``: "wrote <file>" as each is written; returns the files."""
    gif = out
    if gif is None and png is None:  # neither: the GIF beside the first trace
        gif = str(Path(traces[0]).with_suffix(".gif"))
    written: list[Path] = []
    with sigterm_as_interrupt():
        for path in (png, gif):
            if path is not None:
                clean_stale_temps(Path(path).parent, Path(path).name)
        if png is not None:
            written.append(render_png(traces, png, labels=labels, at=at))
            echo(f"wrote {written[-1]}")
        if gif is not None:
            written.append(render_gif(traces, gif, labels=labels, fps=fps, speed=speed,
                                      progress=progress))
            echo(f"wrote {written[-1]}")
    return written


__all__ = ["run_render"]
