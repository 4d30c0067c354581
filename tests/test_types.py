"""Static types: mypy, configured in pyproject.toml ([tool.mypy]: strict flags on the run path's core), finds no
error in src/topocast."""

from pathlib import Path

import pytest

mypy_api = pytest.importorskip("mypy.api")

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_mypy_finds_no_errors(request: pytest.FixtureRequest) -> None:
    # the cache lives in pytest's cache directory: a fresh clone checks from cold (about a minute of CPU),
    # a rerun only what changed
    cache = request.config.cache.mkdir("mypy") if request.config.cache is not None else None
    args = ["--config-file", str(ROOT / "pyproject.toml"), str(ROOT / "src" / "topocast")]
    if cache is not None:
        args += ["--cache-dir", str(cache)]
    stdout, stderr, status = mypy_api.run(args)
    assert status == 0 and "Success" in stdout, f"mypy found errors:\n{stdout}{stderr}"
