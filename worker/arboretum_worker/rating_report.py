"""``arena ratings`` as text: the batch fit of :mod:`arboretum_worker.fit` (Plackett-Luce with 95%
intervals) of a league's stored results, a note when the results alone leave ratings unbounded
(the prior holds them), and the head-to-head table."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from arboretum_sdk.clitools import plural

from .fit import Rankings, Unbounded, fit, games_of, head_to_head
from .store import MatchResult

__all__ = ["format_fit", "prior_note"]

SHOWN = 8
"""Names listed per group in the note (then "and N more")."""


def _names(group: Sequence[str], label: Callable[[str], str]) -> str:
    shown = ", ".join(label(v) for v in group[:SHOWN])
    return shown if len(group) <= SHOWN else f"{shown} and {len(group) - SHOWN} more"


def prior_note(unbounded: Unbounded, label: Callable[[str], str], prior: float = 2.0) -> list[str]:
    """Lines saying what the results alone leave unbounded, so that the fit's prior decides it
    (none when the results bound every rating)."""
    if not unbounded:
        return []
    lines = [
        f"note: only the prior ({plural(int(prior), 'virtual draw')} of each version against "
        "1500) keeps these ratings finite:"
    ]
    for group in unbounded.never_below:
        if len(group) == 1:
            lines.append(
                f"  {label(group[0])} ranked first (alone or tied) in every game it played"
            )
        else:
            lines.append(f"  {_names(group, label)}: never ranked below a version outside them")
    for group in unbounded.never_above:
        if len(group) == 1:
            lines.append(f"  {label(group[0])} ranked last (alone or tied) in every game it played")
        else:
            lines.append(f"  {_names(group, label)}: never ranked above a version outside them")
    if unbounded.apart:
        groups = " | ".join(_names(group, label) for group in unbounded.apart)
        lines.append(
            f"  {plural(len(unbounded.apart), 'group')} never met, directly or through others: "
            f"{groups} (the prior puts each group's mean near 1500)"
        )
    return lines


def format_fit(league: str, results: Sequence[MatchResult], *, label: Callable[[str], str]) -> str:
    """The fitted ratings, best first, a note on what the prior decides (if anything), then the
    head-to-head table (row against column)."""
    games = games_of(results)
    fitted_all = fit(Rankings().extend(games))
    fitted = fitted_all.ratings()
    order = [row.version for row in fitted]
    names = {vid: label(vid) for vid in order}
    width = max(len("bot"), *(len(n) for n in names.values()))
    lines = [
        f"ratings of league {league}: Plackett-Luce fit of the results of "
        f"{plural(len(results), 'match', 'matches')} ({plural(len(games), 'game')})",
        f"{'#':>2}  {'bot':<{width}}  {'rating':>7}  {'95% interval':>18}  {'games':>5}",
    ]
    for rank, row in enumerate(fitted, 1):
        interval = f"[{row.lower:7.1f}, {row.upper:7.1f}]"
        lines.append(
            f"{rank:>2}  {names[row.version]:<{width}}  {row.elo:7.1f}  {interval:>18}  "
            f"{row.games:>5}"
        )
    lines += prior_note(fitted_all.unbounded, names.__getitem__)
    table = head_to_head(results)
    cell = max(9, *(len(n) for n in names.values()))
    lines += ["", "head to head (row against column: wins-draws-losses)"]
    lines.append(" " * width + "  " + "  ".join(names[v][:cell].rjust(cell) for v in order))
    for a in order:
        cells = []
        for b in order:
            rec = table.get((a, b))
            text = "-" if a == b or rec is None else f"{rec.wins}-{rec.draws}-{rec.losses}"
            cells.append(text.rjust(cell))
        lines.append(f"{names[a]:<{width}}  " + "  ".join(cells))
    return "\n".join(lines)
