"""Start-up stays light: ``import topocast`` and the quick commands load no heavy numerical package.

Each check runs in a fresh interpreter and reads its ``sys.modules`` at the end.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("numba", "matplotlib", "galois", "scipy", "networkx", "dask")

# runs the CLI in process on the given argv and prints the top-level packages loaded, as JSON, on stderr
CLI = """
import json, sys
sys.argv = ["topocast", *ARGV]
from topocast.cli import main
try:
    main(ARGV)
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "modules": sorted({m.split(".")[0] for m in sys.modules})}), file=sys.stderr)
"""


def _loaded(code: str) -> dict:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stderr.strip().splitlines()[-1])


def test_import_topocast_loads_no_heavy_package():
    found = _loaded("import json, sys, topocast\n"
                    "print(json.dumps({'modules': sorted({m.split('.')[0] for m in sys.modules}),"
                    " 'numpy': 'numpy' in sys.modules}), file=sys.stderr)")
    assert not set(HEAVY) & set(found["modules"]), set(HEAVY) & set(found["modules"])
    assert not found["numpy"]  # not even numpy: everything is imported on first use


@pytest.mark.parametrize("argv,forbidden", [
    (["--help"], HEAVY + ("numpy",)),
    (["list"], HEAVY + ("numpy",)),
    (["list", "--json"], HEAVY + ("numpy",)),
    (["info", "ring:64"], HEAVY),
])
def test_quick_commands_load_no_heavy_package(argv, forbidden):
    found = _loaded(CLI.replace("ARGV", repr(argv)))
    assert found["code"] in (0, None)
    assert not set(forbidden) & set(found["modules"]), set(forbidden) & set(found["modules"])


def test_importtime_of_the_console_command_shows_no_heavy_package():
    """The same through ``python -X importtime`` of the console entry point (what a user runs)."""
    code = "import sys; sys.argv = ['topocast', 'list']; from topocast.cli import main; main()"
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    imported = {line.rsplit("|", 1)[1].strip().split(".")[0] for line in done.stderr.splitlines()
                if line.startswith("import time:") and "|" in line}
    assert "topocast" in imported
    assert not set(HEAVY) & imported, set(HEAVY) & imported


def test_public_names_resolve_on_first_use():
    import topocast as tc
    import topocast.execution.execute  # noqa: F401 - the submodule; topocast.execution.execute stays the function
    import topocast.sweep.grid  # noqa: F401
    from topocast.api import info, run
    from topocast.registry import algorithms
    from topocast.spec import build
    from topocast.topology.core import Topology

    assert tc.info is info and tc.run is run and tc.build is build and tc.algorithms is algorithms
    assert tc.Topology is Topology
    assert callable(tc.execute) and callable(tc.sweep)  # the functions, not the submodules of the same name
    assert tc.execute.__module__ == "topocast.execution.execute" and tc.sweep.__module__ == "topocast.sweep.grid"
    assert set(tc.__all__) <= set(dir(tc))
    assert tc.registry.family("ring").name == "ring"  # submodules resolve too
    with pytest.raises(AttributeError):
        _ = tc.no_such_name


def test_submodule_import_keeps_the_functions_in_a_fresh_process():
    found = subprocess.run([sys.executable, "-c", (
        "import topocast.execution.execute, topocast.sweep.grid, topocast as tc\n"
        "print(callable(tc.execute), callable(tc.sweep), type(tc.execute).__name__)")],
        capture_output=True, text=True, timeout=120)
    assert found.stdout.split() == ["True", "True", "function"], found.stderr
