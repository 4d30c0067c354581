"""Engine adapters: one module per engine, each ``PLAN`` (the plan type it runs) and
``measure(topology, plan, model, max_bytes) -> Outcome`` (engine run, shared verification, metrics, bound)."""
