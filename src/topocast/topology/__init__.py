"""Topology builders: one module per family, each registering itself."""

from .core import Codec, MixedRadixCodec, Topology
from .classic import complete, hypercube, mesh, path, ring, torus
from .product import cartesian_product

__all__ = ["Codec", "MixedRadixCodec", "Topology", "cartesian_product", "complete", "hypercube",
           "mesh", "path", "ring", "torus"]
