"""docs/developing.md's worked example of adding an algorithm is true of the code: run it."""

import re
from pathlib import Path

import topocast as tc
from topocast import registry

DOC = Path(__file__).resolve().parents[1] / "docs" / "developing.md"


def test_worked_example_registers_and_runs():
    text = DOC.read_text()
    section = text[text.index("## Adding an algorithm"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    registry.algorithms()  # load the registry first, as the CLI does
    exec(compile(code, "developing.md", "exec"), {})
    try:
        result = tc.run("path:6", "broadcast-chain-example")
        assert result.verified and result.metrics["steps"] == 5 == result.metrics["lower_bound"]
        timed = tc.run("path:6", "broadcast-chain-example", engine="event", message_bytes=4096)
        assert timed.metrics["time"] == 5 * (1e-6 + 4096 * 1e-10)  # five one-hop transfers in sequence
    finally:
        registry._REG.algorithms.pop("broadcast-chain-example")
