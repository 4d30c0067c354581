"""The registry's manifest: in sync with the registrations, and names imported only when used."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

import topocast as tc
from topocast import catalogue, registry


def _fresh(code: str) -> dict:
    """Run ``code`` in a fresh interpreter; it prints one JSON line on stdout."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_manifest_and_readme_are_in_sync_with_the_registrations():
    """``python -m topocast.catalogue --check`` imports every module and compares what they register
    (names, fields, the registering module, the modules extending a family) with the manifest."""
    done = subprocess.run([sys.executable, "-m", "topocast.catalogue", "--check"], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr + "\nregenerate with: python -m topocast.catalogue"


def test_manifest_lists_every_name_with_its_module():
    data = registry.manifest()
    for kind, entries in (("family", data.FAMILIES), ("algorithm", data.ALGORITHMS),
                          ("experiment", data.EXPERIMENTS)):
        assert entries == sorted(entries, key=lambda e: e["name"])
        for entry in entries:
            assert entry["module"].startswith(registry.PACKAGES[kind] + "."), entry
            assert entry["module"] in data.MODULES
    assert {"ring", "torus", "hdn"} <= {f["name"] for f in data.FAMILIES}
    hdn = next(f for f in data.FAMILIES if f["name"] == "hdn")
    assert "topocast.algorithms.hdn_routing" in hdn["extends"]  # its router (attach_router)
    assert "topocast.topology.hdn_symmetry" in hdn["extends"]   # its constructive bisection (register_cut)


def test_list_json_is_the_manifest():
    data = catalogue.catalogue()
    manifest = registry.manifest()
    assert [f["name"] for f in data["families"]] == [f["name"] for f in manifest.FAMILIES]
    assert [a["name"] for a in data["algorithms"]] == [a["name"] for a in manifest.ALGORITHMS]
    ring = next(f for f in data["families"] if f["name"] == "ring")
    assert ring == {"name": "ring", "aliases": ["cycle"], "doc": "ring (cycle) C_n", "example": "ring:64",
                    "params": [{"name": "n", "kind": "int", "required": True, "default": None,
                                "doc": "number of nodes"}]}


def test_a_lookup_imports_only_the_module_that_registers_the_name():
    found = _fresh("""
        import json, sys
        from topocast import registry
        fam = registry.family("ring")
        after_family = sorted(m for m in sys.modules if m.startswith("topocast."))
        alg = registry.algorithm("broadcast-binomial")
        after_algorithm = sorted(m for m in sys.modules if m.startswith("topocast."))
        print(json.dumps({"family": fam.name, "algorithm": alg.name, "after_family": after_family,
                          "after_algorithm": after_algorithm}))
    """)
    assert found["family"] == "ring" and found["algorithm"] == "broadcast-binomial"
    assert "topocast.topology.classic" in found["after_family"]
    assert not [m for m in found["after_family"] if m.startswith(("topocast.algorithms.", "topocast.experiments"))]
    assert "topocast.topology.hdn" not in found["after_family"]
    module = next(a["module"] for a in registry.manifest().ALGORITHMS if a["name"] == "broadcast-binomial")
    assert module in found["after_algorithm"]
    assert not [m for m in found["after_algorithm"] if m.startswith("topocast.experiments")]
    assert "topocast.algorithms.galaxyfly_broadcast" not in found["after_algorithm"]


def test_a_family_comes_with_the_hooks_other_modules_attach():
    found = _fresh("""
        import json
        from topocast import registry
        from topocast.topology import properties
        fam = registry.family("hdn")
        print(json.dumps({"router": fam.router.__module__ if fam.router else None,
                          "cut": "hdn" in properties._CUTS}))
    """)
    assert found == {"router": "topocast.algorithms.hdn_routing", "cut": True}


def test_an_unknown_name_lists_the_known_ones_without_importing_every_module():
    found = _fresh("""
        import json, sys
        from topocast import registry, TopocastError
        try:
            registry.algorithm("no-such-algorithm")
        except TopocastError as exc:
            message = str(exc)
        print(json.dumps({"message": message,
                          "algorithms": sorted(m for m in sys.modules if m.startswith("topocast.algorithms."))}))
    """)
    assert "unknown algorithm 'no-such-algorithm'" in found["message"] and "broadcast-binomial" in found["message"]
    assert found["algorithms"] == []


def test_a_module_the_manifest_does_not_list_yet_is_found(tmp_path, monkeypatch):
    """A new algorithm file works before the manifest is regenerated (``topocast list`` shows it after)."""
    (tmp_path / "brand_new_algorithm.py").write_text(textwrap.dedent("""
        from topocast.algorithms.base import register
        from topocast.algorithms.classic_broadcast import binomial_broadcast

        register("test-brand-new", binomial_broadcast, "broadcast", "a new file, not in the manifest yet")
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    original = registry._package_modules
    monkeypatch.setattr(registry, "_package_modules",
                        lambda kind: original(kind) + (["brand_new_algorithm"] if kind == "algorithm" else []))
    monkeypatch.setattr(registry._REG, "loaded", set())
    try:
        assert registry.algorithm("test-brand-new").collective == "broadcast"
        assert registry.origin("algorithm", "test-brand-new") == "brand_new_algorithm"
        assert "test-brand-new" in [a["name"] for a in catalogue.catalogue()["algorithms"]]
        assert tc.run("hypercube:3", "test-brand-new").verified
    finally:
        registry._REG.algorithms.pop("test-brand-new", None)
        sys.modules.pop("brand_new_algorithm", None)


def test_the_generator_refuses_a_registration_outside_a_module(monkeypatch):
    data = {"MODULES": [], "FAMILIES": [], "EXPERIMENTS": [],
            "ALGORITHMS": [{"name": "x", "module": "__main__"}]}
    with pytest.raises(RuntimeError, match="registered outside"):
        catalogue.manifest_source(data)


def test_readme_splice_replaces_only_the_table():
    text = f"intro\n{catalogue.START}\nold table\n{catalogue.END}\noutro\n"
    assert catalogue.readme_with(text, "| new |\n") == f"intro\n{catalogue.START}\n| new |\n{catalogue.END}\noutro\n"
