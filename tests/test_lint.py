"""Lint: ``ruff check`` over the repository (pyproject's ``[tool.ruff]``: pyflakes,
pycodestyle, isort, pyupgrade, bugbear) reports nothing.

Run it yourself with ``ruff check .`` (``ruff check --fix .`` sorts imports); the version
is pinned in the test extra, as another version may report other rules.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ruff", reason="needs the test extra (ruff)")

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_reports_nothing():
    r = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache",
                        "--output-format", "concise", "."],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"ruff check . found:\n{r.stdout}{r.stderr}"


def test_ruff_sees_a_fault(tmp_path):
    """The check can fail: an unused import in a file under the same configuration."""
    bad = tmp_path / "bad.py"
    bad.write_text("import os\n")
    r = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache",
                        "--config", str(ROOT / "pyproject.toml"), str(bad)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and "F401" in r.stdout
