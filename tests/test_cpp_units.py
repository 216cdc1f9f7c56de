"""C++ unit tests of the core's headers, compiled and run from pytest (issue 28).

Each ``tests/cpp/test_*.cpp`` is a small C++17 program over the headers of
``csrc/vdsim`` with the check macros of ``tests/cpp/check.hpp`` (no test framework). It
prints ``<name>: N checks passed, M failed`` and exits 0 only when nothing failed; the
test below also asserts N against a minimum, so a body that silently stops checking fails.

The compiler is ``$CXX``, else sysconfig's ``CXX``, else the first of c++, g++, clang++
on PATH. Binaries are cached in the pytest cache, keyed by the compiler, the flags and
the contents of the source and every header it can include, so a rerun with nothing
changed only runs them.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CPP_DIR = ROOT / "tests" / "cpp"
CSRC = ROOT / "csrc"
FLAGS = ["-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror"]

# Source -> the fewest checks it must report as passed.
MIN_CHECKS = {
    "test_schedule.cpp": 125,
    "test_async_timeline.cpp": 177,
    "test_delay_lines.cpp": 137,
    "test_fminmax.cpp": 15,
    "test_tire_peak.cpp": 6,
    "test_libm_powers.cpp": 37,
    "test_archive.cpp": 530,
    "test_tanh_exp.cpp": 9,
}


def find_compiler() -> tuple[list[str] | None, str]:
    """The compiler command (a list, as it may carry flags) and a note on what was tried."""
    tried = []
    for origin, spec in (("CXX", os.environ.get("CXX")),
                         ("sysconfig CXX", sysconfig.get_config_var("CXX"))):
        if spec:
            cmd = shlex.split(spec)
            if cmd and shutil.which(cmd[0]):
                return cmd, f"{origin}={spec!r}"
            tried.append(f"{origin}={spec!r} (not found)")
    for name in ("c++", "g++", "clang++"):
        path = shutil.which(name)
        if path:
            return [path], name
        tried.append(name)
    return None, ", ".join(tried)


COMPILER, COMPILER_NOTE = find_compiler()


def _key(compiler: list[str], source: Path) -> str:
    h = hashlib.sha256()
    version = subprocess.run([*compiler, "--version"], capture_output=True, text=True,
                             timeout=60).stdout
    h.update("\0".join([*compiler, version, *FLAGS]).encode())
    # The source and everything it could include: its directory's headers and the core's.
    for path in [source, *sorted(CPP_DIR.glob("*.hpp")), *sorted(CSRC.rglob("*.hpp"))]:
        h.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:20]


def _binary(source: Path, tmp_path: Path, cache) -> Path:
    """The compiled test program, from the cache when the inputs are unchanged."""
    key = _key(COMPILER, source)
    cache_dir = Path(cache.mkdir("vdsim_cpp_units")) if cache is not None else None
    cached = cache_dir / f"{source.stem}-{key}" if cache_dir is not None else None
    if cached is not None and cached.exists():
        return cached
    exe = tmp_path / source.stem
    cmd = [*COMPILER, *FLAGS, "-I", str(CSRC), str(source), "-o", str(exe)]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, (f"compiling {source.name} failed:\n{shlex.join(cmd)}\n"
                                 f"{res.stdout}{res.stderr}")
    if cached is None:
        return exe
    for old in cache_dir.glob(f"{source.stem}-*"):  # older builds of this source
        old.unlink(missing_ok=True)
    tmp = cached.with_name(cached.name + f".tmp{os.getpid()}")
    shutil.copy2(exe, tmp)
    os.replace(tmp, cached)  # atomic: a parallel run never sees half a binary
    return cached


def test_every_source_is_listed():
    sources = sorted(p.name for p in CPP_DIR.glob("*.cpp"))
    assert sources == sorted(MIN_CHECKS), "add each tests/cpp source to MIN_CHECKS"


@pytest.mark.skipif(COMPILER is None, reason=f"no C++ compiler found (tried {COMPILER_NOTE}); "
                    "building vdsim_gym needs one, set CXX")
@pytest.mark.parametrize("name", sorted(MIN_CHECKS))
def test_cpp_unit(name, tmp_path, request):
    exe = _binary(CPP_DIR / name, tmp_path, getattr(request.config, "cache", None))
    res = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    out = res.stdout + res.stderr
    assert res.returncode == 0, f"{name} exited with {res.returncode}:\n{out}"
    m = re.search(r"(\d+) checks passed, (\d+) failed", out)
    assert m, f"{name} printed no summary line:\n{out}"
    passed, failed = int(m.group(1)), int(m.group(2))
    assert failed == 0, f"{name}:\n{out}"
    assert passed >= MIN_CHECKS[name], (
        f"{name} passed {passed} checks, expected at least {MIN_CHECKS[name]} "
        f"(a test body stopped checking?):\n{out}")
