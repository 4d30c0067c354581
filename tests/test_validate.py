"""The shared validator: property tests against the rule itself, and every family builder refusing bad numbers."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from topocast import registry
from topocast.errors import TopocastError
from topocast.infra.validate import choice, integer, integers, number, numbers
from topocast.registry import Param
from topocast.spec import parse_spec

names = st.from_regex(r"[a-z][a-z0-9_]{0,11}", fullmatch=True)
bounds = st.one_of(st.none(), st.integers(-50, 50))


def is_integral(x: float) -> bool:
    """The rule for integers, written independently of the validator."""
    return math.isfinite(x) and float(x).is_integer()


def refused(call, *needles):
    with pytest.raises(TopocastError) as info:
        call()
    message = str(info.value)
    assert "\n" not in message
    for needle in needles:
        assert needle in message, (needle, message)
    return message


@given(st.floats(allow_nan=True, allow_infinity=True), names)
def test_integer_accepts_exactly_the_finite_integral_floats(x, name):
    if is_integral(x):
        out = integer(x, name)
        assert type(out) is int and out == x
    else:
        refused(lambda: integer(x, name, owner="fam"), f"fam: parameter '{name}'", "integer")


@given(st.booleans(), names)
def test_integer_refuses_booleans(flag, name):
    refused(lambda: integer(flag, name), f"'{name}'")


@given(st.text(max_size=8), names)
def test_integer_refuses_strings(text, name):
    refused(lambda: integer(text, name), f"'{name}'")


@given(st.integers(-(2**70), 2**70), bounds, bounds, names)
def test_integer_returns_ints_in_range_unchanged(value, lo, hi, name):
    if (lo is None or value >= lo) and (hi is None or value <= hi):
        out = integer(value, name, minimum=lo, maximum=hi)
        assert type(out) is int and out == value
    else:
        refused(lambda: integer(value, name, minimum=lo, maximum=hi), f"'{name}'", "got")


@given(st.floats(allow_nan=True, allow_infinity=True), st.booleans(), names)
def test_number_refuses_nan_and_infinity_unless_allowed(x, allow_inf, name):
    if math.isnan(x) or (math.isinf(x) and not allow_inf):
        refused(lambda: number(x, name, allow_inf=allow_inf), f"'{name}'")
    else:
        out = number(x, name, allow_inf=allow_inf)
        assert type(out) is float and out == x


@given(st.booleans(), st.text(max_size=8), names)
def test_number_refuses_booleans_and_strings(flag, text, name):
    refused(lambda: number(flag, name), f"'{name}'")
    refused(lambda: number(text, name), f"'{name}'")


@given(st.lists(st.one_of(st.integers(-5, 20), st.floats(allow_nan=True, allow_infinity=True)), max_size=4))
def test_integers_checks_every_entry(values):
    ok = values and all(is_integral(v) and v >= 2 for v in values)
    if ok:
        assert integers(values, "dims", minimum=2) == tuple(int(v) for v in values)
    else:
        refused(lambda: integers(values, "dims", owner="mesh", minimum=2), "mesh: parameter 'dims'")


def test_numpy_scalars_are_numbers():
    assert integer(np.int64(7), "n") == 7 and type(integer(np.int64(7), "n")) is int
    assert integer(np.float64(4.0), "n") == 4
    assert number(np.float32(0.5), "load") == 0.5
    refused(lambda: integer(np.float64("nan"), "n"), "'n'")
    refused(lambda: integer(np.float64(2.5), "n"), "'n'")
    refused(lambda: number(np.float64("inf"), "load"), "'load'")


def test_messages_name_the_rule():
    assert refused(lambda: integers((1.5,), "dims", owner="mesh", minimum=2)) == \
        "mesh: parameter 'dims' must be integers >= 2, got 1.5"
    assert refused(lambda: integer(2, "n", owner="ccc", minimum=3, maximum=24)) == \
        "ccc: parameter 'n' must be in 3..24, got 2"
    assert refused(lambda: number(-1, "per_byte", minimum=0)) == "parameter 'per_byte' must be >= 0, got -1"
    refused(lambda: integers("4x4", "dims"), "'dims'", "sequence")
    refused(lambda: integers((), "dims"), "'dims'", "at least one")
    refused(lambda: numbers((1.0, float("nan")), "weights"), "'weights'", "finite")
    refused(lambda: choice("x", "engine", ("step", "wormhole"), owner="alg"), "alg: parameter 'engine'", "step")
    refused(lambda: choice(True, "flag", (0, 1)), "'flag'")
    assert choice(1, "flag", (0, 1)) == 1


@pytest.mark.parametrize("kind, text", [("int", "1.5"), ("int", "x"), ("float", "nan"), ("float", "inf"),
                                        ("dims", "4x1.5"), ("floats", "1/nan")])
def test_param_parse_refuses_with_the_parameter_name(kind, text):
    refused(lambda: Param("size", kind, minimum=1).parse(text, "fam"), "fam: parameter 'size'")


@pytest.mark.parametrize("kind, value", [("int", 1.5), ("int", float("nan")), ("int", True), ("int", "3"),
                                         ("float", float("nan")), ("float", True), ("float", "1"),
                                         ("dims", (4, 1.5)), ("dims", 4), ("floats", (1.0, float("inf")))])
def test_param_check_refuses_with_the_parameter_name(kind, value):
    refused(lambda: Param("size", kind, minimum=1).check(value, "fam"), "fam: parameter 'size'")


def test_param_check_normalises():
    assert Param("n", "int", minimum=1).check(4.0, "fam") == 4
    assert Param("x", "float").check(3, "fam") == 3.0
    assert Param("dims", "dims", minimum=2).check([4, 4.0], "fam") == (4, 4)
    assert Param("h", "int", None).check(None, "fam") is None


def _valid_kwargs(family):
    _, kwargs = parse_spec(family.example)
    defaults = {p.name: p.default for p in family.params if not p.required}
    return {**defaults, **kwargs}


FAMILIES = registry.families()
INT_CASES = [(f.name, p.name, bad) for f in FAMILIES for p in f.params if p.kind == "int"
             for bad in (1.5, float("nan"), True)]
DIMS_CASES = [(f.name, p.name, bad) for f in FAMILIES for p in f.params if p.kind == "dims"
              for bad in ((4, 1.5), (4, float("nan")), (True, 4), 1.5)]


@pytest.mark.parametrize("family_name, param, bad", INT_CASES + DIMS_CASES)
def test_every_builder_refuses_bad_numbers_naming_the_parameter(family_name, param, bad):
    family = registry.family(family_name)
    kwargs = dict(_valid_kwargs(family), **{param: bad})
    refused(lambda: family.builder(**kwargs), f"'{param}'")


@pytest.mark.parametrize("family_name, param, bad", INT_CASES)
def test_every_param_refuses_bad_numbers(family_name, param, bad):
    family = registry.family(family_name)
    refused(lambda: family.param(param).check(bad, family.name), f"{family.name}: parameter '{param}'")


def test_builders_called_directly():
    from topocast.topology.classic import hypercube, ring, torus
    from topocast.topology.eisenstein_jacobi import eisenstein_jacobi as ej

    refused(lambda: torus((4.5, 4)), "torus: parameter 'dims'")
    refused(lambda: ring(True), "ring: parameter 'n'")
    refused(lambda: hypercube(float("nan")), "hypercube: parameter 'n'")
    refused(lambda: ej(a=3, b=4, n=1.5), "ej: parameter 'n'")
    assert torus(4.0, 4).spec == "torus:4x4" and ej(3.0, 4).spec == "ej:a=3,b=4,n=1"
