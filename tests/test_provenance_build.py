"""The git sha installed beside the module (vdsim_gym._build_info) is refreshed at every
build, not only at configure time: cmake/git_info.cmake (run by an always-built CMake
target) rewrites the generated module when HEAD or the dirty state changes, and leaves it
untouched otherwise. Checked on a scratch git repository."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "cmake" / "git_info.cmake"


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, text=True,
                          capture_output=True).stdout.strip()


def _run(cmake: str, repo: Path, out: Path) -> str:
    subprocess.run([cmake, f"-DSRC={repo}", f"-DOUT={out}", "-P", str(SCRIPT)], check=True,
                   capture_output=True, timeout=60)
    return out.read_text()


def test_git_info_follows_head_and_dirty_state(tmp_path):
    cmake, git = shutil.which("cmake"), shutil.which("git")
    if cmake is None or git is None or not SCRIPT.is_file():
        pytest.skip("needs cmake and git on PATH and the source tree's cmake/ folder")
    repo, out = tmp_path / "repo", tmp_path / "gen" / "_build_info.py"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "a.txt").write_text("1")
    _git(repo, "add", "a.txt")
    _git(repo, "commit", "-qm", "one")
    first = _run(cmake, repo, out)
    assert f'GIT_SHA = "{_git(repo, "rev-parse", "HEAD")}"' in first
    assert "GIT_DIRTY = 0" in first
    stamp = out.stat().st_mtime_ns
    os.utime(out, ns=(stamp - 10**9, stamp - 10**9))
    assert _run(cmake, repo, out) == first
    assert out.stat().st_mtime_ns == stamp - 10**9  # unchanged content: file not rewritten
    (repo / "a.txt").write_text("2")
    assert "GIT_DIRTY = 1" in _run(cmake, repo, out)
    _git(repo, "commit", "-qam", "two")
    second = _run(cmake, repo, out)
    assert f'GIT_SHA = "{_git(repo, "rev-parse", "HEAD")}"' in second and second != first
    assert "GIT_DIRTY = 0" in second


def test_git_info_outside_a_repository_is_unknown(tmp_path):
    cmake = shutil.which("cmake")
    if cmake is None or not SCRIPT.is_file():
        pytest.skip("needs cmake on PATH and the source tree's cmake/ folder")
    text = _run(cmake, tmp_path, tmp_path / "_build_info.py")
    assert 'GIT_SHA = "unknown"' in text and "GIT_DIRTY = -1" in text
