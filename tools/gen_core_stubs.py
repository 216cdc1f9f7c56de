"""Regenerate ``vdsim_gym/_core.pyi``, the type stub of the compiled core, from the built module.

    python tools/gen_core_stubs.py             # rewrites vdsim_gym/_core.pyi
    python tools/gen_core_stubs.py --output F  # writes F instead (tests/test_typing.py)

Run it after rebuilding the extension whenever a binding changed (a new class, method,
argument or constant): ``tests/test_typing.py`` regenerates the stub from the installed
``vdsim_gym._core`` and fails while the committed file differs. The stub is
pybind11-stubgen's output (the version pinned in pyproject's ``test`` extra: another
version prints other text) with three changes made here, so that it holds only the
interface:

- the value of the build-identity attribute (``__version__``: it changes with the
  version) is left out; its type stays;
- a module constant that is a list, tuple or dict of plain scalars gets its element types
  (``tuple[str, ...]``, ``dict[str, int]``) instead of a bare ``tuple``, read from its value;
- a default argument that pybind11 can only show as ``<vdsim_gym._core.X object at 0x..>``
  is printed as ``...`` (stubgen's rendering) without failing the run; any other stubgen
  error fails it (exit status 1), since the stub would be wrong.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from pathlib import Path
from typing import Any

from pybind11_stubgen import CLIArgs, arg_parser, stub_parser_from_args
from pybind11_stubgen.parser.interface import IParser
from pybind11_stubgen.printer import Printer
from pybind11_stubgen.structs import Attribute, QualifiedName

MODULE = "vdsim_gym._core"
ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUTPUT = ROOT / "vdsim_gym" / "_core.pyi"
COMMAND = "python tools/gen_core_stubs.py"
HEADER = (
    f"# Generated from the built {MODULE} by `{COMMAND}` (pybind11-stubgen); do not edit.\n"
    "# tests/test_typing.py fails while this file differs from a fresh one.\n"
)
# Build identity, not interface: the stub keeps their types, not their values.
BUILD_VALUES = frozenset({"__version__"})
# Default arguments that are bound C++ objects (e.g. `initial: Command = Command()`).
OBJECT_DEFAULT = r"<vdsim_gym\._core\.\w+ object at 0x[0-9a-fA-F]+>"
SCALARS = (bool, int, float, str)


def _element_type(values: Any) -> str | None:
    """The one scalar type of all ``values`` (int and float together: float), else None."""
    types = {type(v) for v in values}
    if not types or not types <= set(SCALARS):
        return None
    if types == {int, float}:
        return "float"
    return types.pop().__name__ if len(types) == 1 else None


def collection_annotation(value: Any) -> str | None:
    """``list[float]``, ``tuple[str, ...]``, ``dict[str, int]`` for a constant, else None."""
    if type(value) is list and (t := _element_type(value)):
        return f"list[{t}]"
    if type(value) is tuple and (t := _element_type(value)):
        return f"tuple[{t}, ...]"
    if type(value) is dict:
        k, v = _element_type(value.keys()), _element_type(value.values())
        if k and v:
            return f"dict[{k}, {v}]"
    return None


class _InterfaceOnly(IParser):
    """Drops build-identity values and types scalar collections (see the module doc)."""

    def handle_attribute(self, path: QualifiedName, value: Any) -> Attribute | None:
        attr = super().handle_attribute(path, value)
        if attr is None:
            return None
        if str(path.parent) == MODULE and path[-1] in BUILD_VALUES:
            attr.value = None
        ann = collection_annotation(value)
        if ann is not None:
            parsed = self.parse_annotation_str(ann)
            assert str(parsed) == ann, (parsed, ann)
            attr.annotation = parsed
        return attr


def generate() -> str:
    """The stub text of the importable ``vdsim_gym._core``; SystemExit(1) on stubgen errors."""
    args = arg_parser().parse_args(
        ["--exit-code", "--ignore-invalid-expressions", OBJECT_DEFAULT, MODULE],
        namespace=CLIArgs(),
    )
    base = type(stub_parser_from_args(args))
    parser = type("CoreStubParser", (_InterfaceOnly, base), {})()
    if args.ignore_invalid_expressions is not None:
        parser.set_ignored_invalid_expressions(args.ignore_invalid_expressions)
    module = parser.handle_module(QualifiedName.from_str(MODULE), importlib.import_module(MODULE))
    if module is None:
        raise RuntimeError(f"pybind11-stubgen could not parse {MODULE}")
    parser.finalize()  # exits with status 1 if stubgen reported an error
    printer = Printer(invalid_expr_as_ellipses=True)
    return HEADER + "".join(line + "\n" for line in printer.print_module(module))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--output", type=Path, default=DEFAULT_OUTPUT,
                    help=f"the stub file to write (default: {DEFAULT_OUTPUT.relative_to(ROOT)})")
    out = ap.parse_args(argv).output
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(levelname)s: %(message)s")
    text = generate()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
