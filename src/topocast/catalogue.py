"""What the registry holds, as data (``topocast list --json``) and as the README's table."""

from __future__ import annotations

from . import registry


def _params(items) -> list[dict]:
    return [{"name": p.name, "kind": p.kind, "required": p.required,
             "default": None if p.required else p.default, "doc": p.doc} for p in items]


def catalogue() -> dict:
    """Families, algorithms and reproductions with their parameter schemas."""
    return {
        "families": [{"name": f.name, "aliases": list(f.aliases), "doc": f.doc, "example": f.example,
                      "params": _params(f.params)} for f in registry.families()],
        "algorithms": [{"name": a.name, "aliases": list(a.aliases), "collective": a.collective,
                        "families": list(a.families), "engines": list(a.engines), "doc": a.doc,
                        "paper": a.paper, "params": _params(a.params)} for a in registry.algorithms()],
        "reproductions": [{"name": e.name, "doc": e.doc, "paper": e.paper} for e in registry.experiments()],
    }


def markdown_tables() -> str:
    """The README's table of families and algorithms, generated from the registry."""
    data = catalogue()
    lines = ["| family | example spec | description |", "|---|---|---|"]
    for f in data["families"]:
        lines.append(f"| `{f['name']}` | `{f['example']}` | {f['doc']} |")
    lines += ["", "| algorithm | collective | runs on | engines | also known as |", "|---|---|---|---|---|"]
    for a in data["algorithms"]:
        fams = ", ".join(a["families"]) or "any"
        aliases = ", ".join(a["aliases"])
        lines.append(f"| `{a['name']}` | {a['collective']} | {fams} | {', '.join(a['engines'])} | {aliases} |")
    lines += ["", "| reproduction | source |", "|---|---|"]
    for e in data["reproductions"]:
        lines.append(f"| `{e['name']}` | {e['paper'] or e['doc']} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown_tables(), end="")
