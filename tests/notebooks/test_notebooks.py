"""The notebooks (notebooks/*.ipynb) run as written with small settings, and are stored
with their outputs stripped.

Every ``.ipynb`` in notebooks/ is picked up (one test id per file name), so a new
notebook is tested by adding it. The convention each one follows:

- Its first code cell is the parameter cell, tagged ``parameters`` (papermill's tag, so
  papermill can inject other values after it): the full settings, and the small ones it
  picks when the environment variable ``VDSIM_NB_QUICK`` is ``1``, e.g.
  ``SEEDS = 4 if QUICK else 64``.
- It writes what it makes (run folders, images) under ``out/`` relative to its working
  directory (notebooks/out/ when opened from notebooks/, git-ignored).
- It is committed without outputs and execution counts (notebooks/README.md says how to
  strip them).

``test_notebook_runs`` executes a notebook with nbclient on a kernel of the interpreter
running pytest (a kernel spec written for the session and put first on JUPYTER_PATH,
so a ``python3`` kernel installed for the user is never picked), with
``VDSIM_NB_QUICK=1``, in a fresh temporary directory; a cell that raises fails the test
with the notebook, the cell and its traceback.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
QUICK_ENV = "VDSIM_NB_QUICK"
KERNEL_NAME = "vdsim-gym-notebook-tests"
CELL_TIMEOUT_S = 600  # per cell; the quick settings take seconds
STRIP_HINT = ("strip it: jupyter nbconvert --clear-output --inplace notebooks/*.ipynb, or "
              "nbstripout notebooks/*.ipynb (notebooks/README.md)")


def _read(path: Path):
    return nbformat.read(path, as_version=4)


def _parameter_cells(nb) -> list[int]:
    return [i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", [])]


@pytest.fixture(scope="session")
def jupyter_path(tmp_path_factory) -> Path:
    """A Jupyter data folder with one kernel spec, KERNEL_NAME: ipykernel on this
    interpreter (put first on JUPYTER_PATH, so it is found before any user's kernels)."""
    root = tmp_path_factory.mktemp("jupyter")
    spec = root / "kernels" / KERNEL_NAME
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "vdsim_gym tests", "language": "python"}))
    return root


def test_notebooks_are_found():
    assert NOTEBOOKS, f"no notebooks in {NOTEBOOK_DIR}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_is_stored_clean(path: Path):
    """No outputs and no execution counts: a notebook committed after running it fails
    here (outputs are large binary diffs and go stale with every change)."""
    nb = _read(path)
    nbformat.validate(nb)
    dirty = [f"cell {i}" + (" has outputs" if c.outputs else "") +
             (f" has execution count {c.execution_count}" if c.execution_count is not None
              else "")
             for i, c in enumerate(nb.cells)
             if c.cell_type == "code" and (c.outputs or c.execution_count is not None)]
    assert not dirty, f"{path.name} is stored with outputs ({'; '.join(dirty)}); {STRIP_HINT}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_has_a_parameter_cell(path: Path):
    """The first code cell is the one parameter cell, tagged "parameters", and reads
    VDSIM_NB_QUICK (what test_notebook_runs sets to pick the small settings)."""
    nb = _read(path)
    tagged = _parameter_cells(nb)
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    assert len(tagged) == 1, (f"{path.name}: {len(tagged)} cells tagged 'parameters'; tag "
                              "exactly one, the first code cell")
    assert code and tagged[0] == code[0], (f"{path.name}: the parameter cell must be the "
                                           "first code cell")
    assert QUICK_ENV in nb.cells[tagged[0]].source, (
        f"{path.name}: the parameter cell must pick its small settings from {QUICK_ENV}")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path: Path, tmp_path, jupyter_path, monkeypatch):
    monkeypatch.setenv("JUPYTER_PATH", str(jupyter_path))
    monkeypatch.setenv(QUICK_ENV, "1")
    # The kernel picks its inline backend itself (ipykernel sets MPLBACKEND when unset):
    # run the notebooks with the backend a user's Jupyter gives them.
    monkeypatch.delenv("MPLBACKEND", raising=False)
    monkeypatch.setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # the debugger's notice
    nb = _read(path)
    client = nbclient.NotebookClient(nb, kernel_name=KERNEL_NAME, timeout=CELL_TIMEOUT_S,
                                     resources={"metadata": {"path": str(tmp_path)}})
    t0 = time.perf_counter()
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as exc:
        pytest.fail(f"{path.name}: a cell raised (run with {QUICK_ENV}=1 in {tmp_path}):\n{exc}",
                    pytrace=False)
    wall = time.perf_counter() - t0
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if o.output_type == "error"]
    assert not errors
    print(f"{path.name}: {wall:.1f} s")
