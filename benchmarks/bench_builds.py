"""Two builds of vdsim_gym side by side: ``vdsim-gym bench`` (or ``bench --vector``) run
by each build's interpreter in turn, interleaved in rounds, and each row's rate of the
second build divided by the first's, min / median / max over the rounds.

What a refactor uses to show it is no slower, side by side. Each build lives in its own
virtual environment; install the commit before the
change into one (``git worktree add /tmp/before <sha>`` and ``pip install /tmp/before``)
and the working tree into the other:

    python benchmarks/bench_builds.py --before /path/venv_old/bin/python \\
        --after /path/venv/bin/python --rounds 5 [--vector] [-- more bench options]

The figures are the bench's own (the single env rows in CPU time, the vector rows in
wall time with the machine's threads), so a ratio above 1 means the second build runs
that row faster. Rows whose names differ between the builds are skipped.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
from collections import defaultdict

# "case  us/call  calls/s  substeps/s" (single env) and
# "case  N  threads  agent steps/s  substeps/s" (vector): the rate is the first column
# that counts per second.
_SINGLE = re.compile(r"^(\S.*?|\s+\S.*?)\s{2,}([\d.]+)\s+(\d+)\s+(\d+)\s*$")
_VECTOR = re.compile(r"^(\S.*?|\s+\S.*?)\s+(\d+)\s+(\d+|-)\s+(\d+)\s+(\d+|-)\s*$")


def rates(text: str, vector: bool) -> dict[str, float]:
    """Row name -> calls (or agent steps) per second, from one bench output."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        if vector:
            m = _VECTOR.match(line)
            if m:
                out[f"{m.group(1).rstrip()} N={m.group(2)} threads={m.group(3)}"] = \
                    float(m.group(4))
        else:
            m = _SINGLE.match(line)
            if m:
                out[m.group(1).rstrip()] = float(m.group(3))
    return out


def run(python: str, args: list[str]) -> str:
    proc = subprocess.run([python, "-m", "vdsim_gym.cli", "bench", *args], text=True,
                          capture_output=True, timeout=1800)
    if proc.returncode != 0:
        raise SystemExit(f"{python} bench failed ({proc.returncode}): "
                         f"{proc.stderr.strip().splitlines()[-1:]}")
    return proc.stdout


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--before", required=True, help="the first build's python")
    p.add_argument("--after", required=True, help="the second build's python")
    p.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    p.add_argument("--vector", action="store_true", help="bench --vector instead")
    p.add_argument("rest", nargs="*", help="further bench options (after --)")
    a = p.parse_args(argv)
    if a.rounds < 1:
        p.error("--rounds must be >= 1")
    args = (["--vector", "--no-ppo"] if a.vector else ["--no-highway", "--no-sac"]) + a.rest
    ratios: dict[str, list[float]] = defaultdict(list)
    order: list[str] = []
    for r in range(a.rounds):
        # alternate which build goes first, so a drift in load favours neither
        pair = (a.before, a.after) if r % 2 == 0 else (a.after, a.before)
        got = {py: rates(run(py, args), a.vector) for py in pair}
        before, after = got[a.before], got[a.after]
        for name, rate in after.items():
            if name in before and before[name] > 0:
                if name not in ratios:
                    order.append(name)
                ratios[name].append(rate / before[name])
        print(f"[round {r + 1}/{a.rounds}] {len(before)} / {len(after)} rows",
              file=sys.stderr)
    width = max((len(n) for n in order), default=10)
    print(f"{'row':<{width}}  after / before rate: median (min - max) over {a.rounds} rounds")
    for name in order:
        v = ratios[name]
        print(f"{name:<{width}}  {statistics.median(v):.3f} ({min(v):.3f} - {max(v):.3f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
