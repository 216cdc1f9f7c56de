"""The delay grammar of every command line: ``parse_delays("0,5,10ms")`` reads the delay
lists and latency specs (``vdsim-gym sweep --delays``, ``agents/train.py --latency``)
into latency models."""

from __future__ import annotations

import math

from vdsim_gym.config.latency import LatencyModel
from vdsim_gym.errors import ConfigError

_UNITS = {"ms": 1e-3, "s": 1.0}


def _split_unit(token: str) -> tuple[str, str | None]:
    for unit in ("ms", "s"):  # "ms" first: "10ms" ends in "s" too
        if token.endswith(unit):
            return token[: -len(unit)].strip(), unit
    return token, None


_FORMS = ("a number with ms or s (10ms, or fixed:10ms), uniform:LO-HI (or uniform:LO:HI), "
          "normal:MU,SD (or normal:MU:SD, normal:MU+-SD), empirical:FILE.csv[:COLUMN] or none")


def _number(text: str, item: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ConfigError(f"delay item {item!r} is not a number; items are {_FORMS}, "
                          "e.g. 0,5,10,20ms") from None
    if not math.isfinite(value):
        raise ConfigError(f"delay item {item!r}: {text!r} is not finite; give a delay in "
                          "ms or s, e.g. 10ms")
    if value < 0:
        raise ConfigError(f"delay item {item!r}: a delay cannot be negative; give 0 or "
                          "more, e.g. 0,5,10ms")
    return value


def parse_delays(text: str) -> list[LatencyModel | None]:
    """Latency models from a list like "0,5,10,20,40ms".

    Items: a number (fixed delay; also "fixed:X"), "uniform:LO-HI" (or "uniform:LO:HI", as
    agents/train.py's --latency writes it), "normal:MU,SD" (or "normal:MU:SD",
    "normal:MU+-SD"), "empirical:FILE.csv" or "empirical:FILE.csv:COLUMN" (recorded delays
    in seconds, column ``c_k`` by default: ``LatencyModel.empirical``), "none" (no
    latency); random models take an optional "@SEED" (default 0). One grammar for every
    command line (vdsim-gym sweep, agents/compare.py, agents/train.py --latency). Units
    ms or s; an item without one takes the unit of the next item that has one, else of the
    last ("0,5,10ms" is 0, 5 and 10 ms).
    """
    if not isinstance(text, str) or not text.strip():
        raise ConfigError("--delays is empty; e.g. --delays 0,5,10,20,40ms")
    raw = [t.strip() for t in text.split(",")]
    tokens: list[str] = []
    i = 0
    while i < len(raw):
        tok = raw[i]
        if tok.startswith("normal:") and "+-" not in tok and ":" not in tok[7:] \
                and i + 1 < len(raw):
            tok, i = f"{tok},{raw[i + 1]}", i + 1  # normal:MU,SD spans a comma
        tokens.append(tok)
        i += 1
    parsed: list[tuple[str, str, str | None, int]] = []  # (kind, body, unit, seed)
    for tok in tokens:
        if not tok:
            raise ConfigError(f"--delays {text!r} has an empty item")
        body, seed = tok, 0
        if "@" in body:
            body, seed_text = body.rsplit("@", 1)
            try:
                seed = int(seed_text)
            except ValueError:
                raise ConfigError(f"delay item {tok!r}: seed {seed_text!r} is not an "
                                  "integer") from None
        kind, _, rest = body.partition(":") if ":" in body else ("fixed", "", body)
        if kind == "empirical":  # a CSV of delays in seconds: no unit of its own
            parsed.append(("empirical", rest.strip(), None, seed))
            continue
        rest, unit = _split_unit(rest.strip())
        if kind not in ("fixed", "uniform", "normal") and body != "none":
            raise ConfigError(f"delay item {tok!r}: unknown kind {kind!r}; items are {_FORMS}")
        parsed.append(("none" if body == "none" else kind, rest, unit, seed))
    units = [u for _, _, u, _ in parsed]
    if not any(u for k, _, u, _ in parsed if k != "none") and \
            any(k not in ("none", "empirical") for k, *_ in parsed):
        raise ConfigError(f"{text!r} has no unit: end it with ms or s (e.g. 20ms or "
                          "0,5,10ms)")
    out: list[LatencyModel | None] = []
    for j, (kind, body, unit, seed) in enumerate(parsed):
        if kind == "none":
            out.append(None)
            continue
        if kind == "empirical":
            path, _, column = body.rpartition(":") if body.count(":") and \
                not body.endswith(".csv") else (body, "", "")
            out.append(LatencyModel.empirical(path or body, seed, column=column or "c_k"))
            continue
        unit = unit or next((u for u in units[j:] if u), None) or \
            next(u for u in reversed(units) if u)
        try:
            out.append(_model(kind, body, _UNITS[unit], seed, tokens[j]))
        except ValueError as exc:
            msg = str(exc)
            raise ConfigError(msg if msg.startswith("delay item") else
                              f"delay item {tokens[j]!r}: {msg}") from None
    return out


def _model(kind: str, body: str, scale: float, seed: int, item: str) -> LatencyModel:
    """One delay item's model; ``body`` without its unit, ``scale`` the unit in s."""
    if kind == "fixed":
        return LatencyModel.fixed(_number(body, item) * scale)
    if kind == "uniform":
        lo, sep, hi = body.partition("-") if "-" in body else body.partition(":")
        if not sep:
            raise ConfigError(f"delay item {item!r}: write uniform:LO-HI or uniform:LO:HI")
        return LatencyModel.uniform(_number(lo, item) * scale, _number(hi, item) * scale,
                                    seed=seed)
    mu, sep, sd = (body.partition("+-") if "+-" in body else body.partition(",")
                   if "," in body else body.partition(":"))
    if not sep:
        raise ConfigError(f"delay item {item!r}: write normal:MU,SD or normal:MU:SD")
    return LatencyModel.normal(_number(mu, item) * scale, _number(sd, item) * scale,
                               seed=seed)
