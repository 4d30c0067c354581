"""One timing model fitted to printed times by least squares (the Galaxyfly paper's Tables 3-5).

The Galaxyfly paper states 16 Gbps links and 160-byte packets but not the rest
of its timing model, so its printed times cannot be held against ours cell by
cell.  What can be measured is how close one consistent model gets to all of
them at once: our runs with three free constants, a start-up per transfer, a
time per byte (the bandwidth) and a time per hop, fitted to every printed
time.  The fit minimises the sum of squared relative residuals
``model / printed - 1`` (the printed times span 1,800 to 178,700).

A run's times are piecewise linear in the three constants (each is the
length of a chain of transfers and hops) and scale with them together.  So
the fit starts from the non-negative linear least squares of the times'
gradients at a starting point (:func:`scipy.optimize.lsq_linear`) and is then
refined on the runs themselves (:func:`scipy.optimize.least_squares`, whose
finite-difference Jacobian is the gradient of the chains in play).  The
residuals reported are those of times re-run at the fitted constants, never
of the linearisation.  Everything is deterministic.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

#: the fitted constants, in this order
CONSTANTS = ("startup", "per_byte", "per_hop")
#: the smallest value of a constant, in units of its starting value (the engine needs positive costs)
FLOOR = 1e-6
#: at most this many refinement steps (each re-runs every time once per free constant and once more)
MAX_STEPS = 12


@dataclass(frozen=True)
class Fit:
    """The fitted constants and what the model gives with them.

    Attributes
    ----------
    constants : numpy.ndarray
        Start-up (s), time per byte (s/B), time per hop (s).
    free : tuple of bool
        Which constants were fitted (the others kept their starting value).
    times : numpy.ndarray
        The model's times at ``constants`` (s), one per printed cell.
    residuals : numpy.ndarray
        ``times / printed - 1`` per cell.
    evaluations : int
        How many times every run was evaluated.
    """

    constants: np.ndarray
    free: tuple[bool, ...]
    times: np.ndarray
    residuals: np.ndarray
    evaluations: int

    @property
    def rms(self) -> float:
        """Root mean square of the relative residuals."""
        return float(np.sqrt(np.mean(self.residuals ** 2)))

    @property
    def worst(self) -> int:
        """Index of the cell with the largest relative residual in magnitude."""
        return int(np.argmax(np.abs(self.residuals)))

    def within(self, tolerance: float) -> int:
        """How many cells the model meets within ``tolerance`` (relative)."""
        return int(np.sum(np.abs(self.residuals) <= tolerance))

    @property
    def bandwidth(self) -> float:
        """The fitted bandwidth in bits per second."""
        return 8.0 / float(self.constants[1])


class _Counted:
    """``evaluate`` with its calls counted and its results kept, so a point is run once."""

    def __init__(self, evaluate: Callable[[np.ndarray], np.ndarray]):
        self.evaluate, self.calls = evaluate, 0
        self.seen: dict[Any, Any] = {}

    def __call__(self, theta: np.ndarray) -> np.ndarray:
        key = tuple(float(t) for t in theta)
        if key not in self.seen:
            self.calls += 1
            self.seen[key] = np.asarray(self.evaluate(np.array(key)), dtype=float)
        return self.seen[key]


def gradient(evaluate: Callable[[np.ndarray], np.ndarray], theta: np.ndarray, step: float = 1e-3) -> np.ndarray:
    """Forward-difference gradient of every time with respect to every constant at ``theta`` (one column each).

    Exact where no chain of transfers overtakes another within the step, since times are piecewise linear.
    """
    base = evaluate(theta)
    columns = []
    for j in range(len(theta)):
        h = step * theta[j]
        moved = theta.copy()
        moved[j] += h
        columns.append((evaluate(moved) - base) / h)
    return np.stack(columns, axis=1)


def _linear_start(evaluate, printed: np.ndarray, start: np.ndarray, free: np.ndarray) -> np.ndarray:
    """Multipliers of ``start`` for the free constants from the linearised model at ``start``."""
    from scipy.optimize import lsq_linear

    grad = gradient(evaluate, start)
    fixed = grad[:, ~free] @ start[~free]
    a = grad[:, free] * start[free] / printed[:, None]
    b = 1.0 - fixed / printed
    return np.maximum(lsq_linear(a, b, bounds=(0.0, np.inf)).x, FLOOR)


def fit_times(evaluate: Callable[[np.ndarray], np.ndarray], printed, start, free=(True, True, True)) -> Fit:
    """Fit the constants ``free`` of a timing model to ``printed`` times by least squares.

    Parameters
    ----------
    evaluate : callable
        ``evaluate(theta) -> times``: the model's time (s) for every printed cell, with constants ``theta``
        (start-up s, per byte s/B, per hop s).
    printed : array_like
        The printed times (s), one per cell.
    start : array_like
        The starting constants; a constant not ``free`` keeps its value.
    free : tuple of bool
        Which of the three constants to fit.

    Returns
    -------
    Fit
        The fitted constants and the model's times and relative residuals there.

    Examples
    --------
    >>> hops = np.array([[1.0, 100.0, 2.0], [2.0, 50.0, 3.0]])
    >>> fit = fit_times(lambda t: hops @ t, hops @ [2e-6, 1e-9, 5e-7], [1e-6, 5e-10, 1e-7])
    >>> bool(fit.rms < 1e-6)
    True
    """
    from scipy.optimize import least_squares

    printed, start = np.asarray(printed, dtype=float), np.asarray(start, dtype=float)
    mask = np.asarray(free, dtype=bool)
    counted = _Counted(evaluate)

    def constants(x: np.ndarray) -> np.ndarray:
        theta = start.copy()
        theta[mask] = x * start[mask]
        return theta

    def residuals(x: np.ndarray) -> np.ndarray:
        return counted(constants(x)) / printed - 1.0

    x0 = _linear_start(counted, printed, start, mask)
    result = least_squares(residuals, x0, bounds=(FLOOR, np.inf), x_scale=x0, diff_step=1e-3,
                           max_nfev=MAX_STEPS)
    best = min((x0, result.x), key=lambda x: float(np.sum(residuals(x) ** 2)))
    theta = constants(best)
    times = counted(theta)
    return Fit(theta, tuple(bool(f) for f in mask), times, times / printed - 1.0, counted.calls)
