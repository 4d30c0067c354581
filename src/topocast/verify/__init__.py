"""Verification: what a run's trace proves, checked after the engine.

* :mod:`.delivery`: every message reaches every node that needs it exactly once (all engines);
* :mod:`.reduction`: every node ends with every contribution exactly once (allreduce, reduce-scatter, reduce).
"""
