"""The README's quick start and its registry table stay true."""

import re
from pathlib import Path

from topocast.catalogue import markdown_tables

README = Path(__file__).resolve().parents[1] / "README.md"
START, END = "<!-- registry-table:start -->", "<!-- registry-table:end -->"


def test_registry_table_is_in_sync():
    text = README.read_text()
    body = text.split(START, 1)[1].split(END, 1)[0].strip("\n") + "\n"
    assert body == markdown_tables(), "regenerate with: python -m topocast.catalogue"


def test_quick_start_has_exactly_two_commands():
    text = README.read_text()
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```(?:sh|bash)?\n(.*?)```", section, re.S)
    commands = [line for block in blocks for line in block.strip().splitlines() if line.strip()]
    assert commands == [
        "python -m pip install -e '.[test]' && topocast reproduce --quick",
        "python -m pip install -e '.[test]' && python -m pytest -q",
    ]


def test_ci_runs_the_readme_test_command():
    ci = (README.parent / ".ci" / "run").read_text()
    assert "python -m pip install -e '.[test]' && python -m pytest -q" in ci
