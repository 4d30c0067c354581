"""Coverage of each paper as data: every numbered table, figure, theorem, formula and algorithm is listed.

The expected references were read off the papers (/work/shared/papers); when the papers are at hand the
test also re-reads them, so a reference added there without a coverage entry fails.
"""

import re
from pathlib import Path

import pytest

from topocast import registry
from topocast.coverage import COVERAGE, STATUSES, Item, coverage_of

PAPERS = Path("/work/shared/papers")
EXPECTED = {
    "ej": [f"Table {i}" for i in (1, 2, 3)] + [f"Figure {i}" for i in range(1, 23)]
    + [f"Algorithm {i}" for i in range(1, 5)] + [f"Formula ({i})" for i in (1, 2, 3, 5, 6, 7, 8, 9, 10)],
    "hdn": [f"Table {i}" for i in range(1, 5)] + [f"Figure {i}" for i in range(1, 12)]
    + [f"Theorem {i}" for i in (1, 2, 3)] + ["Algorithm 1", "Algorithm 2", "RDN sizes"],
    "galaxyfly": [f"Table {i}" for i in range(1, 7)] + [f"Figure {i}" for i in range(1, 5)]
    + [f"Theorem {i}" for i in range(1, 7)] + [f"Algorithm {i}" for i in range(1, 5)]
    + ["Definition 1", "Definition 2", "Formula (1)", "Formula (2)"],
    "multicast": [f"Figure {i}" for i in range(1, 7)] + ["Theorem 1"]
    + [f"Definition {i}" for i in (1, 2, 3, 4, 5, 8)] + [f"Formula ({i})" for i in range(1, 7)],
    "fattree": ["Algorithm 1", "Algorithm 2"] + [f"Figure {c}.{i}" for c, n in ((1, 8), (2, 17), (3, 9), (4, 14),
                                                                                (5, 11)) for i in range(1, n + 1)],
}
FILES = {"ej": "eisenstein-jacobi-broadcast.md", "hdn": "hierarchical-dual-net.md",
         "galaxyfly": "galaxyfly-all-to-all-broadcast.md", "multicast": "mesh-multicast-qualified-groups.md",
         "fattree": "fat-tree-all-to-all-personalized.it.md"}


def _refs(name: str) -> list[str]:
    return [r for item in coverage_of(name) for r in item.refs()]


def test_every_reproduction_has_coverage():
    names = {e.name for e in registry.experiments()}
    assert names <= set(COVERAGE), names - set(COVERAGE)
    for items in COVERAGE.values():
        assert all(i.status in STATUSES for i in items)
        assert all(i.reason for i in items if i.status != "reproduced")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_coverage_is_complete_and_unique(name):
    refs = _refs(name)
    assert len(refs) == len(set(refs)), [r for r in refs if refs.count(r) > 1]
    missing = set(EXPECTED[name]) - set(refs)
    assert not missing, missing


@pytest.mark.parametrize("name", sorted(FILES))
def test_coverage_against_the_paper_text(name):
    path = PAPERS / FILES[name]
    if not path.exists():
        pytest.skip(f"{path} not present")
    text = path.read_text()
    pattern = (r"(Figura|Algoritmo) (\d+(?:\.\d+)?)" if name == "fattree"
               else r"(Table|Figure|Fig\.|Theorem|Algorithm|Definition) (\d+)\b")
    words = {"Figura": "Figure", "Algoritmo": "Algorithm", "Fig.": "Figure"}
    found = {f"{words.get(k, k)} {n}" for k, n in re.findall(pattern, text)}
    assert found <= set(_refs(name)), found - set(_refs(name))


def test_required_items_named_in_the_issue():
    assert {"Formula (7)", "Formula (8)", "Formula (9)", "Formula (10)"} <= set(_refs("ej"))
    assert {"Figure 4", "Figure 5", "Figure 6", "RDN sizes"} <= set(_refs("hdn"))


def test_item_validation_and_ranges():
    assert Item("Figures 1.1-1.3", "partly", "x", "why").refs() == ["Figure 1.1", "Figure 1.2", "Figure 1.3"]
    assert Item("Formulas (7)-(8)", "reproduced", "x").refs() == ["Formula (7)", "Formula (8)"]
    with pytest.raises(ValueError):
        Item("Table 1", "partly", "x")
    with pytest.raises(ValueError):
        Item("Table 1", "maybe", "x", "why")
