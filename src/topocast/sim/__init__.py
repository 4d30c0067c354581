"""Engines: each reads a Schedule (and a model) and returns a trace."""

from .models import CostModel, PortModel

__all__ = ["CostModel", "PortModel"]
