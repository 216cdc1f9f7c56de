"""The ``vdsim-gym sweep`` command line: delay lists (``parse_delays``), controller
specs (``load_controller``: baselines with parameters, SB3 model files) and ``main``,
which sweeps each controller and writes CSVs, the summary table and a plot.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from vdsim_gym.eval.sweeps import _check_seeds, sweep
from vdsim_gym.eval.sweep_report import plot, summary_table
from vdsim_gym.eval.sweep_results import SweepResult, _write_csv
from vdsim_gym.latency import LatencyModel

_UNITS = {"ms": 1e-3, "s": 1.0}
_SB3_ALGOS = ("PPO", "SAC", "TD3", "A2C", "DDPG")


def _split_unit(token: str) -> tuple[str, str | None]:
    for unit in ("ms", "s"):  # "ms" first: "10ms" ends in "s" too
        if token.endswith(unit):
            return token[: -len(unit)].strip(), unit
    return token, None


def _number(text: str, item: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"delay item {item!r}: {text!r} is not a number") from None
    if not math.isfinite(value):
        raise ValueError(f"delay item {item!r}: {text!r} is not finite")
    if value < 0:
        raise ValueError(f"delay item {item!r}: a delay cannot be negative")
    return value


def parse_delays(text: str) -> list[LatencyModel | None]:
    """Latency models from a list like "0,5,10,20,40ms".

    Items: a number (fixed delay), "uniform:LO-HI", "normal:MU,SD" (or "normal:MU+-SD"),
    "none" (no latency); random models take an optional "@SEED" (default 0). Units ms or
    s; an item without one takes the unit of the next item that has one, else of the
    last ("0,5,10ms" is 0, 5 and 10 ms).
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError("--delays is empty; e.g. --delays 0,5,10,20,40ms")
    raw = [t.strip() for t in text.split(",")]
    tokens: list[str] = []
    i = 0
    while i < len(raw):
        tok = raw[i]
        if tok.startswith("normal:") and "+-" not in tok and i + 1 < len(raw):
            tok, i = f"{tok},{raw[i + 1]}", i + 1  # normal:MU,SD spans a comma
        tokens.append(tok)
        i += 1
    parsed: list[tuple[str, str, str | None, int]] = []  # (kind, body, unit, seed)
    for tok in tokens:
        if not tok:
            raise ValueError(f"--delays {text!r} has an empty item")
        body, seed = tok, 0
        if "@" in body:
            body, seed_text = body.rsplit("@", 1)
            try:
                seed = int(seed_text)
            except ValueError:
                raise ValueError(f"delay item {tok!r}: seed {seed_text!r} is not an "
                                 "integer") from None
        kind, _, rest = body.partition(":") if ":" in body else ("fixed", "", body)
        rest, unit = _split_unit(rest.strip())
        if kind not in ("fixed", "uniform", "normal") and body != "none":
            raise ValueError(f"delay item {tok!r}: unknown kind {kind!r} (fixed numbers, "
                             "uniform:LO-HI, normal:MU,SD, none)")
        parsed.append(("none" if body == "none" else kind, rest, unit, seed))
    units = [u for _, _, u, _ in parsed]
    if not any(u for k, _, u, _ in parsed if k != "none") and \
            any(k != "none" for k, *_ in parsed):
        raise ValueError(f"--delays {text!r} has no unit: end it with ms or s "
                         "(e.g. 0,5,10ms)")
    out: list[LatencyModel | None] = []
    for j, (kind, body, unit, seed) in enumerate(parsed):
        if kind == "none":
            out.append(None)
            continue
        unit = unit or next((u for u in units[j:] if u), None) or \
            next(u for u in reversed(units) if u)
        scale, item = _UNITS[unit], tokens[j]
        try:
            if kind == "fixed":
                out.append(LatencyModel.fixed(_number(body, item) * scale))
            elif kind == "uniform":
                lo, sep, hi = body.partition("-")
                if not sep:
                    raise ValueError(f"delay item {item!r}: write uniform:LO-HI")
                out.append(LatencyModel.uniform(_number(lo, item) * scale,
                                                _number(hi, item) * scale, seed=seed))
            else:
                mu, sep, sd = body.partition("+-") if "+-" in body else body.partition(",")
                if not sep:
                    raise ValueError(f"delay item {item!r}: write normal:MU,SD")
                out.append(LatencyModel.normal(_number(mu, item) * scale,
                                               _number(sd, item) * scale, seed=seed))
        except ValueError as exc:
            msg = str(exc)
            raise ValueError(msg if msg.startswith("delay item") else
                             f"delay item {item!r}: {msg}") from None
    return out


def _parse_params(text: str) -> dict[str, float]:
    out = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        if not sep:
            raise ValueError(f"controller parameter {part!r}: write key=value")
        try:
            out[key.strip()] = float(value)
        except ValueError:
            raise ValueError(f"controller parameter {part!r}: {value!r} is not a "
                             "number") from None
    return out


def load_controller(spec: str, algo: str | None = None) -> tuple[str, Any]:
    """(name, policy) from "stanley", "stanley:gain=2,kp=0.3" (kp, ki go to the PI speed
    loop, the rest to Stanley) or the path of a saved SB3 model (``algo`` or each of
    PPO, SAC, TD3, A2C, DDPG is tried)."""
    from vdsim_gym.controllers import stanley_pi

    name, _, params = spec.partition(":")
    if name == "stanley":
        p = _parse_params(params)
        pi = {k: p.pop(k) for k in ("kp", "ki") if k in p}
        try:  # unknown parameters fail now, not in a worker
            import inspect

            from vdsim_gym.controllers import PISpeed, Stanley

            inspect.signature(Stanley.__init__).bind(None, None, wheelbase=1, cg_to_front=1,
                                                     max_steer=1, **p)
            inspect.signature(PISpeed.__init__).bind(None, None, dt=1, **pi)
        except TypeError as exc:
            raise ValueError(f"controller {spec!r}: {exc}") from None
        return spec, functools.partial(stanley_pi, stanley=p or None, pi=pi or None)
    path = Path(spec)
    if not path.exists() and path.with_suffix(".zip").exists():
        path = path.with_suffix(".zip")
    if not path.exists():
        raise ValueError(f"controller {spec!r}: not a baseline (stanley[:key=value,...]) "
                         "and no such SB3 model file")
    import stable_baselines3 as sb3

    names = [algo.upper()] if algo else list(_SB3_ALGOS)
    errors = []
    for n in names:
        cls = getattr(sb3, n, None)
        if cls is None:
            raise ValueError(f"--algo {algo!r}: not an SB3 algorithm ({', '.join(_SB3_ALGOS)})")
        try:
            return path.stem, cls.load(path, device="cpu")
        except Exception as exc:  # noqa: BLE001  (try the next algorithm)
            errors.append(f"{n}: {type(exc).__name__}: {exc}")
    raise ValueError(f"could not load {path} as an SB3 model ({'; '.join(errors)}); "
                     "pass --algo")


def main(controllers: Sequence[str], env_id: str, delays: str, *, seeds: int = 64,
         overrun: str = "skip", num_envs: int = 64, backend: str = "local",
         address: str | None = None, out: str | Path = "sweep_out",
         env_kwargs: dict[str, Any] | None = None, algo: str | None = None,
         metric: str = "ey_rmse_m", make_plot: bool = True, progress: bool = True,
         echo: Any = print) -> dict[str, SweepResult]:
    """The ``vdsim-gym sweep`` command: sweeps each controller, writes sweep.csv,
    sweep_summary.csv and sweep.png into ``out``, prints the summary table."""
    latencies = parse_delays(delays)
    env_kwargs = dict(env_kwargs or {})
    loaded = [load_controller(c, algo) for c in controllers]
    names = [n for n, _ in loaded]
    if len(set(names)) != len(names):
        raise ValueError(f"controllers have the same name: {names}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    results = {}
    for name, pol in loaded:
        results[name] = sweep(pol, env_id, latencies=latencies, seeds=seeds,
                              num_envs=num_envs, backend=backend, address=address,
                              overrun=overrun, progress=progress, **env_kwargs)
    _write_csv(out / "sweep.csv", [{"controller": n, **asdict(r)}
                                   for n, res in results.items() for r in res.table])
    _write_csv(out / "sweep_summary.csv", [{"controller": n, **asdict(s)}
                                           for n, res in results.items() for s in res.summary])
    kw = ", ".join(f"{k}={v}" for k, v in env_kwargs.items())
    title = (f"{env_id}{f' ({kw})' if kw else ''}, {len(_check_seeds(seeds))} seeds, "
             f"overrun {overrun}")
    echo(f"Sweep: {title}")
    echo(summary_table(results))
    written = [out / "sweep.csv", out / "sweep_summary.csv"]
    if make_plot:
        written.append(plot(results, out / "sweep.png", metric=metric, title=title))
    wall = sum(r.meta["wall_time_s"] for r in results.values())
    echo(f"\n{sum(len(r.table) for r in results.values())} episodes in {wall:.1f} s; "
         "wrote " + ", ".join(str(p) for p in written))
    return results


__all__ = ["load_controller", "main", "parse_delays"]
