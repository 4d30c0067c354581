"""Grids of independent runs on Dask.

* :mod:`.grid`: sweep files (``topocast sweep``), the executor and the resumable store's rows;
* :mod:`.points`: load-point sweeps for reproductions.
"""
