"""Topology builders: one module per family, each registering itself."""

from .classic import complete, hypercube, mesh, path, ring, torus
from .core import Codec, MixedRadixCodec, Topology
from .product import cartesian_product

__all__ = ["Codec", "MixedRadixCodec", "Topology", "cartesian_product", "complete", "hypercube",
           "mesh", "path", "ring", "torus"]
