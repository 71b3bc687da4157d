"""The scenario loader's shape (issue 40, item 20): its modules form layers, each importing only
those below it at module level, none through a function-local import, and each imports alone
in a fresh interpreter (no import circle that only an import order hides)."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import lfsim

PACKAGE = Path(lfsim.__file__).parent
# Bottom first: a module may import (from lfsim) only modules listed before it.
LAYERS = [
    "errors",
    "paths",
    "core",
    "yamlio",
    "values",
    "hpcc",
    "flows",
    "parts",
    "hpcc_check",
    "scenario",
]


def _lfsim_imports(module: str) -> list[tuple[str, bool]]:
    """(imported lfsim module, whether the import is inside a function) for each import."""
    tree = ast.parse((PACKAGE / f"{module}.py").read_text())
    local = {
        id(n)
        for f in ast.walk(tree)
        if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
        for n in ast.walk(f)
    }
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.level or node.module == "lfsim"):
            names = [node.module] if node.module else [a.name for a in node.names]
            out += [(n.split(".")[0], id(node) in local) for n in names]
    return out


@pytest.mark.parametrize("module", LAYERS)
def test_a_loader_module_imports_only_the_layers_below_it_at_module_level(module):
    below = set(LAYERS[: LAYERS.index(module)])
    imports = _lfsim_imports(module)
    assert not [m for m, local in imports if local], f"{module}: function-local lfsim imports"
    assert {m for m, _ in imports} <= below, f"{module} imports {imports} (layers below: {below})"


def test_every_lfsim_module_imports_first_in_a_fresh_interpreter():
    modules = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem not in ("__main__", "__init__"))
    assert set(LAYERS) <= set(modules)
    for module in modules:
        p = subprocess.run(
            [sys.executable, "-c", f"import lfsim.{module}"], capture_output=True, text=True
        )
        assert p.returncode == 0, f"lfsim.{module}: {p.stderr}"
