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
