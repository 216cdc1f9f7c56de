"""The package's imports run down its layers and form no cycle (docs/ARCHITECTURE.md,
"Layers"; issue 28).

The layer table is written once, in docs/ARCHITECTURE.md; this test reads it. Every
module under vdsim_gym/ is parsed with ``ast`` (never imported) and every ``import`` and
``from ... import`` statement in it counts, wherever it stands: at module level, inside
a function or a method, under ``if TYPE_CHECKING:``, inside ``try``. A function-level
import is a dependency as real as a module-level one (it runs the first time the
function does, and a cycle through it is the same tangle, only deferred), so both checks
treat them alike. Relative imports are resolved against the importing module's package;
``from pkg import name`` is an import of the module ``pkg.name`` when that is a module,
else of ``pkg``. Imports of other distributions are ignored; so are dynamic ones
(``importlib.import_module``, Gymnasium's ``entry_point`` strings), which ``ast`` cannot
see.

(a) No cycle: the graph of those imports, module to module, has no strongly connected
component of more than one module. Python's implicit import of a module's parent
packages is not an edge here: a package's ``__init__`` importing its own submodules would
make every package a cycle.

(b) No import up: an importing module's row in the table is at or above the row of
every module it imports, and of that module's parent packages below the root (importing
``vdsim_gym.eval.x`` runs ``vdsim_gym/eval/__init__.py`` first, so it is an import of
``vdsim_gym.eval`` as well). The root package ``vdsim_gym`` is the front door, the top
row, and imports nothing would see through it except by ``import vdsim_gym``.

(c) Every module is in exactly one row, so a new module has to be placed.

(d) Each folder is one layer: a row names whole packages (``x.*``) and top-level modules,
never a module inside a package, so a package cannot straddle rows.

Imports still waiting for their file's owner are listed in ``PENDING`` with the reason;
the test fails when one of them is gone (so the list only shrinks) or when any other
violation appears. The checks run on a small synthetic package first, to show they fail.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "vdsim_gym"
# modules the build makes (no .py file in the tree, but importable names): the extension
# first (private_core_above checks it), then the generated git info
COMPILED = ("_core", "_build_info")

# (importer, imported) pairs that run up a layer today in files another change owns;
# each must still occur (remove it here when it is fixed).
PENDING: dict[tuple[str, str], str] = {}


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    line: int
    in_function: bool


# ------------------------------------------------------------------ reading

def read_layers(markdown: str) -> list[tuple[str, list[str]]]:
    """(layer, module patterns) from the "## Layers" table, top row first."""
    m = re.search(r"^## Layers\n(.*?)(?=^## |\Z)", markdown, re.S | re.M)
    assert m, "docs/ARCHITECTURE.md has no '## Layers' section"
    rows = []
    for line in m.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) != 2 or set(cells[0]) <= {"-"} \
                or cells[0] == "layer":
            continue
        names = re.findall(r"`([\w.*]+)`", _outside_parens(cells[1]))
        assert names, f"layer {cells[0]!r} lists no module"
        rows.append((cells[0], names))
    assert rows, "the Layers section has no table"
    return rows


def _outside_parens(text: str) -> str:
    """``text`` without its parenthesised remarks (they may name modules in passing)."""
    out, depth = [], 0
    for ch in text:
        depth += ch == "("
        if depth == 0:
            out.append(ch)
        depth -= ch == ")" and depth > 0
    return "".join(out)


def find_modules(package_dir: Path, package: str) -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (file, is a package), for every .py file under the package."""
    mods = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = [package, *path.relative_to(package_dir).with_suffix("").parts]
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        mods[".".join(parts)] = (path, is_pkg)
    return mods


def read_imports(mods: Mapping[str, tuple[Path, bool]], package: str,
                 compiled: Iterable[str] = ()) -> list[Import]:
    """Every import statement of every module that names a module of the package."""
    known = set(mods) | {f"{package}.{c}" for c in compiled}

    def module_of(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    out: dict[tuple[str, str, int], Import] = {}
    for mod, (path, is_pkg) in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        here = mod if is_pkg else mod.rpartition(".")[0]
        for node, in_function in _walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here.split(".")
                    base = base[: len(base) - (node.level - 1)]
                    assert base, f"{path}:{node.lineno}: relative import above the package"
                    src = ".".join(base + ([node.module] if node.module else []))
                else:
                    src = node.module or ""
                targets = [f"{src}.{a.name}" if f"{src}.{a.name}" in known else src
                           for a in node.names]
            for t in targets:
                if t == package or t.startswith(package + "."):
                    target = module_of(t)
                    if target is not None and target != mod:
                        out.setdefault((mod, target, node.lineno),
                                       Import(mod, target, node.lineno, in_function))
    return list(out.values())


def _walk(tree: ast.AST) -> Iterable[tuple[ast.AST, bool]]:
    """Every node with whether it sits inside a function."""
    stack = [(tree, False)]
    while stack:
        node, in_fn = stack.pop()
        yield node, in_fn
        inner = in_fn or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        stack.extend((child, inner) for child in ast.iter_child_nodes(node))


# ------------------------------------------------------------------ checking

def assign_layers(mods: Iterable[str], layers: Sequence[tuple[str, list[str]]],
                  package: str) -> tuple[dict[str, int], list[str]]:
    """Module -> row index (0 = top), and the problems: modules in no row or in two."""
    rank: dict[str, int] = {}
    problems = []
    for mod in sorted(mods):
        rel = mod[len(package) + 1:] if mod != package else package
        rows = [i for i, (_, pats) in enumerate(layers)
                if any(rel == p or (p.endswith(".*") and (rel == p[:-2]
                                                          or rel.startswith(p[:-1])))
                       for p in pats)]
        if not rows:
            problems.append(f"{mod} is in no layer: add it to the Layers table of "
                            "docs/ARCHITECTURE.md")
        elif len(rows) > 1:
            problems.append(f"{mod} is in {len(rows)} layers: "
                            f"{', '.join(layers[i][0] for i in rows)}")
        else:
            rank[mod] = rows[0]
    return rank, problems


def cycles(imports: Iterable[Import]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    graph: dict[str, set[str]] = {}
    for imp in imports:
        graph.setdefault(imp.importer, set()).add(imp.imported)
        graph.setdefault(imp.imported, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        found.append(sorted(comp))
    return sorted(found)


def upward(imports: Iterable[Import], rank: Mapping[str, int],
           layers: Sequence[tuple[str, list[str]]], package: str
           ) -> dict[tuple[str, str], str]:
    """(importer, imported) -> description, for every import that runs up a row; an
    imported module's parent packages (below the root) count as imported too."""
    out = {}
    for imp in imports:
        parts = imp.imported.split(".")
        targets = [imp.imported] + [".".join(parts[:i]) for i in range(len(parts) - 1, 1, -1)]
        for target in targets:
            if target != imp.imported and imp.importer.startswith(target + "."):
                continue  # the importer's own package: Python has run it already
            a, b = rank.get(imp.importer), rank.get(target)
            if a is not None and b is not None and b < a:
                how = "function-level" if imp.in_function else "module-level"
                via = "" if target == imp.imported else f" (parent of {imp.imported})"
                out.setdefault((imp.importer, target),
                               f"{imp.importer} ({layers[a][0]}) imports {target}{via} "
                               f"({layers[b][0]}): line {imp.line}, {how}")
    return out


def check(package_dir: Path, package: str, layers: Sequence[tuple[str, list[str]]],
          compiled: Iterable[str] = (), pending: Mapping[tuple[str, str], str] = {}
          ) -> list[str]:
    """Every problem found, as sentences; empty when the package is layered."""
    mods = find_modules(package_dir, package)
    imports = read_imports(mods, package, compiled)
    rank, problems = assign_layers([*mods, *(f"{package}.{c}" for c in compiled)], layers,
                                   package)
    for comp in cycles(imports):
        edges = sorted(f"{i.importer} -> {i.imported} (line {i.line}"
                       f"{', function-level' if i.in_function else ''})"
                       for i in imports if i.importer in comp and i.imported in comp)
        problems.append(f"import cycle among {', '.join(comp)}: " + "; ".join(edges))
    problems += [f"layer {name!r} names {p}, a module inside the package "
                 f"{p.rpartition('.')[0]}: each folder is one layer, list "
                 f"`{p.split('.')[0]}.*` (or move the module)"
                 for name, pats in layers for p in pats
                 if "." in p and not (p.endswith(".*") and p.count(".") == 1)]
    ups = upward(imports, rank, layers, package)
    problems += [msg for key, msg in sorted(ups.items()) if key not in pending]
    problems += [f"PENDING lists {a} -> {b}, which no longer runs up a layer: remove it"
                 for a, b in pending if (a, b) not in ups]
    return problems


# ------------------------------------------------------------------ tests

def _layers() -> list[tuple[str, list[str]]]:
    return read_layers((ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8"))


def test_the_layer_table_reads():
    layers = _layers()
    names = [n for n, _ in layers]
    assert names[0] == "package" and names[-1] == "base"
    assert len(set(names)) == len(names)
    pats = [p for _, ps in layers for p in ps]
    assert len(set(pats)) == len(pats), "a module pattern is listed twice"


def test_the_package_has_no_cycle_and_no_upward_import():
    problems = check(ROOT / PACKAGE, PACKAGE, _layers(), COMPILED, PENDING)
    assert not problems, "\n".join(problems)


def _package(tmp_path: Path, files: Mapping[str, str]) -> Path:
    for rel, text in files.items():
        path = tmp_path / "pkg" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path / "pkg"


LAYERS = [("top", ["pkg", "app.*"]), ("mid", ["mid", "sub.*"]), ("low", ["low", "_ext"])]


def test_a_clean_package_passes(tmp_path):
    pkg = _package(tmp_path, {
        "__init__.py": "from pkg import app\n",
        "app/__init__.py": "from .run import go\n",
        "app/run.py": "from ..mid import f\nfrom pkg import _ext\n"
                      "def go():\n    from pkg.sub import helper\n",
        "mid.py": "import os\nfrom pkg.low import g\ndef f():\n    import numpy\n",
        "sub/__init__.py": "", "sub/helper.py": "from pkg import low\n",
        "low.py": "",
    })
    assert check(pkg, "pkg", LAYERS, compiled=("_ext",)) == []


def test_a_function_level_cycle_and_upward_imports_fail(tmp_path):
    pkg = _package(tmp_path, {
        "__init__.py": "",
        "app/__init__.py": "", "app/run.py": "from pkg import mid\n",
        "mid.py": "def f():\n    from pkg.app import run\n",  # up, and a cycle with run
        "low.py": "from . import mid\n",  # up, relative
        "sub/__init__.py": "from pkg.app.run import x\n",
        "sub/helper.py": "",
        "orphan.py": "",
    })
    problems = check(pkg, "pkg", LAYERS)
    text = "\n".join(problems)
    assert "pkg.orphan is in no layer" in text
    assert "import cycle among pkg.app.run, pkg.mid" in text
    assert "pkg.mid (mid) imports pkg.app.run (top): line 2, function-level" in text
    assert "pkg.mid (mid) imports pkg.app (parent of pkg.app.run) (top)" in text
    assert "pkg.low (low) imports pkg.mid (mid): line 1, module-level" in text
    assert "pkg.sub (mid) imports pkg.app.run (top)" in text
    assert len(problems) == 7, text


def test_a_package_split_across_rows_fails(tmp_path):
    pkg = _package(tmp_path, {"__init__.py": "", "sub/__init__.py": "", "sub/a.py": "",
                              "sub/b.py": "", "low.py": ""})
    layers = [("top", ["pkg", "sub.a"]), ("low", ["sub", "sub.b", "low"])]
    problems = check(pkg, "pkg", layers)
    assert [p for p in problems if "each folder is one layer" in p] == [
        "layer 'top' names sub.a, a module inside the package sub: each folder is one "
        "layer, list `sub.*` (or move the module)",
        "layer 'low' names sub.b, a module inside the package sub: each folder is one "
        "layer, list `sub.*` (or move the module)"], problems
    assert check(pkg, "pkg", [("top", ["pkg", "sub.*"]), ("low", ["low"])]) == []


def test_pending_entries_must_still_occur(tmp_path):
    pkg = _package(tmp_path, {"__init__.py": "", "mid.py": "", "low.py": "import pkg.mid\n"})
    layers = [("top", ["pkg"]), ("mid", ["mid"]), ("low", ["low"])]
    assert check(pkg, "pkg", layers, pending={("pkg.low", "pkg.mid"): "later"}) == []
    problems = check(pkg, "pkg", layers, pending={("pkg.mid", "pkg.low"): "stale"})
    assert any("pkg.low (low) imports pkg.mid" in p for p in problems)
    assert any("no longer runs up a layer" in p for p in problems)


@pytest.mark.parametrize("text, expect", [
    ("## Layers\n\n| layer | modules |\n|---|---|\n| a | `x`, `y.*` (see `z`) |\n"
     "| b | `w` |\n\n## Next\n| c | `q` |\n", [("a", ["x", "y.*"]), ("b", ["w"])]),
])
def test_read_layers(text, expect):
    assert read_layers(text) == expect


def private_core_above(package_dir: Path, package: str, layers: Sequence[tuple[str, list[str]]],
                       compiled: Sequence[str], floor: str) -> list[str]:
    """Modules in a row above ``floor`` (the front door excepted) that import the compiled
    module ``compiled[0]`` itself."""
    mods = find_modules(package_dir, package)
    rank, _ = assign_layers([*mods, *(f"{package}.{c}" for c in compiled)], layers, package)
    row = next(i for i, (name, _) in enumerate(layers) if name == floor)
    core = f"{package}.{compiled[0]}"
    return sorted(f"{i.importer} (line {i.line})" for i in read_imports(mods, package, compiled)
                  if i.imported == core and i.importer != package
                  and rank.get(i.importer, row) < row)


def test_no_module_above_the_envs_imports_the_private_core():
    """The layers above the envs (controllers, policies, eval, training, cli) reach the
    C++ core through ``CoreEnv.core`` / ``CoreEnv.rows`` and the helpers of the layers
    below (plant, latency, timing), never through ``vdsim_gym._core`` (issue 28)."""
    assert private_core_above(ROOT / PACKAGE, PACKAGE, _layers(), COMPILED, "envs") == []


def test_the_private_core_check_finds_an_import_from_above(tmp_path):
    pkg = _package(tmp_path, {
        "__init__.py": "from pkg import _ext\n",  # the front door may
        "app/__init__.py": "", "app/run.py": "def f():\n    from pkg import _ext\n",
        "mid.py": "from pkg import _ext\n", "low.py": "import pkg._ext\n",
    })
    layers = [("top", ["pkg", "app.*"]), ("envs", ["mid"]), ("low", ["low", "_ext"])]
    assert private_core_above(pkg, "pkg", layers, ("_ext",), "envs") == ["pkg.app.run (line 2)"]


MAX_MODULE_LINES = 500


def long_modules(package_dir: Path, limit: int = MAX_MODULE_LINES) -> list[str]:
    """The package's Python modules over ``limit`` lines, with their length."""
    return sorted(f"{p.relative_to(package_dir.parent)}: {n} lines"
                  for p in package_dir.rglob("*.py")
                  if (n := len(p.read_text(encoding="utf-8").splitlines())) > limit)


def test_no_module_is_over_500_lines():
    """A module a reader takes in at once: split a longer one along its seams (issue 47)."""
    assert long_modules(ROOT / PACKAGE) == []


def test_the_length_check_finds_a_long_module(tmp_path):
    pkg = _package(tmp_path, {"__init__.py": "", "short.py": "x = 1\n" * 500,
                              "sub/__init__.py": "", "sub/long.py": "x = 1\n" * 501})
    assert long_modules(pkg) == ["pkg/sub/long.py: 501 lines"]


def private_imports_across_packages(package_dir: Path, package: str) -> list[str]:
    """``from pkg.sub.mod import _name`` where the importer is not in ``pkg.sub``: a name
    private to its package used from another one (make it public, or keep it inside)."""
    out = []
    for mod, (path, is_pkg) in sorted(find_modules(package_dir, package).items()):
        own = mod if is_pkg else mod.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or node.level or not node.module \
                    or not node.module.startswith(package + "."):
                continue
            home = node.module.rpartition(".")[0]  # the package the module lives in
            if home == package or own == home or own.startswith(home + "."):
                continue  # a top-level module's helpers, or the importer's own package
            out += [f"{mod} (line {node.lineno}) imports {node.module}.{a.name}"
                    for a in node.names if a.name.startswith("_")
                    and not a.name.startswith("__")]
    return out


def test_no_private_name_is_imported_from_another_package():
    assert private_imports_across_packages(ROOT / PACKAGE, PACKAGE) == []


def test_the_private_import_check_finds_one(tmp_path):
    pkg = _package(tmp_path, {"__init__.py": "", "a/__init__.py": "",
                              "a/m.py": "from pkg.a.n import _ok\n", "a/n.py": "",
                              "b/__init__.py": "", "b/x.py": "from pkg.a.n import _bad, fine\n"})
    assert private_imports_across_packages(pkg, "pkg") == [
        "pkg.b.x (line 1) imports pkg.a.n._bad"]
