"""The ``topocast`` command: list, info, run, route, reproduce.

Bad input prints one line on stderr and exits 2 (before any long work: specs,
parameters, sizes and output locations are checked first); a failed
verification exits 1 with the first violation; SIGINT exits 130 and SIGTERM
143 at any moment, leaving no half-written file (all files are written to a
temporary name, then renamed; see :mod:`topocast.infra.supervise`).  ``--debug``
(anywhere on the line) or ``TOPOCAST_DEBUG=1`` shows the traceback of an error.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from .errors import TopocastError

if TYPE_CHECKING:
    from rich.console import Console

# Start-up time matters here: this module imports typer and nothing heavy; each command imports
# what it runs (rich's tables, the registry's modules, numpy work) when it runs.
app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Interconnection-network topologies and collective algorithms: build, verify, measure.")


class _Console:
    """A rich ``Console`` made on first use (importing rich costs start-up time ``--help`` need not pay)."""

    def __init__(self, stderr: bool = False):
        self._stderr = stderr
        self._console: Console | None = None

    def __getattr__(self, name: str):
        if self._console is None:
            from rich.console import Console

            stream = sys.stderr if self._stderr else sys.stdout
            self._console = Console(stderr=self._stderr, soft_wrap=not self._stderr, emoji=False, highlight=False,
                                    width=None if stream.isatty() else 160)
        return getattr(self._console, name)


out = _Console()
err = _Console(stderr=True)


def escape(text: str) -> str:
    """Text shown as is in a rich table (no markup)."""
    from rich.markup import escape as rich_escape

    return rich_escape(text)


def RichTable(*args, **kwargs):  # noqa: N802 - stands for rich's Table class
    """A rich ``Table`` (rich imported on first use)."""
    from rich.table import Table

    return Table(*args, **kwargs)

#: ``--debug`` or ``TOPOCAST_DEBUG=1``: let tracebacks through
DEBUG = False


def parse_size(text: str | None) -> float | None:
    """``'8G'`` -> bytes; ``None`` -> the default (half of RAM); NaN, infinities and sizes <= 0 are refused."""
    from .infra.memory import parse_size as parse

    return None if text is None else parse(text, "--max-memory")


def printable(text: str) -> str:
    """``text`` with control and other invisible characters escaped (``\\x1b``, ``\\u202e``), so echoed
    input can neither move the terminal's cursor nor split a one-line message."""
    import unicodedata

    out = []
    for ch in str(text):
        if unicodedata.category(ch)[0] == "C":
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
        else:
            out.append(ch)
    return "".join(out)


#: the longest error message printed (an echoed input of 100,000 characters is cut, not poured out)
MAX_MESSAGE = 2000


def _fail(message: str, code: int) -> None:
    text = printable(message)
    if len(text) > MAX_MESSAGE:
        text = text[:MAX_MESSAGE - 40] + f" ... ({len(text) - MAX_MESSAGE + 40} more characters)"
    err.print(f"topocast: error: {text}", markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Our warnings as one ``topocast: warning:`` line each; other libraries' only with ``--debug``."""
    from .errors import TopocastWarning

    if issubclass(category, TopocastWarning):
        err.print(f"topocast: warning: {printable(str(message))}", markup=False, highlight=False, soft_wrap=True)
    elif DEBUG:
        sys.stderr.write(f"{filename}:{lineno}: {category.__name__}: {message}\n")


def _guard(function):
    """Turn TopocastError into exit 2 and Ctrl-C into exit 130; no traceback unless ``--debug``."""
    import functools

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except typer.Exit:
            raise
        except KeyboardInterrupt:
            from .infra.fileio import remove_pending

            remove_pending()
            err.print("topocast: interrupted; files already written are complete, none is half-written")
            raise typer.Exit(130) from None
        except Exception as exc:
            if DEBUG:
                raise
            _fail(_one_line(exc), 2)

    return wrapper


def _one_line(exc: BaseException) -> str:
    """The one-line message of an error: ours as it is, anything else with its type and a hint."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    if isinstance(exc, TopocastError):
        return text or type(exc).__name__
    if isinstance(exc, MemoryError):
        return "out of memory: lower the size or pass a smaller --max-memory to be refused early"
    if isinstance(exc, OSError):
        where = f" '{exc.filename}'" if getattr(exc, "filename", None) else ""
        return f"cannot write{where}: {exc.strerror or text}"
    return f"unexpected {type(exc).__name__}: {text} (rerun with --debug for the traceback)"


def _checked(option: str, check, *args):
    """``check(*args)`` with its error message naming the command-line ``option``."""
    try:
        return check(*args)
    except TopocastError as exc:
        message = str(exc)
        for prefix in (option.lstrip("-") + ":", f"parameter '{option.lstrip('-')}'"):
            if message.startswith(prefix):
                message = message[len(prefix):].lstrip(" :")
        raise TopocastError(f"{option}: {message}") from None


def _dump(payload: Any) -> None:
    sys.stdout.write(json.dumps(payload, indent=2, default=str) + "\n")


# -- list -------------------------------------------------------------------
def _check_faults(value: str | None) -> str | None:
    """``--faults`` given empty names no fault: refused rather than read as the intact network."""
    if value is not None and not value.strip():
        raise typer.BadParameter("empty; give a fault spec such as links=0.05,seed=1 (docs/faults.md)")
    return value


#: the one ``--faults`` option of info, run, route, export and synthesize
FAULTS_OPTION = typer.Option(None, "--faults", callback=_check_faults,
                             help="failed links and routers, e.g. links=0.05,seed=1 or routers=5;9 (docs/faults.md)")


@app.command("list")
@_guard
def list_command(as_json: bool = typer.Option(False, "--json", help="machine-readable output")):
    """List topology families, algorithms and paper reproductions."""
    from .catalogue import catalogue

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
    csv: str | None = typer.Option(None, "--csv", help="write the distance distribution as CSV"),
    no_distances: bool = typer.Option(False, "--no-distances", help="skip diameter and distances"),
    max_memory: str | None = typer.Option(None, "--max-memory",
                                          help="refuse builds larger than this (default: half of RAM)"),
    properties: bool = typer.Option(False, "--properties",
                                    help="compute bisection, connectivity, girth up to the higher forced size caps"),
    faults: str | None = FAULTS_OPTION,
):
    """Nodes, links, degree, diameter, average distance, distance distribution, graph properties."""
    from .api import info as api_info
    from .infra.fileio import check_output_file, write_csv

    limit = parse_size(max_memory)
    if csv is not None:
        check_output_file(csv, "--csv")
        if no_distances:
            raise TopocastError("--csv: writes the distance distribution, which --no-distances skips; drop one")
    data = api_info(spec, distances=not no_distances, max_memory=limit, properties=True if properties else None,
                    faults=faults)
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
#: the command options that are not algorithm parameters (``--seed``, ``--engine``, ``--max-memory``)
COMMAND_OPTIONS = ("seed", "engine", "max_memory", "max-memory")


def parse_settings(settings: list[str]) -> dict[str, str]:
    """``["key=value", ...]`` of ``--set`` as a dict; malformed or repeated keys are refused."""
    values: dict[str, str] = {}
    for item in settings:
        key, sep, value = (part.strip() for part in item.partition("="))
        if not sep or not key:
            raise TopocastError(f"--set: expected key=value, got '{item}'")
        if key in values:
            raise TopocastError(f"--set: parameter '{key}' given twice")
        if key in COMMAND_OPTIONS:
            raise TopocastError(f"--set: '{key}' is an option of the command, not an algorithm parameter: "
                                f"write --{key.replace('_', '-')} {value or 'VALUE'}")
        values[key] = value
    return values


@app.command()
@_guard
def run(
    spec: str = typer.Argument(..., help="topology spec"),
    algorithm: str | None = typer.Argument(None, help="algorithm name (topocast list); omit with --schedule"),
    engine: str | None = typer.Option(
        None, "--engine", help="step, event, circuit, wormhole or frontier (default: the algorithm's first)"),
    schedule: str | None = typer.Option(None, "--schedule", help="replay a schedule file from `topocast synthesize`"),
    msccl: str | None = typer.Option(None, "--msccl", help="import, verify and measure an MSCCL XML algorithm"),
    mapping: str | None = typer.Option(None, "--mapping", help="with --msccl: the node of each rank, N0,N1,..."),
    lenient: bool = typer.Option(False, "--lenient", help="with --msccl: read a file without minBytes, maxBytes, "
                                                            "inplace or outofplace (older MSCCL tools), noting it"),
    settings: list[str] = typer.Option([], "--set", help="algorithm parameter key=value (repeatable)"),
    seed: int = typer.Option(0, "--seed", help="seed for every random choice"),
    as_json: bool = typer.Option(False, "--json"),
    csv: str | None = typer.Option(None, "--csv", help="write the per-step series (or the metrics) as CSV"),
    links: str | None = typer.Option(None, "--links", metavar="FILE.csv",
                                     help="write one row per directed link (src, dst, bytes, busy, transfers, peak, "
                                          "labels) and add the link-load summaries to the result"),
    max_memory: str | None = typer.Option(None, "--max-memory",
                                          help="refuse runs larger than this (default: half of RAM)"),
    faults: str | None = FAULTS_OPTION,
):
    """Run an algorithm, verify delivery, print metrics and the lower-bound ratio."""
    from .api import check_seed
    from .api import run as api_run
    from .infra.fileio import check_output_file, write_csv
    from .infra.progress import Progress

    seed = _checked("--seed", check_seed, seed)
    limit = parse_size(max_memory)
    if csv is not None:
        check_output_file(csv, "--csv")
    if links is not None:
        check_output_file(links, "--links")
        if msccl is not None:
            raise TopocastError("--links: per-link records of an --msccl run are not available yet; use "
                                "export-schedule to a schedule file and run --schedule")
    if (algorithm is not None) + (schedule is not None) + (msccl is not None) != 1:
        raise TopocastError("algorithm: give one of an algorithm name, --schedule FILE or --msccl FILE")
    if (mapping is not None or lenient) and msccl is None:
        raise TopocastError(f"--{'mapping' if mapping is not None else 'lenient'}: applies to an --msccl algorithm; "
                            "give --msccl FILE")
    if schedule is not None and faults is not None:
        raise TopocastError("--faults: does not apply to --schedule (a schedule file replays on the network it was "
                            "made for, with the faults it was synthesised with)")
    if msccl is not None and faults is not None:
        raise TopocastError("--faults: does not apply to --msccl (an imported algorithm runs on the intact network)")
    if schedule is not None and settings:
        raise TopocastError("--set: a schedule file carries its own model; --set does not apply to --schedule")
    what = algorithm or f"the schedule {schedule or msccl}"
    with Progress(enabled=not as_json and sys.stderr.isatty()).status(f"running {what} on {spec}"):
        if msccl is not None:
            from .interop.cli import run_msccl

            result = run_msccl(spec, msccl, engine, mapping, settings, limit, lenient)
        elif schedule is not None:
            from .synthesis import replay

            result = replay(spec, schedule, engine=engine or "event", max_memory=limit)
            if links is not None:
                _replay_links(result, spec, schedule, limit)
        elif algorithm is not None:  # exactly one of the three, checked above
            result = api_run(spec, algorithm, engine=engine, seed=seed, max_memory=limit,
                             params_from_text=True, links=links is not None, faults=faults,
                             **parse_settings(settings))
    if links is not None:
        from .measure.links import write_csv as write_links

        write_links(result.links, links)
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
        err.print(f"topocast: verification failed: {printable(_violation(data))}", markup=False, soft_wrap=True)
        raise typer.Exit(1)


def _replay_links(result, spec: str, schedule: str, limit: float | None) -> None:
    """Per-link records of a replayed schedule file (its topology and schedule read once more)."""
    from .measure.links import attach
    from .spec import build
    from .synthesis.fileformat import read

    topology = build(spec, max_memory=limit)
    attach(result, topology, read(schedule, topology, limit)[1])


def _violation(data: dict) -> str:
    """The first broken rule of a run that failed verification, in words."""
    if data.get("first_violation"):
        return str(data["first_violation"])
    if data.get("missing_deliveries"):
        return f"{data['missing_deliveries']} deliveries never happened"
    if data.get("redundant_receipts"):
        return f"{data['redundant_receipts']} receipts of messages the node already held (not exactly once)"
    return "not delivered exactly once"


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
    faults: str | None = FAULTS_OPTION,
):
    """Route one packet with the family's routing algorithm (BFS shortest path otherwise)."""
    from .execution.routing import route as do_route

    data = do_route(spec, source, target, max_memory=parse_size(max_memory), options=("--from", "--to"),
                    faults=faults)
    if as_json:
        _dump(data)
        return
    if data.get("note"):
        out.print(f"note: {data['note']}", markup=False)
    out.print(f"{data['router']}: {data['length']} hops (shortest {data['shortest']})")
    out.print(" -> ".join("(" + ",".join(map(str, lab)) + ")" for lab in data["path"]))


# -- compare ----------------------------------------------------------------
@app.command()
@_guard
def compare(
    specs: list[str] = typer.Argument(None, help="topology specs to compare (or use --terminals and --radix)"),
    terminals: int | None = typer.Option(None, "--terminals", help="target terminals: each family's nearest "
                                                                   "configuration is added"),
    radix: int | None = typer.Option(None, "--radix", help="router ports (terminals included) for --terminals"),
    families: list[str] = typer.Option([], "--family", help="a family to size for --terminals (repeatable; default "
                                                            "polarfly, slimfly, hyperx, dragonfly-plus, fattree, "
                                                            "jellyfish)"),
    messages: str = typer.Option("8,1048576", "--messages", help="small,large all-gather bytes per terminal"),
    pairs: int = typer.Option(16, "--pairs", help="router pairs sampled for edge-disjoint paths"),
    seed: int = typer.Option(0, "--seed", help="seed of the sampled pairs"),
    no_collectives: bool = typer.Option(False, "--no-collectives", help="skip the all-gather columns"),
    no_bisection: bool = typer.Option(False, "--no-bisection", help="skip the bisection and cut-bound columns"),
    as_json: bool = typer.Option(False, "--json"),
    csv: str | None = typer.Option(None, "--csv", help="write the table as CSV"),
    plot_file: str | None = typer.Option(None, "--plot", help="write the figure (PNG)"),
    max_memory: str | None = typer.Option(None, "--max-memory", help="refuse builds larger than this"),
):
    """Several networks side by side: size, cost, distances, bisection, paths, throughput bound, all-gather."""
    from .api import check_seed
    from .infra.fileio import check_output_file
    from .infra.progress import Progress
    from .outputs import compare as cmp

    seed = _checked("--seed", check_seed, seed)
    for path, option in ((csv, "--csv"), (plot_file, "--plot")):
        if path is not None:
            check_output_file(path, option)
    try:
        sizes = tuple(float(v) for v in messages.split(","))
    except ValueError:
        raise TopocastError(f"--messages: must be two sizes in bytes, small,large, got '{messages}'") from None
    settings = cmp.check_settings(cmp.Settings(messages=sizes, pairs=pairs, seed=seed,
                                               collectives=not no_collectives, bisection=not no_bisection,
                                               max_memory=parse_size(max_memory)))
    chosen, target = cmp.specs_for(list(specs or []), terminals, radix, families)
    result = cmp.compare(chosen, settings, target, Progress(enabled=not as_json and sys.stderr.isatty()))
    if csv is not None:
        cmp.write_csv(result, csv)
    if plot_file is not None:
        cmp.plot(result, plot_file)
    if as_json:
        _dump(result.as_json())
        return
    header, rows = cmp.text_rows(result)
    table = RichTable(title="topocast compare")
    for name in header:
        table.add_column(escape(name))
    for row in rows:
        table.add_row(*map(escape, row))
    out.print(table)
    for line in result.notes + [f"{r['spec']}: {n}" for r in result.rows for n in r["notes"]]:
        out.print(f"note: {line}", markup=False)


# -- export -----------------------------------------------------------------
@app.command()
@_guard
def synthesize(
    spec: str = typer.Argument(..., help="topology spec"),
    collective: str = typer.Argument(..., help="broadcast, allgather, alltoall, allreduce, reduce-scatter or reduce"),
    out_file: str = typer.Option(..., "--out", help="schedule file to write (JSON)"),
    settings: list[str] = typer.Option([], "--set", help="cost or port parameter key=value, as for `run`; also "
                                                          "chunks, restarts and root"),
    budget: float = typer.Option(300.0, "--budget", help="seconds the search may take"),
    seed: int = typer.Option(0, "--seed", help="seed for every random choice"),
    engine: str = typer.Option("event", "--engine", help="event (timed) or step (counted in steps)"),
    root: int | None = typer.Option(None, "--root", help="source of a broadcast, root of a reduce (default 0)"),
    exact: bool = typer.Option(False, "--exact", help="also solve for the optimal schedule of whole messages "
                                                      "(small networks, costs on a coarse time grid)"),
    as_json: bool = typer.Option(False, "--json"),
    max_memory: str | None = typer.Option(None, "--max-memory",
                                          help="refuse a synthesis larger than this (default: half of RAM)"),
    faults: str | None = FAULTS_OPTION,
):
    """Synthesise a verified schedule for a collective, with its lower bound and ratio, into a file."""
    from .api import check_seed
    from .synthesis import cli_synthesize

    seed = _checked("--seed", check_seed, seed)
    summary = cli_synthesize(spec, collective, out_file, sets=settings, budget=budget, seed=seed, engine=engine,
                             root=root, max_memory=parse_size(max_memory), exact=exact, faults=faults)
    if as_json:
        _dump(summary)
        return
    for key, value in summary.items():
        out.print(f"{key}: {_short(value)}", markup=False)


@app.command()
@_guard
def export(
    spec: str = typer.Argument(..., help="topology spec, e.g. torus:8x8 or graph:net.graphml"),
    out_file: Path = typer.Argument(..., metavar="OUT", help="file to write"),
    file_format: str | None = typer.Option(
        None, "--format", help="graphml, gml, json, edgelist, booksim-anynet (with its .cfg) or sst-anytopo "
                               "(GraphML with its .py config) (default: from OUT's extension)"),
    max_memory: str | None = typer.Option(None, "--max-memory",
                                          help="refuse builds larger than this (default: half of RAM)"),
    faults: str | None = FAULTS_OPTION,
):
    """Write a topology as GraphML, GML, node-link JSON, an edge list, BookSim2 anynet or SST anytopo files."""
    from .infra.progress import Progress
    from .spec import build
    from .topology.export import check_format, check_output
    from .topology.export import export as write_export

    sst = file_format is not None and file_format.strip().lower() == "sst-anytopo"
    fmt = "sst-anytopo" if sst else check_format(file_format, out_file)
    check_output(out_file)
    with Progress(enabled=sys.stderr.isatty()).status(f"writing {spec} as {fmt} to {out_file}"):
        topology = build(spec, max_memory=parse_size(max_memory), faults=faults)
        if fmt in ("sst-anytopo", "booksim-anynet"):
            from .interop.simulators import export_booksim, export_sst

            paths = (export_sst if sst else export_booksim)(topology, out_file)
            path: str | Path = " and ".join(str(p) for p in paths)
        else:
            path = write_export(topology, fmt, out_file)
    out.print(f"wrote {path} ({fmt}: {topology.num_nodes} nodes, {topology.num_edges} links)", markup=False)


@app.command("export-schedule")
@_guard
def export_schedule(
    spec: str = typer.Argument(..., help="topology spec"),
    algorithm: str | None = typer.Argument(None, help="algorithm name (topocast list); omit with --schedule"),
    schedule: str | None = typer.Option(None, "--schedule", help="a schedule file from `topocast synthesize`"),
    file_format: str = typer.Option(..., "--format", help="msccl-xml, chakra-et or mscclpp-json"),
    out_file: str = typer.Option(..., "--out", help="file to write (chakra-et: OUT.R.et per rank R)"),
    form: str = typer.Option("p2p", "--form", help="chakra-et: p2p (send/recv nodes) or collective"),
    settings: list[str] = typer.Option([], "--set", help="algorithm parameter key=value (repeatable)"),
    max_memory: str | None = typer.Option(None, "--max-memory",
                                          help="refuse runs larger than this (default: half of RAM)"),
):
    """Write an algorithm's schedule (or a synthesized one) as MSCCL XML, an MSCCL++ execution plan or Chakra
    execution traces."""
    from .interop.schedules import export_schedule as write_schedule

    paths = write_schedule(spec, out_file, file_format, algorithm=algorithm, schedule_file=schedule, form=form,
                           params=parse_settings(settings), params_from_text=True, max_memory=parse_size(max_memory))
    shown = str(paths[0]) if len(paths) == 1 else f"{paths[0]} ... {paths[-1]} ({len(paths)} files)"
    out.print(f"wrote {shown} ({file_format})", markup=False)


# -- sweep ------------------------------------------------------------------
@app.command()
@_guard
def sweep(
    grid: str = typer.Argument(..., metavar="FILE.toml", help="the grid: [sweep] specs, algorithms, seeds; [params]"),
    store: str | None = typer.Option(None, "--store", help="JSON-lines result store (default: FILE.jsonl)"),
    workers: int | None = typer.Option(None, "--workers", help="local worker processes (default: one per core)"),
    scheduler: str | None = typer.Option(
        None, "--scheduler", help="tcp://HOST:PORT of a Dask scheduler (default: $DASK_SCHEDULER_ADDRESS, "
                                  "else a local cluster)"),
    as_json: bool = typer.Option(False, "--json", help="print the summary: total, executed, skipped, failed"),
    max_memory: str | None = typer.Option(None, "--max-memory",
                                          help="refuse a grid or a local cluster larger than this (default: half "
                                               "of RAM)"),
):
    """Run a grid of runs on Dask, each stored once; a rerun executes only what is not stored.

    Exits 1 when a run of the grid failed or did not come back (saying how many and why), 0 when every run
    is stored as a success.
    """
    from .outputs.store import check_path
    from .sweep.grid import check_grid, check_scheduler, check_size, check_workers, failure_text, load_grid
    from .sweep.grid import sweep as run_sweep

    limit = parse_size(max_memory)
    check_workers(workers, max_memory=limit)
    check_scheduler(scheduler)
    grid_data = load_grid(Path(grid))
    check_size(grid_data, limit)
    check_grid(grid_data)
    store_path = check_path(store if store is not None else str(Path(grid).with_suffix(".jsonl")))
    summary = run_sweep(grid_data, store_path, scheduler=scheduler, workers=workers, max_memory=limit,
                        progress="off" if as_json else True)
    if as_json:
        _dump(summary)
    else:
        out.print(f"sweep: {summary['total']} runs: {summary['executed']} executed ({summary['failed']} failed), "
                  f"{summary['skipped']} already in {store_path}; {summary['seconds']:.1f} s", markup=False)
    if summary.get("store_skipped"):
        err.print(f"topocast: warning: skipped {printable(summary['store_skipped'])} of {store_path} (unusable "
                  "rows; their runs run again)", markup=False, soft_wrap=True)
    for line in summary["errors"][:5]:
        err.print(f"topocast: {printable(line)}", markup=False, soft_wrap=True)
    if len(summary["errors"]) > 5:
        err.print(f"topocast: ... and {len(summary['errors']) - 5} more", markup=False)
    if not summary["ok"]:
        err.print(f"topocast: sweep incomplete: {printable(failure_text(summary))}", markup=False, soft_wrap=True)
        raise typer.Exit(1)


# -- plot -------------------------------------------------------------------
@app.command()
@_guard
def plot(
    store: str = typer.Argument(..., metavar="SOURCE",
                                help="sweep: a result store (.jsonl); link-load, time-space: a run's RESULT.json or a "
                                     "SPEC"),
    algorithm: str | None = typer.Argument(None, help="link-load, time-space: the algorithm to run on SPEC"),
    kind: str = typer.Option("sweep", "--kind", help="sweep (a metric of a store), link-load (heat map of a run's "
                                                     "link loads) or time-space (a run's transfers over time)"),
    x: str | None = typer.Option(None, "--x", help="sweep: x column, a parameter (load) or N, seed, spec..."),
    y: str | None = typer.Option(None, "--y", help="sweep: y column, a metric of the runs (mean_latency, steps...)"),
    hue: str = typer.Option("algorithm", "--hue", help="sweep: one line per value of this column"),
    out_file: str | None = typer.Option(None, "--out", help="PNG to write (default: STORE_Y_vs_X.png for a sweep, "
                                                            "KIND.png otherwise)"),
    logx: bool = typer.Option(False, "--logx", help="sweep: logarithmic x axis"),
    logy: bool = typer.Option(False, "--logy", help="sweep: logarithmic y axis"),
    schedule: str | None = typer.Option(None, "--schedule", help="link-load, time-space: replay this schedule file "
                                                                 "on SPEC"),
    engine: str | None = typer.Option(None, "--engine", help="link-load, time-space: engine to run on"),
    settings: list[str] = typer.Option([], "--set", help="link-load, time-space: algorithm parameter key=value"),
    seed: int = typer.Option(0, "--seed", help="link-load, time-space: seed for every random choice"),
    max_memory: str | None = typer.Option(None, "--max-memory",
                                          help="refuse runs larger than this (default: half of RAM)"),
):
    """Plot a sweep's metric against a column (mean and 95% band across seeds), or one run's link-load heat map
    or time-space diagram."""
    if kind == "sweep":
        from .outputs.plot import plot as draw

        if x is None or y is None:
            raise TopocastError(f"{'--x' if x is None else '--y'}: a sweep plot needs --x and --y")
        if algorithm is not None or schedule is not None:
            raise TopocastError("--kind: a sweep plot reads a store; an ALGORITHM or --schedule needs --kind "
                                "link-load or time-space")
        path = draw(store, x, y, hue=hue or None, out=out_file, logx=logx, logy=logy)
        out.print(f"wrote {path}", markup=False)
        return
    from .api import check_seed
    from .infra.fileio import check_output_file
    from .view import load
    from .view.plots import KINDS
    from .view.plots import draw as draw_run

    if kind not in KINDS:
        raise TopocastError(f"--kind: must be sweep, {', '.join(KINDS)}; got '{kind}'")
    if x is not None or y is not None:
        raise TopocastError(f"--x: --x and --y are for a sweep plot, not --kind {kind}")
    seed = _checked("--seed", check_seed, seed)
    target = check_output_file(out_file if out_file is not None else f"{kind}.png", "--out")
    run = load(store, algorithm, schedule, engine, parse_settings(settings), seed, parse_size(max_memory))
    path = draw_run(kind, run, target)
    out.print(f"wrote {path}", markup=False)


# -- view -------------------------------------------------------------------
@app.command()
@_guard
def view(
    source: str = typer.Argument(..., metavar="SOURCE", help="a run's RESULT.json (run --json), or a topology SPEC"),
    algorithm: str | None = typer.Argument(None, help="the algorithm to run on SPEC (omit with --schedule or a "
                                                      "RESULT.json)"),
    out_file: str = typer.Option(..., "--out", help="the HTML page to write (one self-contained file)"),
    schedule: str | None = typer.Option(None, "--schedule", help="replay a schedule file from `topocast synthesize`"),
    engine: str | None = typer.Option(None, "--engine", help="step, event or wormhole (default: the algorithm's "
                                                             "first; event for --schedule)"),
    settings: list[str] = typer.Option([], "--set", help="algorithm parameter key=value (repeatable)"),
    seed: int = typer.Option(0, "--seed", help="seed for every random choice"),
    max_memory: str | None = typer.Option(None, "--max-memory",
                                          help="refuse runs larger than this (default: half of RAM)"),
):
    """Write an interactive page of a run: its network coloured by link load, played step by step or over time.

    The page needs no network connection: script and style are inside it.  Click a node to highlight the links
    its messages crossed; the slider and Play move through the run; the side panel holds the key figures, the
    hottest links and, when the cut bound binds, the cut (drawn dashed).
    """
    from .api import check_seed
    from .infra.fileio import check_output_file
    from .infra.progress import Progress
    from .view import load, write

    seed = _checked("--seed", check_seed, seed)
    target = check_output_file(out_file, "--out")
    with Progress(enabled=sys.stderr.isatty()).status(f"running and drawing {algorithm or schedule or source}"):
        run = load(source, algorithm, schedule, engine, parse_settings(settings), seed, parse_size(max_memory))
        path = write(run, target)
    out.print(f"wrote {path} ({run.result.spec}, {run.result.algorithm}, {run.result.engine} engine)", markup=False)
    if not run.result.verified:
        err.print(f"topocast: verification failed: {printable(_violation(run.result.to_json()))}", markup=False,
                  soft_wrap=True)
        raise typer.Exit(1)


# -- reproduce ----------------------------------------------------------------
@app.command()
@_guard
def reproduce(
    name: str = typer.Argument("all", help="reproduction name (topocast list), or 'all' (the default)"),
    quick: bool = typer.Option(False, "--quick", help="small sizes, for CI"),
    as_json: bool = typer.Option(False, "--json"),
    out_dir_text: str | None = typer.Option(
        None, "--out", help="directory for CSV, JSON, PNG files and report.html/.md (default ./topocast-results)"),
    scheduler: str | None = typer.Option(None, "--scheduler", help="tcp://HOST:PORT: run independent points there"),
    workers: int | None = typer.Option(None, "--workers", help="local worker processes for independent points"),
    tables: bool = typer.Option(False, "--tables", help="also print every table in the terminal (they are always "
                                                        "in the output folder)"),
):
    """Reproduce a paper's tables and figures with the paper's numbers beside ours.

    Always writes its results (per reproduction: tidy CSV, JSON, PNG figures; for the run: report.html,
    report.md, report.json) to --out, by default ./topocast-results, and says where at the start and the end.
    The terminal shows each reproduction's state while it runs (compiling included, on a first run), then
    what each paper's reproduction found and the summary; --tables prints the full tables too.
    """
    from . import registry
    from .experiments.reproduce import reproduce as run_reproductions
    from .infra.fileio import check_output_dir
    from .infra.progress import Board
    from .outputs.report_html import summary_lines, write_run

    if not isinstance(name, str) or not name.strip():
        raise TopocastError("reproduction: give a name from 'topocast list' or 'all'")
    names = registry.names("experiment") if name == "all" else [name]
    for n in names:
        registry.experiment(n)        # an unknown name is refused before any work
    from .sweep.grid import check_scheduler, check_workers, set_defaults

    set_defaults(scheduler=check_scheduler(scheduler), workers=check_workers(workers))
    out_dir = check_output_dir("topocast-results" if out_dir_text is None else out_dir_text, "--out")
    where = out if not as_json else err  # with --json, stdout holds the JSON only
    where.print(f"results: writing to {out_dir.absolute()}{os.sep}", markup=False)
    live = not as_json and sys.stderr.isatty()

    def show(report, seconds: float) -> None:
        if as_json:
            return
        if tables:
            from .outputs.render import render_report

            render_report(report, out)  # type: ignore[arg-type]  # out: a lazy proxy of a rich Console
        if not live:  # piped: one plain line per reproduction as it is done
            out.print(f"{report.name}: done in {seconds:.0f} s", markup=False)

    with Board(names, enabled=live) as board:
        reports = run_reproductions(names, quick, out_dir, None, done=show, board=board)
    files = write_run(reports, out_dir, quick=quick)
    if as_json:
        _dump(reports[0].as_json() if len(reports) == 1 else [r.as_json() for r in reports])
    else:
        _print_findings(reports)
        out.rule("[bold]Summary")
    for line in summary_lines(reports):
        where.print(line, markup=False)
    where.print(f"report: {files['html'].absolute()} (also {files['md'].name}, {files['json'].name}; "
                f"CSV, JSON and PNG files beside it in {out_dir.absolute()}{os.sep})", markup=False)


def _print_findings(reports) -> None:
    """Per reproduction, what it found: the sentences the report opens with, its refuted claims and the
    claims that depend on a reading (each on one line)."""
    from .outputs.report import findings

    for report in reports:
        found = findings(report)
        out.rule(f"[bold]{escape(report.title)}")
        out.print(f"Reproduced: {found['reproduced']}", markup=False)
        out.print(f"Refuted: {found['refuted']}", markup=False)
        for item in found["refuted_items"]:
            out.print(f"  - {item}", markup=False)
        out.print(f"Depends on the reading: {found['depends']}", markup=False)
        for item in found["depends_items"]:
            out.print(f"  - {item}", markup=False)
        for line in found["highlights"]:
            out.print(line, markup=False)


def _abort() -> tuple[type[BaseException], ...]:
    """Click's ``Abort`` (raised on Ctrl-C at a prompt), wherever this typer keeps it."""
    found = []
    for module in ("typer.exceptions", "typer._click.exceptions", "click.exceptions"):
        try:
            found.append(__import__(module, fromlist=["Abort"]).Abort)
        except (ImportError, AttributeError):
            continue
    return tuple(found)


def _run_app(args: list[str]) -> int:
    """Run the typer app on ``args``; usage errors become one line and exit status 2."""
    try:  # typer >= 0.20 vendors click
        from typer._click import exceptions as click_exceptions
    except ImportError:  # pragma: no cover
        from click import exceptions as click_exceptions  # type: ignore[no-redef]

    import logging
    import warnings

    warnings.showwarning = _show_warning
    if not DEBUG:  # Dask's log lines (a lost scheduler's reconnection tracebacks); the summary says what happened
        logging.getLogger("distributed").setLevel(logging.CRITICAL + 1)
    try:
        code = app(args=args, standalone_mode=False)
    except click_exceptions.NoArgsIsHelpError as exc:
        out.print(exc.ctx.get_help())
        code = 0
    except click_exceptions.ClickException as exc:  # usage errors, bad option values
        message = " ".join(exc.format_message().split())
        if message.startswith("Got unexpected extra argument"):
            message = "too many arguments: " + message.rsplit("(", 1)[-1].rstrip(")") + " (see --help)"
        err.print(f"topocast: error: {printable(message)}", markup=False, highlight=False, soft_wrap=True)
        code = 2
    except _abort():
        err.print("topocast: interrupted")
        code = 130
    except KeyboardInterrupt:
        err.print("topocast: interrupted")
        code = 130
    except BrokenPipeError:  # e.g. `topocast list | head -1`
        sys.stderr.close()
        code = 0
    return code if isinstance(code, int) else 0


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: usage errors become one line and exit status 2.

    From the console script (``argv`` None) the command runs in a watched child process so that
    SIGINT and SIGTERM end it at any moment (:mod:`topocast.infra.supervise`); ``main(argv)`` runs in process.
    """
    global DEBUG
    args = list(sys.argv[1:] if argv is None else argv)
    DEBUG = "--debug" in args or os.environ.get("TOPOCAST_DEBUG", "").strip() not in ("", "0")
    args = [a for a in args if a != "--debug"]
    if argv is None and hasattr(os, "fork") and os.environ.get("TOPOCAST_NO_SUPERVISOR", "") in ("", "0"):
        from .infra.supervise import supervise

        sys.exit(supervise(lambda: _run_app(args)))
    if argv is None:  # replace the early handlers: Ctrl-C now cleans up through KeyboardInterrupt
        import signal

        signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.exit(_run_app(args))


if __name__ == "__main__":
    main()
