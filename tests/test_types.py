"""Static types: mypy, configured in pyproject.toml ([tool.mypy]: strict flags on the run path's core), finds no
error in src/topocast."""

from pathlib import Path

import pytest

mypy_api = pytest.importorskip("mypy.api")

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_mypy_finds_no_errors(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> None:
    # mypy's cache in pytest's cache directory: a fresh clone checks from cold (about a minute of CPU), a rerun
    # only what changed
    cache = getattr(request.config, "cache", None)  # None under -p no:cacheprovider
    cache_dir = cache.mkdir("mypy") if cache is not None else tmp_path_factory.mktemp("mypy_cache")
    stdout, stderr, status = mypy_api.run(["--config-file", str(ROOT / "pyproject.toml"), "--cache-dir",
                                           str(cache_dir), str(ROOT / "src" / "topocast")])
    assert status == 0 and "Success" in stdout, f"mypy found errors:\n{stdout}{stderr}"
