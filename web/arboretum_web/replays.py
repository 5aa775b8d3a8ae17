"""What a spectator may see of a replay, decided on the server.

A replay document (``docs/replay-format.md``) holds the whole deck, every dealt hand and the seed.
Served as it is only when the game is *over*: it is complete (it has a ``result``), its match is
finished, and every other seat rotation of the same deal is over too (the rotations of a deal
share the deck, so a finished rotation would otherwise show the cards of one still being played).

Otherwise :func:`seat_view` builds a copy holding only public information, or what one seat knew:
no deck (only its size), no seed, the hands of other seats replaced by ``null`` cards, the cards
drawn from the deck by other seats ``null``, no step digests (they cover the hidden cards); pile
draws, plays and discards are public. The copy is built from the allowed fields, never by editing
the original in place.

Faults (``fault`` on a step; the ``reason`` of forfeits and notes) are private to the seat's author:
:func:`strip_faults` removes them for every seat the viewer does not own.
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Mapping
from typing import Any

from arboretum import HAND_SIZE

__all__ = ["is_complete", "seat_view", "strip_faults"]

_HEADER_FIELDS = (
    "format",
    "version",
    "engine",
    "match_id",
    "game_index",
    "players",
    "species",
    "seats",
    "time_control",
    "seat_time_controls",
    "fault_policy",
    "complete",
    "stopped",
)


def is_complete(doc: Mapping[str, Any]) -> bool:
    """True when the document records a whole game (a result, not marked incomplete)."""
    return isinstance(doc.get("result"), dict) and doc.get("complete", True) is not False


def seat_view(doc: Mapping[str, Any], seat: int | None) -> dict[str, Any]:
    """The replay as ``seat`` saw it (``None``: public information only).

    The final hands and the scoring are kept when the document is complete (they are revealed to
    everyone at the end); the seed, deck and the hidden cards never are.
    """
    players = int(doc["players"])
    out: dict[str, Any] = {k: copy.deepcopy(doc[k]) for k in _HEADER_FIELDS if k in doc}
    out["seed"] = None
    out["deck"] = None
    out["deck_size"] = len(doc.get("species", [])) * 8 - players * HAND_SIZE
    hands = doc.get("hands") or [[] for _ in range(players)]
    out["hands"] = [
        list(hands[s]) if s == seat else [None] * len(hands[s] or [None] * HAND_SIZE)
        for s in range(players)
    ]
    steps = []
    for step in doc.get("steps", []):
        # Never a step's digest: it covers the whole position, hidden cards included, and a card
        # drawn from the deck could be found by trying the few candidates against it.
        new = {k: v for k, v in step.items() if k != "digest"}
        if step.get("kind") == "draw" and step.get("source") == "deck" and step.get("seat") != seat:
            new["card"] = None
        steps.append(new)
    out["steps"] = steps
    if is_complete(doc):
        out["final_hands"] = copy.deepcopy(doc.get("final_hands"))
        out["result"] = copy.deepcopy(doc.get("result"))
    out["view"] = {"seat": seat, "hidden": True}
    return out


def strip_faults(doc: dict[str, Any], owned_seats: Collection[int]) -> dict[str, Any]:
    """Remove fault details of the seats not in ``owned_seats`` (returns a new document)."""
    out = dict(doc)
    steps = []
    for step in doc.get("steps", []):
        if step.get("seat") in owned_seats:
            steps.append(step)
            continue
        new = {k: v for k, v in step.items() if k != "fault"}
        if step.get("kind") == "forfeit" or step.get("note"):
            new.pop("reason", None)
        steps.append(new)
    out["steps"] = steps
    return out
