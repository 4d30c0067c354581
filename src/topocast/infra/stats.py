"""Statistics of repeated measurements: the one confidence interval.

Every interval topocast reports (batch means of one wormhole run, the means
of several seeds in a reproduction, the bands of ``topocast plot``) is the
Student-t interval of a mean, computed here.
"""

from __future__ import annotations

import math

import numpy as np


def t_half_width(values, confidence: float = 0.95) -> float:
    """Half-width of the Student-t confidence interval of the mean of ``values``.

    ``t_{n-1, (1 + confidence) / 2} * s / sqrt(n)`` over the ``n`` finite
    values, ``s`` their sample standard deviation (``ddof=1``); NaN below two
    finite values.

    Parameters
    ----------
    values : array_like of float
        The measurements (non-finite ones are left out).
    confidence : float
        The interval's confidence level, default 95%.

    Returns
    -------
    float
        The half-width, or NaN.

    >>> round(t_half_width([11.0, 12.0, 13.0]), 4)
    2.4841
    >>> t_half_width([5.0])
    nan
    """
    from scipy.special import stdtrit  # Student's t quantile (what scipy.stats.t.ppf calls)

    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    n = len(v)
    if n < 2:
        return float("nan")
    return float(stdtrit(n - 1, (1.0 + confidence) / 2) * v.std(ddof=1) / math.sqrt(n))


__all__ = ["t_half_width"]
