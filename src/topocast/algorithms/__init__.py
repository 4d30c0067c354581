"""Collective algorithms: each module builds Schedules and registers itself."""
