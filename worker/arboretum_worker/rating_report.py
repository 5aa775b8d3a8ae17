"""``arena ratings`` as text: the batch fit of :mod:`arboretum_worker.fit` (Plackett-Luce with 95%
intervals) of a league's stored results, and its head-to-head table."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from arboretum_sdk.clitools import plural

from .fit import fit_ratings, head_to_head
from .store import MatchResult

__all__ = ["format_fit"]


def format_fit(league: str, results: Sequence[MatchResult], *, label: Callable[[str], str]) -> str:
    """The fitted ratings, best first, then the head-to-head table (row against column)."""
    fitted = fit_ratings(results)
    order = [row.version for row in fitted]
    names = {vid: label(vid) for vid in order}
    width = max(len("bot"), *(len(n) for n in names.values()))
    lines = [
        f"ratings of league {league}: Plackett-Luce fit of {plural(len(results), 'result')}",
        f"{'#':>2}  {'bot':<{width}}  {'rating':>7}  {'95% interval':>18}  {'games':>5}",
    ]
    for rank, row in enumerate(fitted, 1):
        interval = f"[{row.lower:7.1f}, {row.upper:7.1f}]"
        lines.append(
            f"{rank:>2}  {names[row.version]:<{width}}  {row.elo:7.1f}  {interval:>18}  "
            f"{row.games:>5}"
        )
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
