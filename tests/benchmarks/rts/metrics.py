"""Safety, mutation-safety, selection and cost of each selector over benchmark rows, as tables.

A row is one mutation: its kind, the failing suite ids (ground truth, minus tests that fail on
the clean tree too), the suite size, and per selector the ids it selected and its cost.

* safety = Σ|selected ∩ failing| / Σ|failing| over breaking mutations;
* mutation-safety = share of breaking mutations whose failing tests were all selected;
* selection = mean |selected| / |suite| over all mutations (and over ``rename-local`` alone,
  where the ideal is 0 because nothing can break).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

AIMS = (
    "aims (issue 10): safety ≥ 0.995 and mutation-safety ≥ 0.98 with record (≥ 0.95 static); "
    "selection below testmon's; 0 for a local rename"
)


def summarize(rows: Iterable[dict[str, Any]], selector: str) -> dict[str, Any] | None:
    """The metrics of ``selector`` over ``rows`` (``None`` if it ran on none of them)."""
    picked = [r for r in rows if r["valid"] and r["selectors"].get(selector) is not None]
    if not picked:
        return None
    hit = total = safe = breaking = 0
    shares: list[float] = []
    local: list[float] = []
    walls: list[float] = []
    cpus: list[float] = []
    errors = 0
    for r in picked:
        s = r["selectors"][selector]
        chosen = set(s["selected"])
        failing = set(r["failing"])
        if failing:
            breaking += 1
            hit += len(chosen & failing)
            total += len(failing)
            safe += failing <= chosen
        share = len(chosen) / r["suite_size"] if r["suite_size"] else 0.0
        shares.append(share)
        if r["kind"] == "rename-local":
            local.append(share)
        walls.append(s["wall"])
        cpus.append(s["cpu"])
        errors += bool(s["error"])
    return {
        "mutations": len(picked),
        "breaking": breaking,
        "safety": hit / total if total else None,
        "mutation_safety": safe / breaking if breaking else None,
        "selection": sum(shares) / len(shares),
        "selection_rename_local": sum(local) / len(local) if local else None,
        "wall": sum(walls) / len(walls),
        "cpu": sum(cpus) / len(cpus),
        "errors": errors,
    }


def _f(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def table(rows: list[dict[str, Any]], selectors: Iterable[str], notes: dict[str, str]) -> str:
    """A markdown table: one line per selector."""
    out = [
        "| selector | safety | mutation-safety | selection | selection, rename-local "
        "| wall s / mutation | CPU s / mutation | errors |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name in selectors:
        m = summarize(rows, name)
        if m is None:
            out.append(f"| {name} | {notes.get(name, 'n/a')} | | | | | | |")
            continue
        out.append(
            f"| {name} | {_f(m['safety'])} | {_f(m['mutation_safety'])} | {_f(m['selection'])} "
            f"| {_f(m['selection_rename_local'])} | {_f(m['wall'], 2)} | {_f(m['cpu'], 2)} "
            f"| {m['errors']} |"
        )
    return "\n".join(out)


def kind_table(rows: list[dict[str, Any]], selectors: list[str], kinds: Iterable[str]) -> str:
    """Per mutation kind: mutations (breaking) and, per selector, safety / mutation-safety /
    selection."""
    head = "| kind | mutations (breaking) | " + " | ".join(selectors) + " |"
    out = [head, "|---|---:|" + "---:|" * len(selectors)]
    for kind in kinds:
        these = [r for r in rows if r["kind"] == kind and r["valid"]]
        if not these:
            continue
        breaking = sum(bool(r["failing"]) for r in these)
        cells = []
        for name in selectors:
            m = summarize(these, name)
            cells.append(
                "n/a"
                if m is None
                else f"{_f(m['safety'], 2)} / {_f(m['mutation_safety'], 2)} / "
                f"{_f(m['selection'], 3)}"
            )
        out.append(f"| {kind} | {len(these)} ({breaking}) | " + " | ".join(cells) + " |")
    return "\n".join(out)
