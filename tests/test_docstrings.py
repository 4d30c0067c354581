"""Public functions of the API, the builders and the algorithms carry numpydoc docstrings.

An own check on the syntax tree (numpydoc is not a dependency): every public function, and every public
method of a public class, in ``api.py``, ``topology/`` and ``algorithms/`` has a docstring; one that takes
parameters has a ``Parameters`` section naming exactly its parameters; one that returns a value (or yields)
has a ``Returns`` (``Yields``) section; one that raises an exception itself has a ``Raises`` section.
Properties need only their summary line.  The examples in these docstrings run as doctests with the rest
of the package (``--doctest-modules`` in the pytest configuration).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "topocast"
MODULES = [PACKAGE / "api.py", *sorted((PACKAGE / "topology").glob("*.py")),
           *sorted((PACKAGE / "algorithms").glob("*.py"))]
SECTION = re.compile(r"^([A-Z][A-Za-z ]+)\n-{3,}\s*$", re.M)
#: numpydoc's sections, in the order a docstring gives them
ORDER = ("Attributes", "Parameters", "Returns", "Yields", "Raises", "Warns", "See Also", "Notes", "References",
         "Examples")


def _public_functions(tree: ast.Module):
    """``(qualified name, node)`` of the public functions and the public methods of public classes."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            yield node.name, node
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and not item.name.startswith("_"):
                    yield f"{node.name}.{item.name}", item


def _own_nodes(func: ast.FunctionDef):
    """The nodes of ``func``'s body, not descending into nested functions, lambdas or classes."""
    stack = list(func.body)
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                stack.append(child)


def _sections(doc: str) -> dict[str, str]:
    """Section title -> section text of a numpydoc docstring."""
    marks = list(SECTION.finditer(doc))
    return {m.group(1): doc[m.end():marks[i + 1].start() if i + 1 < len(marks) else len(doc)]
            for i, m in enumerate(marks)}


def _documented_names(text: str) -> set[str]:
    """Parameter names of a ``Parameters`` section: the unindented ``name : type`` lines."""
    names = set()
    for line in text.splitlines():
        if line and not line[0].isspace():
            head = line.split(" : ")[0].strip()
            names.update(n.strip().lstrip("*") for n in head.split(","))
    return names


def _problems(func: ast.FunctionDef, is_method: bool) -> list[str]:
    doc = ast.get_docstring(func)
    if not doc:
        return ["no docstring"]
    if any(ast.unparse(d).endswith(("property", "cached_property")) for d in func.decorator_list):
        return []
    sections = _sections(doc)
    problems = []
    if any(name not in ORDER for name in sections) or list(sections) != sorted(sections, key=ORDER.index):
        problems.append(f"sections {list(sections)} not numpydoc's, in its order")
    args = func.args
    names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    if is_method and names and names[0] in ("self", "cls") and not any(
            ast.unparse(d) == "staticmethod" for d in func.decorator_list):
        names = names[1:]
    names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    if names:
        documented = _documented_names(sections.get("Parameters", ""))
        if documented != set(names):
            problems.append(f"Parameters {sorted(documented)} != signature {sorted(names)}")
    own = list(_own_nodes(func))
    yields = any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in own)
    returns = any(isinstance(n, ast.Return) and n.value is not None
                  and not (isinstance(n.value, ast.Constant) and n.value.value is None) for n in own)
    if yields and "Yields" not in sections:
        problems.append("no Yields section")
    if returns and not yields and "Returns" not in sections:
        problems.append("no Returns section")
    if any(isinstance(n, ast.Raise) and n.exc is not None for n in own) and "Raises" not in sections:
        problems.append("no Raises section")
    return problems


def _all_problems() -> list[str]:
    found = []
    for path in MODULES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for name, func in _public_functions(tree):
            for problem in _problems(func, "." in name):
                found.append(f"{path.relative_to(PACKAGE)}:{func.lineno} {name}: {problem}")
    return found


def test_public_functions_document_parameters_returns_and_raises():
    problems = _all_problems()
    assert not problems, f"{len(problems)} docstring problems:\n" + "\n".join(problems)


@pytest.mark.parametrize("doc, expected", [
    ('"""Sum.\n\n    Parameters\n    ----------\n    a, b : int\n        Terms.\n\n    Returns\n    -------\n'
     '    int\n        The sum.\n    """', []),
    ('"""Sum.\n\n    Parameters\n    ----------\n    a : int\n        A term.\n    """',
     ["Parameters ['a'] != signature ['a', 'b']", "no Returns section"]),
    ('"""Sum."""', ["Parameters [] != signature ['a', 'b']", "no Returns section"]),
    ('"""Sum.\n\n    Returns\n    -------\n    int\n        The sum.\n\n    Parameters\n    ----------\n'
     '    a, b : int\n        Terms.\n    """', ["sections ['Returns', 'Parameters'] not numpydoc's, in its order"]),
])
def test_the_check_finds_missing_sections(doc, expected):
    """The check itself: a complete docstring passes, a missing parameter or section is reported."""
    func = ast.parse(f"def add(a, b):\n    {doc}\n    return a + b\n").body[0]
    assert _problems(func, False) == expected
