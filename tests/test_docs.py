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
