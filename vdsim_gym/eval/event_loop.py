"""The event loop of ClosedLoopEval's callback form, modes A and B: between a driver (the
simulated side: a Plant and a callback, ``vdsim_gym.eval.driver``) and the controller's
calls (``call``: the checked command and its wall time).

Everything runs on the core's integer tick clock. The timing arithmetic is the core's
``AsyncTimeline``; the commands go through the session's command schedule; the loop
advances the plant in blocks of substeps from one event (a grid sample tick, a controller
call tick, the end) to the next. ``stop`` (ClosedLoopEval.stop) ends a run early.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from typing import Any

from vdsim_gym.config.latency import LatencyModel
from vdsim_gym.config.network import NetworkModel
from vdsim_gym.errors import ConfigError
from vdsim_gym.eval.driver import Command, _Driver
from vdsim_gym.eval.result import _Samples
from vdsim_gym.sim.timeline import async_timeline
from vdsim_gym.timing import ceil_ticks

# The controller call of sample k observed at t: (checked command, wall time [s]).
Call = Callable[[Any, int, float], tuple[Command, float]]


def _age(obs: Any) -> dict[str, float]:
    """A sample row's obs_age: the sensor delay's age of the observation called with
    (``SensorDriver`` adds it to the observation dict); none without a sensor delay."""
    return {"obs_age": obs["obs_age"]} if isinstance(obs, dict) and "obs_age" in obs else {}


def loop_sync(d: _Driver, end: int, stop: threading.Event, call: Call) -> tuple:
    """Mode A (sync): the command from the sample at t_k = k Tc applies at t_k and holds
    one period. Returns (rows, samples, end tick, stopped)."""
    P, dt = d.ticks_per_period, d.substep_dt
    rows: list[tuple] = []
    samples = _Samples()
    stopped = False
    k = 0
    while k * P < end:
        tick = k * P
        t = tick * dt
        if stop.is_set():  # a stop() between calls: end here, before the sample
            end, stopped = tick, True
            break
        obs = d.observe()
        command, wall = call(obs, k, t)
        row = samples.add(k=k, t_sample=t, t_start=t, t_call=t, c_k=0.0, apply_tick=tick,
                          overrun=False, command=command, t_compute_s=wall, **_age(obs))
        if stop.is_set():  # stopped during the call: not applied, no advance
            row["stopping"] = True
            end, stopped = tick, True
            break
        rows.append((t, d.state_row(obs), command, row))
        d.command_now(command)
        d.advance(min(P, end - tick))
        k += 1
    rows.append((end * dt, d.state_row(d.observe()), None, None))
    return rows, samples, end, stopped


def loop_async(d: _Driver, end: int, stop: threading.Event, call: Call, overrun: str,
               latency: LatencyModel, network: NetworkModel | None = None) -> tuple:
    """Mode B (virtual_async): the sample at t_k gives a command that applies at
    ``ceil((t_start + c_k) / substep_dt)`` ticks, c_k from ``latency``; one worker computes
    one sample at a time; overruns follow ``overrun``. With a ``network``, the env core's
    rule (its ``NetworkChannel``, seeded alike): each command is lost (never scheduled)
    or delivered ``ceil((t_finish + n) / substep_dt)`` with n its network delay, and a
    delivered one discards the pending ones due after it. Returns (rows, samples, end
    tick, stopped)."""
    P, dt = d.ticks_per_period, d.substep_dt
    n_grid = -(-end // P)  # grid points k P < end
    queue = overrun == "queue"
    timeline = async_timeline(dt, P, overrun)
    measured = latency.kind == "measured"
    sampler: Any = None if measured else latency.sampler()
    rows: list[tuple] = []
    samples = _Samples()
    by_sample: dict[int, dict[str, Any]] = {}  # sample tick -> its samples row
    initial = (0.0, 0.0)  # the session's command after reset
    snapshots: dict[int, Any] = {}  # queue: observation of each grid sample not yet called
    channel: Any = None
    if network is not None:
        channel = network.channel()
    waiting: list[dict[str, Any]] = []  # delivered rows whose command has not applied
    stopped = False
    now = 0
    g = 0  # next grid point
    while True:
        grid_obs = None
        on_grid = g < n_grid and now == g * P
        if on_grid:
            if stop.is_set():  # a stop() between calls ends at the grid time
                end, stopped = now, True
                break
            grid_obs = d.observe()
            if queue:
                snapshots[g] = grid_obs
        # Controller calls due now (queue: several can fall on one tick).
        stop_now = False
        while (now < end and timeline.next_k < n_grid
               and timeline.call_tick(timeline.next_k) == now and not stop.is_set()):
            k = timeline.next_k
            obs = snapshots.pop(k) if queue else grid_obs
            t_sample = timeline.grid_time(k)
            command, wall = call(obs, k, t_sample)
            c = wall if measured else sampler.draw()
            if not (math.isfinite(c) and c >= 0.0):
                raise ConfigError(f"latency model gave c_k={c!r} at sample k={k}; "
                                  "delays must be finite and >= 0 s")
            s = timeline.commit(k, c)
            apply, lost = s.apply_tick, False
            if channel is not None:
                lost = channel.lost()
                n = channel.delay()  # drawn for every command: the streams stay aligned
                if not lost and n > 0.0:
                    apply = ceil_ticks(s.t_finish + n, dt)
            row = samples.add(k=k, t_sample=t_sample, t_start=s.t_start, t_call=now * dt,
                              c_k=c, apply_tick=-1 if lost else apply, overrun=s.overrun,
                              command=command, t_compute_s=wall, **_age(obs),
                              **({"lost": lost} if channel is not None else {}))
            if stop.is_set():  # stopped during the call: drop it and the pending
                row["stopping"] = True
                stop_now = True
                break
            if not lost:
                if channel is not None:  # overtaken pending commands never act
                    waiting = [w for w in waiting if w["apply_tick"] >= now]
                    if d.discard_after(apply):
                        for w in waiting:
                            if w["apply_tick"] > apply:
                                w["discarded"] = True
                        waiting = [w for w in waiting if not w.get("discarded")]
                    waiting.append(row)
                d.schedule(apply, command, s.sample_tick)
            by_sample[s.sample_tick] = row
        if stop_now:
            end, stopped = now, True
            d.drop_pending()
            break
        if on_grid:
            # the session's schedule says which command acts during this substep
            in_force = by_sample.get(d.command_in_force(now)[0])
            cmd = initial if in_force is None else in_force["command"]
            rows.append((now * dt, d.state_row(grid_obs), cmd, in_force))
            g += 1
        if now == end:
            break
        # Next event: grid point, controller call (not after a stop()) or the end.
        nxt = end
        if g < n_grid:
            nxt = min(nxt, g * P)
        if timeline.next_k < n_grid and not stop.is_set():
            nxt = min(nxt, max(timeline.call_tick(timeline.next_k), now))
        d.advance(nxt - now)
        now = nxt
    rows.append((end * dt, d.state_row(d.observe()), None, None))
    return rows, samples, end, stopped
