"""Static types: the compiled core's stub is fresh, and mypy passes over the package.

- ``vdsim_gym/_core.pyi`` equals the stub regenerated from the built ``vdsim_gym._core``
  (``python tools/gen_core_stubs.py``), so a changed binding cannot leave it stale.
- ``python -m mypy`` (pyproject's ``[tool.mypy]``: the package, ``check_untyped_defs``)
  reports no error.
- mypy does read the stub: a snippet that passes a str where the stub says float fails.

mypy keeps its cache in the repository's ``.mypy_cache`` (git-ignored): about 20 s
from cold on a 2-core machine, a few seconds warm.
"""

from __future__ import annotations

import difflib
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("mypy", reason="needs the test extra (mypy)")
pytest.importorskip("pybind11_stubgen", reason="needs the test extra (pybind11-stubgen)")

ROOT = Path(__file__).resolve().parents[1]
STUB = ROOT / "vdsim_gym" / "_core.pyi"
REGENERATE = "python tools/gen_core_stubs.py"
MYPY = [sys.executable, "-m", "mypy", "--no-color-output", "--no-error-summary"]


def _run(cmd: list[str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    # From the repository root: mypy finds vdsim_gym (and _core.pyi) in the working
    # directory and reads pyproject.toml's [tool.mypy].
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def test_core_stub_is_fresh(tmp_path):
    fresh = tmp_path / "_core.pyi"
    r = _run([sys.executable, str(ROOT / "tools" / "gen_core_stubs.py"), "--output", str(fresh)])
    assert r.returncode == 0, f"{REGENERATE} failed:\n{r.stdout}{r.stderr}"
    committed, new = STUB.read_text(encoding="utf-8"), fresh.read_text(encoding="utf-8")
    if committed != new:
        diff = list(difflib.unified_diff(committed.splitlines(), new.splitlines(),
                                         "vdsim_gym/_core.pyi (committed)",
                                         "from the built vdsim_gym._core", lineterm=""))
        shown = "\n".join(diff[:80]) + (f"\n... ({len(diff) - 80} more lines)"
                                        if len(diff) > 80 else "")
        pytest.fail(f"vdsim_gym/_core.pyi is stale against the built vdsim_gym._core: run "
                    f"`{REGENERATE}` (after rebuilding the extension) and commit the file.\n"
                    f"{shown}", pytrace=False)


def test_mypy_passes_over_the_package():
    r = _run(MYPY)
    if r.returncode != 0:
        pytest.fail(f"mypy over vdsim_gym (pyproject's [tool.mypy]) reported errors; "
                    f"`python -m mypy` from the repository root shows them:\n"
                    f"{r.stdout}{r.stderr}", pytrace=False)


def test_mypy_reads_the_core_stub(tmp_path):
    """Misuses of the bound classes are errors, so the stub is what mypy checks against."""
    snippet = tmp_path / "misuse.py"
    snippet.write_text(textwrap.dedent("""\
        from vdsim_gym import _core

        ok = _core.Command(steer=0.1, longitudinal=2)
        bad = _core.Command(steer="0.1")
        size: str = _core.STATE_SIZE
        names: tuple[int, ...] = _core.PATH_OBS_NAMES
    """), encoding="utf-8")
    # The package's options (and so its cache): the imported modules' own errors are
    # test_mypy_passes_over_the_package's business, only the snippet's count here. (Match
    # on the file name: mypy's cache may replay an unchanged file's errors under the path
    # of an earlier run.)
    r = _run([*MYPY, str(snippet)])
    out = r.stdout + r.stderr
    errors = [ln.split("misuse.py:", 1)[1] for ln in out.splitlines()
              if "misuse.py:" in ln and ": error:" in ln]
    assert r.returncode == 1, out
    assert len(errors) == 3, out
    assert errors[0].startswith("4:") and '"steer" to "Command"' in errors[0] \
        and '"str"' in errors[0], out
    assert errors[1].startswith("5:") and '"int"' in errors[1], out
    assert errors[2].startswith("6:") and "tuple[str, ...]" in errors[2], out
