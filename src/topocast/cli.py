"""The ``topocast`` command: list, info, run, route, reproduce.

Bad input prints one line on stderr and exits 2; a failed verification exits
1 with the first violation; an interrupt exits 130 leaving no half-written
file (all files are written to a temporary name, then renamed).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table as RichTable

from . import registry
from .catalogue import catalogue
from .errors import TopocastError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Interconnection-network topologies and collective algorithms: build, verify, measure.")
out = Console(soft_wrap=True, emoji=False, highlight=False, width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True, emoji=False, highlight=False, width=None if sys.stderr.isatty() else 160)

_UNITS = {"": 1, "b": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}


def parse_size(text: str | None) -> float | None:
    """``'8G'`` -> bytes; ``None`` -> the default (half of RAM)."""
    if text is None:
        return None
    raw = text.strip().lower().removesuffix("ib").removesuffix("b") if text.strip().lower() not in ("b",) else text
    unit = raw[-1] if raw and raw[-1] in _UNITS else ""
    number = raw[:-1] if unit else raw
    try:
        value = float(number) * _UNITS[unit]
    except ValueError:
        raise TopocastError(f"max-memory: must be a size such as 512M or 8G, got '{text}'") from None
    if value <= 0:
        raise TopocastError(f"max-memory: must be > 0, got '{text}'")
    return value


def _fail(message: str, code: int) -> None:
    err.print(f"topocast: error: {message}", markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def _guard(function):
    """Turn TopocastError into exit 2 and Ctrl-C into exit 130."""
    import functools

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except TopocastError as exc:
            _fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__, 2)
        except KeyboardInterrupt:
            err.print("topocast: interrupted; files already written are complete, none is half-written")
            raise typer.Exit(130) from None
        except MemoryError:
            _fail("out of memory: lower the size or pass a smaller --max-memory to be refused early", 2)

    return wrapper


def _dump(payload: Any) -> None:
    sys.stdout.write(json.dumps(payload, indent=2, default=str) + "\n")


# -- list -------------------------------------------------------------------
@app.command("list")
@_guard
def list_command(as_json: bool = typer.Option(False, "--json", help="machine-readable output")):
    """List topology families, algorithms and paper reproductions."""
    data = catalogue()
    if as_json:
        _dump(data)
        return
    table = RichTable(title="Topology families")
    for col in ("family", "example", "parameters", "description"):
        table.add_column(col)
    for f in data["families"]:
        table.add_row(*map(escape, (f["name"], f["example"], ", ".join(p["name"] for p in f["params"]), f["doc"])))
    out.print(table)
    table = RichTable(title="Algorithms")
    for col in ("algorithm", "collective", "families", "engines", "aliases"):
        table.add_column(col)
    for a in data["algorithms"]:
        table.add_row(*map(escape, (a["name"], a["collective"], ", ".join(a["families"]) or "any",
                                    ", ".join(a["engines"]), ", ".join(a["aliases"]))))
    out.print(table)
    table = RichTable(title="Reproductions (topocast reproduce NAME)")
    table.add_column("name")
    table.add_column("paper")
    for e in data["reproductions"]:
        table.add_row(escape(e["name"]), escape(e["paper"] or e["doc"]))
    out.print(table)


# -- info -------------------------------------------------------------------
@app.command()
@_guard
def info(
    spec: str = typer.Argument(..., help="topology spec, e.g. torus:8x8x8"),
    as_json: bool = typer.Option(False, "--json"),
    csv: Path | None = typer.Option(None, "--csv", help="write the distance distribution as CSV"),
    no_distances: bool = typer.Option(False, "--no-distances", help="skip diameter and distances"),
    max_memory: str | None = typer.Option(None, "--max-memory",
                                          help="refuse builds larger than this (default: half of RAM)"),
):
    """Nodes, links, degree, diameter, average distance, distance distribution."""
    from .api import info as api_info
    from .fileio import write_csv

    data = api_info(spec, distances=not no_distances, max_memory=parse_size(max_memory))
    if csv is not None and "distance_distribution" in data:
        write_csv(csv, ["distance", "ordered_pairs"], enumerate(data["distance_distribution"]))
    if as_json:
        _dump(data)
        return
    table = RichTable(title=data["spec"], show_header=False)
    table.add_column("what")
    table.add_column("value")
    for key, value in data.items():
        if key in ("spec", "distance_distribution"):
            continue
        table.add_row(key, escape(json.dumps(value) if isinstance(value, (dict, list)) else str(value)))
    if "distance_distribution" in data:
        table.add_row("distance distribution", " ".join(map(str, data["distance_distribution"])))
    out.print(table)


# -- run --------------------------------------------------------------------
def parse_settings(settings: list[str]) -> dict[str, str]:
    values: dict[str, str] = {}
    for item in settings:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise TopocastError(f"--set: expected key=value, got '{item}'")
        values[key.strip()] = value.strip()
    return values


@app.command()
@_guard
def run(
    spec: str = typer.Argument(..., help="topology spec"),
    algorithm: str = typer.Argument(..., help="algorithm name (topocast list)"),
    engine: str | None = typer.Option(
        None, "--engine", help="step, event, circuit, wormhole or frontier (default: the algorithm's first)"),
    settings: list[str] = typer.Option([], "--set", help="algorithm parameter key=value (repeatable)"),
    seed: int = typer.Option(0, "--seed", help="seed for every random choice"),
    as_json: bool = typer.Option(False, "--json"),
    csv: Path | None = typer.Option(None, "--csv", help="write the per-step series (or the metrics) as CSV"),
    max_memory: str | None = typer.Option(None, "--max-memory",
                                          help="refuse runs larger than this (default: half of RAM)"),
):
    """Run an algorithm, verify delivery, print metrics and the lower-bound ratio."""
    from .api import run as api_run
    from .fileio import write_csv
    from .progress import Progress

    with Progress(enabled=not as_json and sys.stderr.isatty()).status(f"running {algorithm} on {spec}"):
        result = api_run(spec, algorithm, engine=engine, seed=seed, max_memory=parse_size(max_memory),
                         params_from_text=True, **parse_settings(settings))
    data = result.to_json()
    if csv is not None:
        if result.per_step:
            keys = list(result.per_step)
            rows = zip(range(1, len(result.per_step[keys[0]]) + 1), *(result.per_step[k] for k in keys), strict=False)
            write_csv(csv, ["step", *keys], rows)
        else:
            write_csv(csv, ["metric", "value"], [(k, v) for k, v in data.items() if not isinstance(v, (list, dict))])
    if as_json:
        _dump(data)
    else:
        _print_result(data, result.per_step)
    if not result.verified:
        err.print(f"topocast: verification failed: {result.first_violation}", markup=False)
        raise typer.Exit(1)


def _short(value: Any) -> str:
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def _print_result(data: dict, per_step: dict | None) -> None:
    table = RichTable(title=f"{data['algorithm']} on {data['spec']} ({data['engine']} engine)", show_header=False)
    table.add_column("metric")
    table.add_column("value")
    units = data.get("units", {})
    for key, value in data.items():
        if key in ("spec", "algorithm", "engine", "per_step", "units", "schema_version"):
            continue
        if isinstance(value, dict):
            value = ", ".join(f"{k}={_short(v)}" for k, v in value.items())
        table.add_row(key, escape(_short(value) + (f" {units[key]}" if key in units else "")))
    out.print(table)
    if per_step:
        keys = list(per_step)
        steps = len(per_step[keys[0]])
        table = RichTable(title="per step")
        table.add_column("step", justify="right")
        for k in keys:
            table.add_column(k, justify="right")
        shown = range(steps) if steps <= 40 else list(range(20)) + list(range(steps - 20, steps))
        previous = -1
        for i in shown:
            if i != previous + 1:
                table.add_row("…", *["…"] * len(keys))
            table.add_row(str(i + 1), *(str(per_step[k][i]) for k in keys))
            previous = i
        out.print(table)


# -- route ------------------------------------------------------------------
@app.command()
@_guard
def route(
    spec: str = typer.Argument(..., help="topology spec"),
    source: str = typer.Option(..., "--from", help="source node label, e.g. 0,0,0,0"),
    target: str = typer.Option(..., "--to", help="target node label"),
    as_json: bool = typer.Option(False, "--json"),
    max_memory: str | None = typer.Option(None, "--max-memory"),
):
    """Route one packet with the family's routing algorithm (BFS shortest path otherwise)."""
    from .routing import route as do_route

    data = do_route(spec, source, target, max_memory=parse_size(max_memory))
    if as_json:
        _dump(data)
        return
    out.print(f"{data['router']}: {data['length']} hops (shortest {data['shortest']})")
    out.print(" -> ".join("(" + ",".join(map(str, lab)) + ")" for lab in data["path"]))


# -- reproduce ----------------------------------------------------------------
@app.command()
@_guard
def reproduce(
    name: str = typer.Argument("all", help="reproduction name (topocast list), or 'all' (the default)"),
    quick: bool = typer.Option(False, "--quick", help="small sizes, for CI"),
    as_json: bool = typer.Option(False, "--json"),
    out_dir: Path | None = typer.Option(None, "--out", help="directory for CSV, JSON and PNG files"),
):
    """Reproduce a paper's tables and figures with the paper's numbers beside ours."""
    from .progress import Progress
    from .render import render_report
    from .report import total_line

    names = [e.name for e in registry.experiments()] if name == "all" else [name]
    experiments = [registry.experiment(n) for n in names]
    progress = Progress(enabled=not as_json and sys.stderr.isatty())
    reports = []
    for exp in experiments:
        report = exp.run(quick=quick, out=out_dir, progress=progress)
        if out_dir is not None:
            report.write(out_dir)
        reports.append(report)
        if not as_json:
            render_report(report, out)
            out.print(report.summary_line(), markup=False)
    if as_json:
        _dump(reports[0].as_json() if len(reports) == 1 else [r.as_json() for r in reports])
    elif len(reports) > 1:
        out.print(total_line(reports), markup=False)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: usage errors become one line and exit status 2."""
    try:  # typer >= 0.20 vendors click
        from typer._click import exceptions as click_exceptions
    except ImportError:  # pragma: no cover
        from click import exceptions as click_exceptions

    try:
        code = app(args=argv, standalone_mode=False)
    except click_exceptions.NoArgsIsHelpError as exc:
        out.print(exc.ctx.get_help())
        code = 0
    except click_exceptions.ClickException as exc:  # usage errors, bad option values
        err.print(f"topocast: error: {exc.format_message()}", markup=False, highlight=False, soft_wrap=True)
        code = 2
    except KeyboardInterrupt:
        err.print("topocast: interrupted")
        code = 130
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
