"""A plain-text rendering of a replay, for ``arena replay show``."""

from __future__ import annotations

from typing import Any

from arboretum import ArboretumError, Card, Cell, ReplayError, Species
from arboretum.grid import Arboretum

__all__ = ["render_replay"]


def render_replay(doc: dict[str, Any]) -> str:
    """The replay turn by turn; :class:`ReplayError` naming what is missing or malformed."""
    try:
        return _render(doc)
    except KeyError as exc:
        raise ReplayError(f"cannot show this replay: a field {exc.args[0]!r} is missing") from None
    except (TypeError, ValueError, AttributeError, IndexError, ArboretumError) as exc:
        raise ReplayError(f"cannot show this replay: it is malformed ({exc})") from None


def _render(doc: dict[str, Any]) -> str:
    seats = [s["bot"] for s in doc["seats"]]
    lines = [
        f"match {doc['match_id']} game {doc['game_index']}  seed {doc['seed']}  "
        f"engine {doc['engine']['version']}",
        "species: " + ", ".join(Species(s).display for s in doc["species"]),
        "seats: " + ", ".join(f"{i}={name}" for i, name in enumerate(seats)),
        "",
    ]
    for i, hand in enumerate(doc["hands"]):
        lines.append(f"dealt to seat {i}: {' '.join(hand)}")
    arbs: list[dict[Cell, Card]] = [{} for _ in seats]
    turn = -1
    for step in doc["steps"]:
        if step["turn"] != turn:
            turn = step["turn"]
            lines.append(f"\nturn {turn} (seat {step['seat']})")
        kind = step["kind"]
        if kind == "draw":
            where = "deck" if step["source"] == "deck" else f"pile {step['pile']}"
            text = f"  draw {step['card']} from {where}"
        elif kind == "play":
            cell = Cell(*step["cell"])
            arbs[step["seat"]][cell] = Card.parse(step["card"])
            discard = step["discard"] or "nothing (second draw skipped)"
            text = f"  play {step['card']} at {cell}, discard {discard}"
        else:
            text = f"  {kind}: {step.get('reason', '')}"
        if "ms" in step:
            text += f"  [{step['ms']:.1f} ms]"
        if "fault" in step:
            text += f"  FALLBACK after {step['fault']['kind']}: {step['fault']['reason']}"
        lines.append(text)
    lines.append("\nfinal arboretums:")
    for i, arb in enumerate(arbs):
        lines.append(f"seat {i} ({seats[i]}):")
        lines.append(Arboretum(arb).render())
    if "result" not in doc and doc.get("complete") is False:
        stopped = doc.get("stopped")
        lines.append(f"\nno result: the game did not finish{f' ({stopped})' if stopped else ''}")
        return "\n".join(lines)
    lines.append("\nscoring:")
    for seat in doc["result"]["seats"]:
        lines.append(
            f"seat {seat['seat']}: total {seat['total']}, rank {seat['rank']}, "
            f"{seat['species_in_arboretum']} species"
            + (" (forfeited)" if seat["forfeited"] else "")
        )
        for sp in seat["species"]:
            right = "right" if sp["has_right"] else "no right"
            path = sp["path"]
            detail = ""
            if path:
                detail = (
                    f" path {'-'.join(path['cards'])}: {path['card_points']}"
                    f"{' (doubled)' if path['doubled'] else ''}"
                    f" +{path['start_bonus']} +{path['end_bonus']}"
                )
            lines.append(
                f"  {Species(sp['species']).display:<16} hand {sp['hand_total']:>2} {right:<8}"
                f" {sp['points']:>2}{detail}"
            )
    return "\n".join(lines)
