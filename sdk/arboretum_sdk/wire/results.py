"""A game's result with its full scoring explanation, to and from protobuf."""

from __future__ import annotations

from collections.abc import Sequence

from arboretum import (
    SPECIES_PER_PLAYER_COUNT,
    Card,
    GameResult,
    PathScore,
    SeatScore,
    Species,
    SpeciesScore,
)
from arboretum_proto.v1 import game_pb2

from .values import (
    WireError,
    _placed_from_pb,
    _placed_to_pb,
    card_from_pb,
    card_to_pb,
    species_from_pb,
    species_to_pb,
)

__all__ = ["game_result_from_pb", "game_result_to_pb"]


def _eight_cancelled(hands: Sequence[Sequence[Card]], seat: int, species: Species) -> bool:
    eight, one = Card(species, 8), Card(species, 1)
    if eight not in hands[seat]:
        return False
    return any(one in hand for s, hand in enumerate(hands) if s != seat)


def game_result_to_pb(
    result: GameResult,
    *,
    game_index: int,
    seed: int,
    turns: int,
    species: Sequence[Species] | None = None,
    seat_names: Sequence[str] | None = None,
    faults: Sequence[int] | None = None,
    final_board: game_pb2.PublicState | None = None,
) -> game_pb2.GameResult:
    """Encode a finished game's result; the keyword arguments are the referee's data."""
    in_play = (
        tuple(species) if species is not None else tuple(s.species for s in result.seats[0].species)
    )
    pb = game_pb2.GameResult(
        game_index=game_index,
        seed=seed,
        species_in_play=[species_to_pb(s) for s in in_play],
        turns=turns,
    )
    for seat_score in result.seats:
        s = seat_score.seat
        seat_pb = game_pb2.SeatResult(
            seat=s,
            name=seat_names[s] if seat_names else "",
            final_hand=[card_to_pb(c) for c in result.hands[s]],
            total=seat_score.total,
            species_in_arboretum=seat_score.species_in_arboretum,
            forfeited=seat_score.forfeited,
            rank=seat_score.rank,
            faults=faults[s] if faults else 0,
        )
        for sp in seat_score.species:
            score = game_pb2.SpeciesScore(
                species=species_to_pb(sp.species),
                hand_total=sp.hand_total,
                eight_cancelled=_eight_cancelled(result.hands, s, sp.species),
                has_right=sp.has_right,
                points=sp.points,
            )
            if sp.path is not None:
                path = sp.path
                score.path.extend(
                    _placed_to_pb(c, card) for c, card in zip(path.cells, path.cards, strict=True)
                )
                score.card_points = path.card_points
                score.doubled = path.doubled
                score.start_bonus = path.start_bonus
                score.end_bonus = path.end_bonus
            seat_pb.species_scores.append(score)
        pb.seats.append(seat_pb)
    if final_board is not None:
        pb.final_board.CopyFrom(final_board)
    return pb


def game_result_from_pb(pb: game_pb2.GameResult, field: str = "result") -> GameResult:
    """Decode and check a game result (scores must add up; ranks >= 1)."""
    in_play = tuple(
        species_from_pb(v, f"{field}.species_in_play[{i}]")
        for i, v in enumerate(pb.species_in_play)
    )
    players = len(pb.seats)
    if players not in SPECIES_PER_PLAYER_COUNT:
        raise WireError(f"{field}.seats", f"has {players} seats (expected 2 to 4)")
    if len(set(in_play)) != SPECIES_PER_PLAYER_COUNT[players] or len(in_play) != len(set(in_play)):
        raise WireError(
            f"{field}.species_in_play",
            f"is not {SPECIES_PER_PLAYER_COUNT[players]} distinct species",
        )
    seats: list[SeatScore] = []
    hands: list[tuple[Card, ...]] = []
    for s, seat_pb in enumerate(pb.seats):
        where = f"{field}.seats[{s}]"
        if seat_pb.seat != s:
            raise WireError(f"{where}.seat", f"is {seat_pb.seat} (expected {s})")
        if not 1 <= seat_pb.rank <= players:
            raise WireError(f"{where}.rank", f"is {seat_pb.rank} (expected 1 to {players})")
        hands.append(
            tuple(
                card_from_pb(c, f"{where}.final_hand[{i}]")
                for i, c in enumerate(seat_pb.final_hand)
            )
        )
        if len(seat_pb.species_scores) != len(in_play):
            raise WireError(
                f"{where}.species_scores",
                f"has {len(seat_pb.species_scores)} entries (expected {len(in_play)})",
            )
        scores: list[SpeciesScore] = []
        for i, sc in enumerate(seat_pb.species_scores):
            swhere = f"{where}.species_scores[{i}]"
            sp = species_from_pb(sc.species, f"{swhere}.species")
            if sp is not in_play[i]:
                raise WireError(f"{swhere}.species", f"is {sp.value} (expected {in_play[i].value})")
            path: PathScore | None = None
            if len(sc.path) == 1:
                raise WireError(f"{swhere}.path", "has a single card (a path has at least 2)")
            if sc.path:
                placed = [_placed_from_pb(p, f"{swhere}.path[{j}]") for j, p in enumerate(sc.path)]
                path = PathScore(
                    cells=tuple(c for c, _ in placed),
                    cards=tuple(card for _, card in placed),
                    card_points=sc.card_points,
                    doubled=sc.doubled,
                    start_bonus=sc.start_bonus,
                    end_bonus=sc.end_bonus,
                )
                if path.points != sc.points:
                    raise WireError(
                        f"{swhere}.points", f"is {sc.points} but the path makes {path.points}"
                    )
                if not sc.has_right:
                    raise WireError(f"{swhere}.path", "is set without the right to score")
            elif sc.points:
                raise WireError(f"{swhere}.points", f"is {sc.points} without a path")
            scores.append(SpeciesScore(sp, sc.hand_total, sc.has_right, path, sc.points))
        if sum(sc.points for sc in scores) != seat_pb.total:
            raise WireError(
                f"{where}.total",
                f"is {seat_pb.total} but the species make {sum(sc.points for sc in scores)}",
            )
        seats.append(
            SeatScore(
                seat=s,
                total=seat_pb.total,
                species_in_arboretum=seat_pb.species_in_arboretum,
                forfeited=seat_pb.forfeited,
                rank=seat_pb.rank,
                species=tuple(scores),
            )
        )
    return GameResult(tuple(seats), tuple(hands))
