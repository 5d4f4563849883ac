"""Which source files a step's result depends on: the files a study declares for the step (its
entry points) and every module of this package they import, transitively, read from the
source (import statements anywhere in a file, except those for type checkers only). The workflow makes them a rule's inputs, so
that editing any module a step imports reruns that step, and editing an unrelated one does not."""

from __future__ import annotations

import argparse
import ast
import functools
import hashlib
import json
import os
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]  # scripts/interference
NAME = PACKAGE.name
# Each file's direct imports, kept between invocations beside the package's bytecode: reading the
# modules' syntax trees cost every snakemake invocation 1.5 s. An entry holds while its file's
# mtime and size are those recorded, the whole cache while the package has the same files (a new
# module may change what `from a import b` names).
CACHE = PACKAGE / "__pycache__" / "code-deps.json"
_unsaved = False


def _file_of(module: str) -> Path | None:
    """The file of a module of this package (a package: its __init__.py), or None."""
    parts = module.split(".")
    if parts[0] != NAME:
        return None
    base = PACKAGE.joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _without_typing_blocks(tree: ast.Module) -> ast.Module:
    """The module without its `if TYPE_CHECKING:` blocks: imports for type hints never run."""

    class Drop(ast.NodeTransformer):
        def visit_If(self, node: ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", None)
            return node.orelse or None if name == "TYPE_CHECKING" else self.generic_visit(node)

    return Drop().visit(tree)


@functools.cache
def _kept() -> dict:
    """The kept entries {path: [[mtime_ns, size], [imported paths]]}, empty where the package's
    files are not those they were read with (or nothing is kept)."""
    try:
        kept = json.loads(CACHE.read_text())
        if kept["files"] == _files_signature():
            return kept["entries"]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return {}


@functools.cache
def _files_signature() -> str:
    files = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py"))
    return hashlib.sha256("\n".join(files).encode()).hexdigest()


def _save() -> None:
    """The entries, whole or not at all (a reader never sees half a file); nothing where the
    cache cannot be written."""
    try:
        CACHE.parent.mkdir(exist_ok=True)
        part = CACHE.with_name(f"{CACHE.name}.{os.getpid()}")
        part.write_text(json.dumps({"files": _files_signature(), "entries": _kept()}))
        os.replace(part, CACHE)
    except OSError:
        pass


@functools.cache
def imported_by(path: Path) -> frozenset[Path]:
    """The package's files one file imports directly (`from a.b import c`: a/b/c.py where c is a
    module, else a/b.py or a/b/__init__.py)."""
    st = path.stat()
    stamp = [st.st_mtime_ns, st.st_size]
    entry = _kept().get(str(path))
    if entry and entry[0] == stamp:
        return frozenset(Path(p) for p in entry[1])
    out = _read_imports(path)
    global _unsaved
    _kept()[str(path)] = [stamp, sorted(map(str, out))]
    _unsaved = True
    return out


def _read_imports(path: Path) -> frozenset[Path]:
    out = set()
    for node in ast.walk(_without_typing_blocks(ast.parse(path.read_text()))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [
                f"{node.module}.{a.name}" if _file_of(f"{node.module}.{a.name}") else node.module
                for a in node.names
            ]
        else:
            continue
        out |= {f for f in map(_file_of, names) if f is not None}
    return frozenset(out - {path})


def closure(entries) -> list[Path]:
    """The entry files and everything of the package they import, transitively; sorted."""
    seen: set[Path] = set()
    todo = [Path(p).resolve() for p in entries]
    while todo:
        f = todo.pop()
        if f in seen or f.suffix != ".py":
            seen.add(f)
            continue
        seen.add(f)
        todo.extend(imported_by(f) - seen)
    global _unsaved
    if _unsaved:
        _save()
        _unsaved = False
    return sorted(seen)


def main(argv=None) -> int:
    """Writes the listing of a step's code: one line per file, its path and SHA-256."""
    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("files", type=Path, nargs="+")
    a = ap.parse_args(argv)
    lines = [f"{p}\t{hashlib.sha256(p.read_bytes()).hexdigest()}" for p in sorted(set(a.files))]
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text("path\tsha256\n" + "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
