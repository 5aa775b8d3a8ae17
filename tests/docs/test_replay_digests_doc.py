"""docs/replay-format.md, "Digests", is enough to compute every digest: a verifier written from
that text alone (below; it imports nothing of the engine, only ``hashlib`` and ``json``)
follows real replays, written by ``arena simulate``'s code and by the recorder the referee uses,
and gets every step's digest, digest by digest."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path
from typing import Any

import pytest

from arboretum import GameState, ReplayRecorder, derive_game_seed, random_decision
from arboretum_sdk.simulate import simulate

DOC = Path(__file__).resolve().parents[2] / "docs" / "replay-format.md"

# ------------------------------------------------------------- the verifier, from the text alone

CODES = ("BS", "CA", "CB", "DO", "JA", "MA", "OA", "RP", "TP", "WI")
FIRST_DRAW, SECOND_DRAW, PLAY, GAME_OVER = 0, 1, 2, 3
HAND_SIZE = 7


class Number(str):
    """A number with a fraction, kept as the replay writes it."""


def card_id(text: str) -> int:
    return CODES.index(text[:2]) * 8 + int(text[2:]) - 1


def digest_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def canonical(value: Any) -> str:
    if isinstance(value, dict):
        members = (f"{json.dumps(k)}:{canonical(value[k])}" for k in sorted(value))
        return "{" + ",".join(members) + "}"
    if isinstance(value, list):
        return "[" + ",".join(canonical(v) for v in value) + "]"
    if isinstance(value, Number):
        return str(value)
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if isinstance(value, int):
        return str(value)
    assert isinstance(value, str)
    return json.dumps(value)  # JSON's escapes, everything outside ASCII as \uXXXX


class Position:
    def __init__(self, doc: dict[str, Any]) -> None:
        players = doc["players"]
        deck = doc["deck"]
        dealt = HAND_SIZE * players
        self.players = players
        self.hands = [list(deck[seat:dealt:players]) for seat in range(players)]
        self.draw_pile = list(deck[dealt:])  # the next card drawn first
        self.piles: list[list[str]] = [[] for _ in range(players)]
        self.arboretums: list[dict[tuple[int, int], str]] = [{} for _ in range(players)]
        self.turn, self.seat, self.due, self.must_discard = 0, 0, FIRST_DRAW, 1
        self.forfeited = [0] * players
        self.ran_out = False

    def apply(self, step: dict[str, Any]) -> None:
        if step.get("note"):
            return
        if step["kind"] == "forfeit":
            self.forfeited[step["seat"]] = 1
            return
        hand = self.hands[self.seat]
        if step["kind"] == "draw":
            if step["source"] == "deck":
                card = self.draw_pile.pop(0)
                self.ran_out |= not self.draw_pile
            else:
                card = self.piles[step["pile"]].pop()
            assert card == step["card"]
            hand.append(card)
            if self.due == SECOND_DRAW:
                self.due = PLAY
            elif self.draw_pile or any(self.piles):
                self.due = SECOND_DRAW
            else:
                self.due, self.must_discard = PLAY, 0
            return
        assert step["kind"] == "play"
        hand.remove(step["card"])
        self.arboretums[self.seat][tuple(step["cell"])] = step["card"]
        if step["discard"] is not None:
            hand.remove(step["discard"])
            self.piles[self.seat].append(step["discard"])
        if self.ran_out:
            self.due = GAME_OVER
        else:
            self.turn += 1
            self.seat = (self.seat + 1) % self.players
            self.due, self.must_discard = FIRST_DRAW, 1

    def bytes(self) -> bytes:
        out = bytearray(self.turn.to_bytes(2, "big"))
        out += bytes((self.seat, self.due, self.must_discard, len(self.draw_pile)))
        for seat in range(self.players):
            out += bytes(sorted(card_id(c) for c in self.hands[seat])) + b"\xff"
            out += bytes(card_id(c) for c in self.piles[seat]) + b"\xff"
            arboretum = self.arboretums[seat]
            for x, y in sorted(arboretum):
                out += (x + 32768).to_bytes(2, "big") + (y + 32768).to_bytes(2, "big")
                out.append(card_id(arboretum[x, y]))
            out += b"\xff"
        out += bytes(self.forfeited)
        return bytes(out)


def chain_start(doc: dict[str, Any]) -> str:
    text = f"arboretum-replay/2|{doc['players']}|{','.join(doc['species'])}|{','.join(doc['deck'])}"
    return digest_of(text.encode())


def digests(doc: dict[str, Any]) -> list[str]:
    """Every step's digest, computed from the replay alone."""
    position = Position(doc)
    link = chain_start(doc)
    out = []
    for step in doc["steps"]:
        position.apply(step)
        body = canonical({k: v for k, v in step.items() if k not in ("digest", "fault", "reason")})
        link = digest_of(f"{link}|{body}|".encode() + position.bytes())
        out.append(link)
    return out


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(), parse_float=Number)  # type: ignore[no-any-return]


# ------------------------------------------------------------------------------------ the tests


def _check(doc: dict[str, Any]) -> None:
    computed = digests(doc)
    for i, (step, mine) in enumerate(zip(doc["steps"], computed, strict=True)):
        assert step["digest"] == mine, f"step {i} ({step['kind']}): {step['digest']} != {mine}"


@pytest.mark.parametrize("players", [2, 3, 4])
def test_simulated_replays_digest_by_digest(tmp_path: Path, players: int) -> None:
    summary = simulate(players, 4, seed=17 + players, replays=tmp_path)
    assert len(summary.replays) == 4
    for path in summary.replays:
        doc = load(path)
        position = Position(doc)
        assert position.hands == doc["hands"]  # the deal as the text tells it
        _check(doc)
        steps = doc["steps"]
        assert steps[-1]["kind"] == "play"
        # At the game's end: game over, the last play's turn and seat (see the text).
        end = Position(doc)
        for step in steps:
            end.apply(step)
        assert (end.due, end.turn, end.seat) == (GAME_OVER, steps[-1]["turn"], steps[-1]["seat"])


def test_the_example_of_the_text_holds(tmp_path: Path) -> None:
    """The text's example: after a first draw from the deck in a 2-player game."""
    for path in simulate(2, 6, seed=3, replays=tmp_path).replays:
        doc = load(path)
        if doc["steps"][0]["source"] == "deck":
            break
    else:
        pytest.fail("no game began with a draw from the deck")
    position = Position(doc)
    position.apply(doc["steps"][0])
    raw = position.bytes()
    assert raw[:6] == bytes.fromhex("000000010121") and raw[-2:] == b"\0\0" and len(raw) == 29


def test_a_refereed_replay_with_clocks_faults_forfeits_and_notes(tmp_path: Path) -> None:
    """The fields a referee adds: ``ms`` (with a fraction, and a whole number written ``3.0``),
    ``fault`` (not covered), a forfeit and notes (their ``reason`` not covered)."""
    state = GameState.new(3, derive_game_seed(99, 0))
    recorder = ReplayRecorder(state, match_id="m", seats=["a", "b", "c"])
    rng = random.Random(5)
    count = 0
    while not state.is_over:
        count += 1
        if count == 7:
            recorder.note(1, "stale", "an answer for an earlier decision: «late»")
        if count == 20:
            recorder.forfeit(2, "3 faults")
        fault = {"kind": "timeout", "reason": "no answer in 1000 ms"} if count % 11 == 0 else None
        recorder.apply(
            random_decision(state, rng), ms=3.0 if count % 5 == 0 else count / 7, fault=fault
        )
    path = tmp_path / "game.json"
    recorder.write(path)
    text = path.read_text()
    assert '"ms": 3.0' in text and '"fault"' in text and '"forfeit"' in text
    doc = load(path)
    _check(doc)
    # Not vacuous: a changed covered field changes that step's digest and every one after it.
    doc["steps"][30]["turn"] += 1
    changed = digests(doc)
    assert changed[29] == doc["steps"][29]["digest"] and changed[30] != doc["steps"][30]["digest"]
    # and the private fields are not covered
    doc["steps"][30]["turn"] -= 1
    for step in doc["steps"]:
        step.pop("fault", None)
        step["reason"] = "withheld"
    _check(doc)


def test_the_text_states_the_rules_this_verifier_follows() -> None:
    """The verifier above is the text's, sentence by sentence: the cell layout (x, y, id per
    card), must-discard during the draws, and the turn and seat at the game's end."""
    text = " ".join(DOC.read_text().split())
    for rule in (
        "x + 32768 as 2 bytes big-endian, y + 32768 as 2 bytes big-endian and the card's id "
        "(5 bytes a card), then 255",
        "So must-discard is 1 during the draws too",
        "at the game's end the seat due is the seat that played last, the turn is that play's turn",
        "the card ids in increasing order, one byte each, then a byte 255",
        "the card ids from the bottom (discarded first) to the top, then 255",
        "| 2 | the turn, big-endian |",
        "| 1 per seat | 1 if the seat has forfeited, else 0 |",
        "a number with a fraction (`ms`) exactly as the replay writes it",
        "`arboretum-replay/2|{players}|{species}|{deck}`",
    ):
        assert rule in text, rule
