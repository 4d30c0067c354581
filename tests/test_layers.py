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
