"""``topocast plot STORE --x PARAM --y METRIC [--hue COLUMN]``: lines with 95% confidence bands across seeds.

A column is looked up in a store row (``spec``, ``algorithm``, ``engine``, ``seed``, ``family``: the
spec's family, ``N``: the node count), then in the parameters the grid gave, then in the run's result
(``nodes``, any metric such as ``mean_latency`` or ``makespan``), then in the result's resolved
``params``.  Each line is one value of ``hue`` (default: ``algorithm``) together with the values of
every other column that varies in the store (the seed excepted); each point is the mean over the
seeds at that ``x`` with a Student-t 95% band.  Failed runs and runs without the metric are left out.

Store lines that cannot be used (malformed rows, lines that are not store rows) are skipped with a
:class:`~topocast.errors.TopocastWarning` saying how many and why.  Rows of several topocast versions
are never averaged together: ``version`` then splits the lines like any other varying column, and a
warning says so.
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import Any

from ..errors import TopocastError, TopocastWarning

_MISSING = object()


def column(row: dict, name: str) -> Any:
    """The value of column ``name`` in a store row (``_MISSING`` if absent)."""
    result = row.get("result") or {}
    if name == "family":
        return str(row.get("spec", "")).split(":")[0]
    if name == "N":
        name = "nodes"
    for source in (row, row.get("params") or {}, result, result.get("params") or {}):
        if name in source and name not in ("params", "result"):
            return source[name]
    return _MISSING


def _label_value(value: Any) -> Any:
    return json_text(value) if isinstance(value, (list, dict)) else value


def json_text(value: Any) -> str:
    import json

    return json.dumps(value, sort_keys=True)


def series(rows: list[dict], x: str, y: str, hue: str | None = "algorithm") -> dict[str, dict[Any, list[float]]]:
    """``{line label: {x value: [y per seed]}}`` from the rows that ran and have both columns."""
    ok = [r for r in rows if r.get("status") == "ok"]
    if not ok:
        raise TopocastError("plot: the store has no successful run")
    for name, option in ((x, "--x"), (y, "--y")) + (((hue, "--hue"),) if hue else ()):
        if all(column(r, name) is _MISSING for r in ok):
            known = sorted(({k for r in ok[:50] for k in (r.get("params") or {})}
                            | {k for r in ok[:50] for k, v in (r.get("result") or {}).items()
                               if isinstance(v, (int, float)) and not isinstance(v, bool)}) - {"seed"})
            raise TopocastError(f"{option}: no column '{name}' in the store (columns include: "
                                f"spec, algorithm, engine, seed, family, N, {', '.join(known)})")
    # other grid columns that vary split the lines too
    grid_columns = ["spec", "faults", "algorithm", "engine", "version"]
    grid_columns += sorted({k for r in ok for k in (r.get("params") or {})})
    varying = [c for c in grid_columns if c not in (x, hue)
               and len({json_text(column(r, c)) for r in ok if column(r, c) is not _MISSING}) > 1]
    lines: dict[str, dict[Any, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in ok:
        xv, yv = column(r, x), column(r, y)
        if xv is _MISSING or xv is None or not isinstance(yv, (int, float)) or isinstance(yv, bool):
            continue
        if not math.isfinite(float(yv)):
            continue
        parts = [] if not hue else [str(_label_value(column(r, hue)))]
        parts += [f"{c}={_label_value(column(r, c))}" for c in varying if column(r, c) is not _MISSING]
        lines[", ".join(parts) or y][_label_value(xv)].append(float(yv))
    if not lines:
        raise TopocastError(f"--y: no successful run has a numeric '{y}'")
    return lines


def band(values: list[float]) -> tuple[float, float]:
    """Mean and the half-width of its Student-t 95% confidence interval (0 for one value).

    Parameters
    ----------
    values : list of float
        The seeds' values at one ``x``.

    Returns
    -------
    tuple of float
        ``(mean, half-width)``: :func:`topocast.infra.stats.t_half_width`, 0 below two values.
    """
    from ..infra.stats import t_half_width

    n = len(values)
    mean = sum(values) / n
    return mean, (t_half_width(values) if n >= 2 else 0.0)


def plot(store: str | Path, x: str, y: str, hue: str | None = "algorithm", out: str | Path | None = None,
         logx: bool = False, logy: bool = False) -> Path:
    """Draw ``y`` against ``x`` from the store at ``store``, one line per ``hue``; write a PNG, return its path."""
    import warnings

    from ..infra.fileio import check_input_file, check_output_file, save_figure
    from .store import scan

    store = check_input_file(store, "STORE")
    out_path = check_output_file(out if out is not None else store.with_name(f"{store.stem}_{y}_vs_{x}.png"),
                                 "--out")
    found = scan(store)
    if not found.rows:
        why = f" (line {found.foreign[0]}: {found.foreign[1]})" if found.foreign else ""
        raise TopocastError(f"STORE: '{store}' holds no topocast store row{why}")
    if found.skipped_text():
        warnings.warn(f"plot: skipped {found.skipped_text()} in {store}", TopocastWarning, stacklevel=2)
    versions = sorted({str(r.get("version")) for r in found.rows if r.get("status") == "ok"})
    if len(versions) > 1:
        warnings.warn(f"plot: the store holds runs of topocast {', '.join(versions)}; each version gets its "
                      "own lines", TopocastWarning, stacklevel=2)
    lines = series(found.rows, x, y, hue)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, ax = plt.subplots(figsize=(6.4, 4.4))
    numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for pts in lines.values() for v in pts)
    categories = sorted({str(v) for pts in lines.values() for v in pts}) if not numeric else []
    for label, points in sorted(lines.items()):
        xs = sorted(points) if numeric else sorted(points, key=str)
        stats = [band(points[v]) for v in xs]
        pos = xs if numeric else [categories.index(str(v)) for v in xs]
        means = [m for m, _ in stats]
        line, = ax.plot(pos, means, "o-", markersize=4, label=label)
        if any(h > 0 for _, h in stats):
            ax.fill_between(pos, [m - h for m, h in stats], [m + h for m, h in stats], color=line.get_color(),
                            alpha=0.2, linewidth=0)
    if not numeric:
        ax.set_xticks(range(len(categories)), categories, rotation=30, ha="right")
    if logx and numeric:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.set_title(f"{y} against {x} (mean and 95% band over seeds)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return save_figure(figure, out_path)
