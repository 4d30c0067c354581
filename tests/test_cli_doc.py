"""``docs/cli.md`` lists every command of the CLI with exactly the options the CLI takes."""

from __future__ import annotations

import re
from pathlib import Path

import typer

from topocast.cli import app

DOC = Path(__file__).resolve().parents[1] / "docs" / "cli.md"


def _usage() -> dict[str, set[str]]:
    """Per command, the options its lines of the usage block name (continuation lines included)."""
    block = DOC.read_text().split("```\n", 1)[1].split("```", 1)[0]
    found: dict[str, set[str]] = {}
    command = None
    for line in block.splitlines():
        if line.startswith("topocast "):
            command = line.split()[1]
            found.setdefault(command, set())
        if command is not None:
            found[command] |= set(re.findall(r"--[a-z][a-z-]*", line))
    return found


def test_every_command_and_option_is_documented_and_nothing_else():
    group = typer.main.get_command(app)
    documented = _usage()
    assert set(documented) == set(group.commands)
    for name, command in group.commands.items():
        options = {o for p in command.params for o in p.opts if o.startswith("--")}
        assert documented[name] == options, (name, documented[name] ^ options)


def test_exit_statuses_are_documented():
    text = DOC.read_text()
    for status in ("| 0 |", "| 1 |", "| 2 |", "| 130 |", "| 143 |"):
        assert status in text


def _documented_keys(section: str) -> set[str]:
    """Backticked names in the first column of the tables of ``section`` of docs/cli.md."""
    text = DOC.read_text().split(f"## {section}", 1)[1].split("\n## ", 1)[0]
    keys: set[str] = set()
    for line in text.splitlines():
        if line.startswith("| `"):
            keys |= set(re.findall(r"`([a-z_0-9]+)`", line.split("|")[1]))
    return keys


def test_info_keys_are_documented():
    import topocast as tc

    documented = _documented_keys("`info --json` keys")
    for spec in ("torus:4x4", "ring:5", "hypercube:3"):
        assert set(tc.info(spec)) <= documented, set(tc.info(spec)) - documented


def test_run_keys_of_the_step_and_event_engines_are_documented_and_exist():
    import topocast as tc
    from topocast.execution.result import CORE_KEYS

    documented = _documented_keys("`run --json` keys (result schema 1.0)")
    seen: set[str] = set()
    for spec, algorithm in (("torus:4x4", "allgather-mesh"), ("hypercube:3", "broadcast-binomial"),
                            ("ring:6", "alltoall-ring")):
        for engine in ("step", "event"):
            keys = set(tc.run(spec, algorithm, engine=engine).to_json())
            assert keys <= documented, (engine, keys - documented)
            seen |= keys
    assert set(CORE_KEYS) <= documented
    # every documented step/event key exists in some run (groups: Galaxyfly's supernodes; notes: when a run has any)
    rare = {"mean_group_completion_time", "notes"}
    assert documented - seen - rare == set(), documented - seen - rare
