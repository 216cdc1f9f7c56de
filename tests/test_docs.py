"""Every ```python block of README.md and docs/*.md runs as written.

One test per block, id ``<file>:<line of the opening fence>``. Each block runs in a fresh
namespace (blocks do not share names, so every block can be copied on its own and must
import what it uses), with the working directory a fresh ``tmp_path`` so files that
examples write land there. A block that raises fails its test with the file and line of
the block in the message (the code is compiled under the Markdown file's name and line
numbers, so tracebacks point into the Markdown).

A block can be marked by an HTML comment on the line right before its opening fence
(invisible on GitHub):

- ``<!-- doctest: skip (reason) -->``: deliberately partial; shows up as a skipped test
  with the reason. The reason is required.
- ``<!-- doctest: slow -->`` or ``<!-- doctest: slow (reason) -->``: correct but too slow
  for the default suite; runs under ``pytest -m slow``.
- ``<!-- doctest: ray -->``: starts a local Ray instance; runs under ``pytest -m ray``.
- ``<!-- doctest: torchrl -->``: needs the torchrl extra; runs under ``pytest -m torchrl``.

Any other ``doctest:`` comment is an error (the test of that block fails). Blocks fenced
``python`` (or ``py``, ``python3``) are run; others (bash, plain text) are not.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)```(?P<lang>[\w+-]*)\s*$")
MARKER = re.compile(r"^\s*<!--\s*doctest:\s*(?P<kind>\w+)\s*(?:\((?P<reason>.*)\))?\s*-->\s*$")
KINDS = ("skip", "slow", "ray", "torchrl")
PYTHON_LANGS = ("python", "py", "python3")  # fence info strings that are run


@dataclass(frozen=True)
class Block:
    path: Path  # the Markdown file
    line: int  # 1-based line of the opening fence
    code: str  # dedented source of the block
    kind: str | None  # None, or the marker's kind (may be unknown: reported by the test)
    reason: str | None

    @property
    def id(self) -> str:
        path = self.path.relative_to(ROOT) if self.path.is_relative_to(ROOT) else self.path
        return f"{path.as_posix()}:{self.line}"


def doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def collect_blocks(path: Path, text: str | None = None) -> list[Block]:
    """The ```python blocks of one Markdown file, with the marker above each, in order."""
    lines = (path.read_text(encoding="utf-8") if text is None else text).splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE_OPEN.match(lines[i])
        if not m:  # a closing fence never gets here: the block's scan consumes it
            i += 1
            continue
        indent, lang = m["indent"], m["lang"]
        end = i + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        if lang.lower() in PYTHON_LANGS:
            code = textwrap.dedent("\n".join(ln[len(indent):] if ln.startswith(indent) else ln
                                             for ln in lines[i + 1:end]))
            kind = reason = None
            prev = lines[i - 1] if i > 0 else ""
            mk = MARKER.match(prev)
            if mk:
                kind, reason = mk["kind"], mk["reason"]
            elif "doctest" in prev:
                kind, reason = "malformed", prev.strip()
            blocks.append(Block(path, i + 1, code, kind, reason))
        i = end + 1
    return blocks


def run_block(block: Block) -> None:
    """exec the block in a fresh namespace; AssertionError naming file:line if it raises.

    vdsim_gym is already imported in this process, so a block that uses a VDSim env id
    would run here even without importing vdsim_gym (which registers the ids) and then
    fail when copied: such a block must import vdsim_gym or use the "vdsim_gym:" prefix.
    """
    if (re.search(r"(?<!vdsim_gym:)VDSim-", block.code)
            and not re.search(r"^\s*(import|from) vdsim_gym\b", block.code, re.M)):
        raise AssertionError(f"{block.id}: python block uses a VDSim env id but does not "
                             "import vdsim_gym (which registers the ids)")
    # Pad so that line numbers in tracebacks are the Markdown file's.
    source = "\n" * block.line + block.code + "\n"
    code = compile(source, str(block.path), "exec")
    namespace = {"__name__": "__doc_block__"}
    try:
        exec(code, namespace)
    except Exception as exc:
        raise AssertionError(
            f"{block.id}: python block raised {type(exc).__name__}: {exc}") from exc


def _params() -> list:
    params = []
    for path in doc_files():
        for block in collect_blocks(path):
            marks = []
            if block.kind == "slow":
                marks.append(pytest.mark.slow)
            elif block.kind == "ray":  # Ray's own warnings, as in tests/eval/test_sweep.py
                marks += [pytest.mark.ray, pytest.mark.filterwarnings("ignore")]
            elif block.kind == "torchrl":  # TorchRL's own warnings
                marks += [pytest.mark.torchrl, pytest.mark.filterwarnings("ignore")]
            params.append(pytest.param(block, id=block.id, marks=marks))
    return params


BLOCKS = _params()


def test_collector_finds_blocks():
    assert len(BLOCKS) > 0
    assert {p.values[0].path.name for p in BLOCKS} >= {"README.md"}


@pytest.mark.parametrize("block", BLOCKS)
def test_doc_block_runs(block: Block, tmp_path, monkeypatch):
    if block.kind is not None and block.kind not in KINDS:
        pytest.fail(f"{block.id}: unknown or malformed doctest marker {block.reason!r}; "
                    f"use <!-- doctest: KIND (reason) --> with KIND in {KINDS}")
    if block.kind == "skip":
        if not block.reason:
            pytest.fail(f"{block.id}: a skipped block needs a reason: "
                        "<!-- doctest: skip (why) -->")
        pytest.skip(f"{block.id}: {block.reason}")
    monkeypatch.chdir(tmp_path)
    run_block(block)


# ---------------------------------------------------------------- the collector itself

SAMPLE = """\
Text.

```python
x = 1
```

```bash
echo not run
```

<!-- doctest: skip (needs a robot) -->
```python
robot.go()
```

<!-- doctest: slow -->
```python
y = 2
```

- a list item:

  ```python
  z = [
      3,
  ]
  ```

<!-- doctest: skipp (typo) -->
```python
w = 4
```
"""


def test_collector_parses_markers_and_lines(tmp_path):
    blocks = collect_blocks(tmp_path / "x.md", SAMPLE)
    assert [(b.line, b.kind, b.reason) for b in blocks] == [
        (3, None, None), (12, "skip", "needs a robot"), (17, "slow", None),
        (23, None, None), (30, "skipp", "typo")]
    assert blocks[0].code == "x = 1"
    assert blocks[3].code == "z = [\n    3,\n]"


def test_a_block_must_import_what_registers_the_ids(tmp_path):
    for code, ok in (('gym.make("VDSim-DLC-v0")', False),
                     ('import vdsim_gym\nx = "VDSim-DLC-v0"', True),
                     ('from vdsim_gym.eval import sweep\nx = "VDSim-DLC-v0"', True),
                     ('x = "vdsim_gym:VDSim-DLC-v0"', True)):
        block = Block(tmp_path / "x.md", 1, code, None, None)
        if ok:
            run_block(block)
        else:
            with pytest.raises(AssertionError, match="does not import vdsim_gym"):
                run_block(block)


def test_a_raising_block_fails_with_file_and_line(tmp_path):
    path = tmp_path / "x.md"
    path.write_text("para\n\n```python\na = 1\nb = undefined_name\n```\n", encoding="utf-8")
    (block,) = collect_blocks(path)
    with pytest.raises(AssertionError, match=r"x\.md:3: python block raised NameError") as info:
        run_block(block)
    tb = info.value.__cause__.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    assert tb.tb_frame.f_code.co_filename == str(path) and tb.tb_lineno == 5


# ------------------------------------------- reference docs against the two lab notebooks
#
# README.md and docs/*.md state what is true now: no dates, no "issue N" history. Every
# measurement with its date and command lives in one of the two lab notebooks, organised by
# subject: docs/BENCHMARKS.md (speed) and docs/RESULTS.md (controller and learning
# results). Other files point into them by a section's title.

NOTEBOOKS = ("BENCHMARKS.md", "RESULTS.md")
DATE = re.compile(r"(?<![\d-])\d{4}-[01]\d-[0-3]\d(?![\d-])")
ISSUE = re.compile(r"\bissues?\s+#?\d+|\(issues?\b", re.IGNORECASE)
# A date that is part of a fact rather than of this project's history, as (file, a phrase of
# its line holding the date). Keep it short: a measurement's date belongs in a notebook.
DATE_ALLOWED = (
    ("docs/COURSES.md", "third edition was published on 2025-11-25"),  # ISO 3888-2:2025
)


def reference_docs() -> list[Path]:
    """README.md, docs/*.md but the two lab notebooks, and the tutorials (notebooks/)."""
    return [*(p for p in doc_files() if p.name not in NOTEBOOKS),
            *sorted((ROOT / "notebooks").glob("*.ipynb"))]


def history_marks(name: str, text: str) -> list[str]:
    """'name:line: text' for every date (YYYY-MM-DD) or issue number in a reference doc."""
    allowed = [phrase for f, phrase in DATE_ALLOWED if f == name]
    marks = []
    for i, line in enumerate(text.splitlines(), 1):
        dated = DATE.search(line) and not any(phrase in line for phrase in allowed)
        if dated or ISSUE.search(line):
            marks.append(f"{name}:{i}: {line.strip()}")
    return marks


def issue_headings(text: str) -> list[str]:
    """The Markdown headings of a notebook that name an issue instead of a subject."""
    return [line for line in text.splitlines()
            if line.startswith("#") and re.search(r"\bissues?\b", line, re.IGNORECASE)]


def heading_titles(path: Path) -> list[str]:
    titles, fenced = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,6} ", line):
            titles.append(line.lstrip("#").strip())
    return titles


# "docs/BENCHMARKS.md, "Title"", "RESULTS.md ("Title"", with the title possibly wrapped
POINTER = re.compile(r"\b(BENCHMARKS|RESULTS)\.md(?:,\s*|\s*\(\s*|\s+)\"([^\"]+)\"")


def notebook_pointers(text: str) -> list[tuple[str, str]]:
    """(notebook file name, title) of each pointer into a notebook's section in text."""
    flat = re.sub(r"\s*\n\s*(?:#\s*)?", " ", text)  # joins wrapped lines and comments
    return [(m[1] + ".md", m[2]) for m in POINTER.finditer(flat)]


def pointer_sources() -> list[Path]:
    files = [*doc_files(), *sorted((ROOT / "tests").rglob("*.py")),
             *sorted((ROOT / "benchmarks").glob("*.py")),
             *sorted((ROOT / "vdsim_gym").rglob("*.py")),
             *sorted((ROOT / "notebooks").glob("*.ipynb"))]
    return [f for f in files if f.is_file() and f != Path(__file__).resolve()]


def source_text(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".ipynb":
        import json
        text = "\n".join("".join(cell.get("source", [])) for cell in json.loads(text)["cells"])
    return text


@pytest.mark.parametrize("path", reference_docs(), ids=lambda p: p.name)
def test_reference_docs_carry_no_dates_or_issue_numbers(path):
    marks = history_marks(path.relative_to(ROOT).as_posix(), source_text(path))
    assert not marks, ("a reference doc states what is true now; move dated measurements "
                       "(with their command) to docs/BENCHMARKS.md or docs/RESULTS.md and "
                       "point there:\n" + "\n".join(marks))


def test_history_marks_finds_dates_and_issue_numbers():
    text = ("The default since 2026-12-06 is etd3.\n"
            "Measured in issue 43 and (issue 30, first step).\n"
            "Since Issue #46 the rows are C++ state.\n"
            "ISO 3888-2:2011, published 2011; the issue's target; 0.0042-0.0050 m.\n"
            "a third edition was published on 2025-11-25 with updated figures\n")
    assert [m.split(":")[1] for m in history_marks("docs/X.md", text)] == ["1", "2", "3", "5"]
    assert [m.split(":")[1] for m in history_marks("docs/COURSES.md", text)] == ["1", "2", "3"]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_headings_name_subjects_not_issues(name):
    bad = issue_headings((ROOT / "docs" / name).read_text(encoding="utf-8"))
    assert not bad, f"docs/{name} is organised by subject; headings name an issue: {bad}"


def test_issue_headings_finds_them():
    text = ("# Benchmarks\n## Vector env and episode ends\n## Issue 46's targets\n"
            "### Construction (issue 30, first step)\ntext about issue 30\n")
    assert issue_headings(text) == ["## Issue 46's targets",
                                    "### Construction (issue 30, first step)"]


def test_pointers_into_the_notebooks_name_existing_sections():
    titles = {name: heading_titles(ROOT / "docs" / name) for name in NOTEBOOKS}
    missing = [f"{path.relative_to(ROOT).as_posix()}: {name}, {title!r}"
               for path in pointer_sources()
               for name, title in notebook_pointers(source_text(path))
               if not any(t.startswith(title) for t in titles[name])]
    assert not missing, ("pointers to a section no notebook heading starts with:\n"
                         + "\n".join(missing))


def test_notebook_pointers_parse_wrapped_titles():
    text = ('(docs/BENCHMARKS.md, "Integrators and\nstep-size control") and\n'
            '    # docs/RESULTS.md, "Dyno on the\n    # regulatory cycles"\n'
            'docs/BENCHMARKS.md "Frame cost"; docs/RESULTS.md has 64')
    assert notebook_pointers(text) == [("BENCHMARKS.md", "Integrators and step-size control"),
                                       ("RESULTS.md", "Dyno on the regulatory cycles"),
                                       ("BENCHMARKS.md", "Frame cost")]
