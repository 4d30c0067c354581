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


def test_the_recipe_followed_literally_is_one_file_plus_the_generated_manifest(tmp_path):
    """A copy of the repository, the worked example saved where the page says, `python -m topocast.catalogue` run:
    the command line lists and runs the new algorithm, and the only files that changed are the new one, the
    manifest and the README's generated table."""
    import filecmp
    import json
    import os
    import shutil
    import subprocess
    import sys

    root = DOC.parents[1]
    copy = tmp_path / "repo"
    shutil.copytree(root / "src", copy / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    shutil.copy(root / "README.md", copy / "README.md")
    text = DOC.read_text()
    section = text[text.index("## Adding an algorithm"):]
    (copy / "src/topocast/algorithms/chain_example.py").write_text(
        re.search(r"```python\n(.*?)```", section, re.S).group(1))
    env = {**os.environ, "PYTHONPATH": str(copy / "src"), "TOPOCAST_NO_SUPERVISOR": "1"}

    def run(*args: str) -> str:
        done = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout

    run("-m", "topocast.catalogue")
    cli = ["-c", "import sys; from topocast.cli import main; main(sys.argv[1:])"]
    listed = json.loads(run(*cli, "list", "--json"))
    assert "broadcast-chain-example" in {a["name"] for a in listed["algorithms"]}
    result = json.loads(run(*cli, "run", "path:6", "broadcast-chain-example", "--json"))
    assert result["verified"] and result["steps"] == 5 == result["lower_bound"]
    timed = json.loads(run(*cli, "run", "path:6", "broadcast-chain-example", "--engine", "event", "--set",
                           "message_bytes=4096", "--json"))
    assert abs(timed["time"] - 5 * (1e-6 + 4096 * 1e-10)) < 1e-15
    changed = []
    for folder, _, files in os.walk(copy / "src"):
        for name in files:
            path = Path(folder) / name
            if "__pycache__" in path.parts or name.endswith((".pyc", ".nbi", ".nbc")):
                continue
            original = root / path.relative_to(copy)
            if not original.exists() or not filecmp.cmp(original, path, shallow=False):
                changed.append(str(path.relative_to(copy)))
    if not filecmp.cmp(root / "README.md", copy / "README.md", shallow=False):
        changed.append("README.md")
    assert sorted(changed) == ["README.md", "src/topocast/_manifest.py", "src/topocast/algorithms/chain_example.py"]
