"""Layers hold: topology <- sim <- algorithms <- experiments / cli, lazy imports included.

The contracts are in ``pyproject.toml`` (``[tool.importlinter]``); import-linter
builds the import graph from every ``import`` statement, function-level ones too.
"""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_import_contracts_hold():
    cli = pytest.importorskip("importlinter.cli")
    assert cli.lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True) == 0


def test_function_level_imports_are_seen(tmp_path):
    """The oracle for the contract tool itself: a lazy import inside a function is an edge of the graph."""
    grimp = pytest.importorskip("grimp")
    pkg = tmp_path / "lazypkg"
    (pkg / "low").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "high.py").write_text("")
    (pkg / "low" / "__init__.py").write_text("def f():\n    from .. import high\n    return high\n")
    import sys

    sys.path.insert(0, str(tmp_path))
    try:
        graph = grimp.build_graph("lazypkg", cache_dir=None)
    finally:
        sys.path.remove(str(tmp_path))
    assert graph.direct_import_exists(importer="lazypkg.low", imported="lazypkg.high")


def test_tree_is_grouped_by_layer_as_documented():
    """The package's top level holds only the public surface; every other module sits in its layer's folder,
    and docs/developing.md's layout names every top-level entry there is (and none that is gone)."""
    package = ROOT / "src" / "topocast"
    top_modules = {p.name for p in package.glob("*.py")}
    assert top_modules == {"__init__.py", "_manifest.py", "api.py", "catalogue.py", "cli.py", "errors.py",
                           "registry.py", "spec.py"}
    folders = {p.name for p in package.iterdir() if p.is_dir() and p.name != "__pycache__"}
    layout = (ROOT / "docs" / "developing.md").read_text().split("src/topocast/", 1)[1].split("```", 1)[0]
    named = {name.strip().rstrip("/").removesuffix(".py") for line in layout.splitlines()
             if line.startswith("  ") and not line.startswith("   ") for name in line[2:].split("  ")[0].split(",")}
    assert folders <= named, f"folders missing from docs/developing.md's layout: {sorted(folders - named)}"
    assert {m.removesuffix(".py") for m in top_modules} <= named
    assert named <= folders | {m.removesuffix(".py") for m in top_modules}, sorted(
        named - folders - {m.removesuffix(".py") for m in top_modules})
