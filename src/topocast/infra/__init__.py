"""Infrastructure every layer may use, importing nothing above it.

* :mod:`.validate`: the one parameter validator; :mod:`.fileio`: safe reads and atomic writes;
* :mod:`.memory` and :mod:`.footprint`: the one memory guard;
* :mod:`.progress` and :mod:`.supervise`: progress lines, signals and the run's supervisor;
* :mod:`.stats` (the one confidence interval), :mod:`.bits`, :mod:`.heap`, :mod:`.parallel` (numba kernels).
"""
