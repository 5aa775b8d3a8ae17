"""The bot stream's messages (``MatchStart``, ``GameStart``, ``FaultNotice``, ``GameEnd``,
``MatchEnd``) and the match summary, to and from protobuf."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from arboretum import (
    SPECIES_PER_PLAYER_COUNT,
    Species,
)
from arboretum_proto.v1 import bot_pb2, game_pb2

from ..clitools import plural
from ..info import (
    FaultNotice,
    FaultPolicy,
    GameEnd,
    GameInfo,
    MatchEnd,
    MatchInfo,
    MatchStatus,
    SeatSummary,
    TimeControl,
)
from .decisions import (
    decision_from_pb,
    decision_to_pb,
    fault_policy_from_pb,
    fault_policy_to_pb,
    time_control_from_pb,
    time_control_to_pb,
)
from .events import EventDecoder
from .results import game_result_from_pb
from .values import (
    WireError,
    _missing,
    fault_kind_from_pb,
    fault_kind_to_pb,
    kind_from_pb,
    kind_to_pb,
    match_status_from_pb,
    match_status_to_pb,
    species_from_pb,
    species_to_pb,
)
from .views import seat_view_from_pb

__all__ = [
    "fault_notice_from_pb",
    "fault_notice_to_pb",
    "game_end_from_pb",
    "game_setup_to_pb",
    "game_start_from_pb",
    "match_end_from_pb",
    "match_end_to_pb",
    "match_start_from_pb",
    "match_start_to_pb",
    "match_summary_to_pb",
]


def match_start_to_pb(info: MatchInfo) -> bot_pb2.MatchStart:
    return bot_pb2.MatchStart(
        match_id=info.match_id,
        seat=info.seat,
        player_count=info.players,
        game_count=info.game_count,
        seat_names=list(info.seat_names),
        time_control=time_control_to_pb(info.time_control),
        fault_policy=fault_policy_to_pb(info.fault_policy),
        resumed=info.resumed,
    )


def match_start_from_pb(pb: bot_pb2.MatchStart, field: str = "match_start") -> MatchInfo:
    players = pb.player_count
    if players not in SPECIES_PER_PLAYER_COUNT:
        raise WireError(f"{field}.player_count", f"is {players} (expected 2 to 4)")
    if pb.seat >= players:
        raise WireError(f"{field}.seat", f"is {pb.seat} but there are {players} seats")
    if pb.game_count < 1:
        raise WireError(f"{field}.game_count", "must be >= 1")
    if pb.seat_names and len(pb.seat_names) != players:
        raise WireError(
            f"{field}.seat_names", f"has {plural(len(pb.seat_names), 'name')} for {players} seats"
        )
    if not pb.HasField("time_control"):
        raise _missing(f"{field}.time_control")
    if not pb.HasField("fault_policy"):
        raise _missing(f"{field}.fault_policy")
    names = tuple(pb.seat_names) or tuple(f"seat {s}" for s in range(players))
    return MatchInfo(
        match_id=pb.match_id,
        seat=pb.seat,
        players=players,
        game_count=pb.game_count,
        seat_names=names,
        time_control=time_control_from_pb(pb.time_control, f"{field}.time_control"),
        fault_policy=fault_policy_from_pb(pb.fault_policy, f"{field}.fault_policy"),
        resumed=pb.resumed,
    )


def game_setup_to_pb(
    *,
    game_index: int,
    game_count: int,
    species: Sequence[Species],
    seat_names: Sequence[str],
    time_control: TimeControl,
    fault_policy: FaultPolicy,
) -> game_pb2.GameSetup:
    return game_pb2.GameSetup(
        game_index=game_index,
        game_count=game_count,
        player_count=len(seat_names),
        species_in_play=[species_to_pb(s) for s in sorted(species, key=lambda s: s.index)],
        time_control=time_control_to_pb(time_control),
        fault_policy=fault_policy_to_pb(fault_policy),
        seat_names=list(seat_names),
    )


def game_start_from_pb(
    pb: bot_pb2.GameStart, field: str = "game_start"
) -> tuple[GameInfo, EventDecoder]:
    """Decode a GameStart; also returns the game's event decoder, already fed its events."""
    if not pb.HasField("setup"):
        raise _missing(f"{field}.setup")
    if not pb.HasField("view"):
        raise _missing(f"{field}.view")
    setup = pb.setup
    species = tuple(
        species_from_pb(v, f"{field}.setup.species_in_play[{i}]")
        for i, v in enumerate(setup.species_in_play)
    )
    view = seat_view_from_pb(pb.view, species=species, field=f"{field}.view")
    if setup.player_count != view.players:
        raise WireError(
            f"{field}.setup.player_count",
            f"is {setup.player_count} but the view has {view.players}",
        )
    if pb.seat != view.seat:
        raise WireError(f"{field}.seat", f"is {pb.seat} but the view is seat {view.seat}'s")
    if setup.game_index >= setup.game_count:
        raise WireError(
            f"{field}.setup.game_index", f"is {setup.game_index} of {setup.game_count} games"
        )
    decoder = EventDecoder(view.players)
    events = tuple(decoder.feed_all(pb.events, f"{field}.events"))
    names = tuple(setup.seat_names) or tuple(f"seat {s}" for s in range(view.players))
    info = GameInfo(
        game_index=setup.game_index,
        game_count=setup.game_count,
        players=view.players,
        species=view.species,
        seat=pb.seat,
        seat_names=names,
        time_control=time_control_from_pb(
            setup.time_control if setup.HasField("time_control") else None,
            f"{field}.setup.time_control",
        ),
        fault_policy=fault_policy_from_pb(
            setup.fault_policy if setup.HasField("fault_policy") else None,
            f"{field}.setup.fault_policy",
        ),
        view=view,
        events=events,
        resumed=pb.resumed,
        bot_seed=pb.bot_seed,
    )
    return info, decoder


def fault_notice_to_pb(notice: FaultNotice) -> bot_pb2.FaultNotice:
    return bot_pb2.FaultNotice(
        decision_number=notice.decision_number,
        game_index=notice.game_index,
        decision_kind=kind_to_pb(notice.decision_kind),
        kind=fault_kind_to_pb(notice.kind),
        reason=notice.reason,
        fallback=decision_to_pb(notice.fallback, notice.decision_kind),
        faults=notice.faults,
        forfeited=notice.forfeited,
    )


def fault_notice_from_pb(pb: bot_pb2.FaultNotice, field: str = "fault_notice") -> FaultNotice:
    decision_kind = kind_from_pb(pb.decision_kind, f"{field}.decision_kind")
    if not pb.HasField("fallback"):
        raise _missing(f"{field}.fallback")
    return FaultNotice(
        decision_number=pb.decision_number,
        game_index=pb.game_index,
        decision_kind=decision_kind,
        kind=fault_kind_from_pb(pb.kind, f"{field}.kind"),
        reason=pb.reason,
        fallback=decision_from_pb(pb.fallback, decision_kind, field=f"{field}.fallback"),
        faults=pb.faults,
        forfeited=pb.forfeited,
    )


def game_end_from_pb(
    pb: bot_pb2.GameEnd, decoder: EventDecoder | None = None, field: str = "game_end"
) -> GameEnd:
    """Decode a GameEnd; ``decoder`` (the game's, from :func:`game_start_from_pb`) decodes its
    events, so that a play split from its discard across messages still decodes."""
    if not pb.HasField("result"):
        raise _missing(f"{field}.result")
    result_pb = pb.result
    result = game_result_from_pb(result_pb, f"{field}.result")
    decoder = decoder or EventDecoder(len(result.seats))
    events = tuple(decoder.feed_all(pb.events, f"{field}.events"))
    return GameEnd(
        game_index=result_pb.game_index,
        seed=result_pb.seed,
        species=tuple(species_from_pb(v) for v in result_pb.species_in_play),
        turns=result_pb.turns,
        seat_names=tuple(s.name for s in result_pb.seats),
        faults=tuple(s.faults for s in result_pb.seats),
        result=result,
        events=events,
    )


def match_summary_to_pb(games_finished: int, seats: Iterable[SeatSummary]) -> game_pb2.MatchSummary:
    return game_pb2.MatchSummary(
        games_finished=games_finished,
        seats=[
            game_pb2.SeatSummary(
                seat=s.seat,
                name=s.name,
                total_points=s.total_points,
                first_places=s.first_places,
                rank_sum=s.rank_sum,
                faults=s.faults,
                forfeits=s.forfeits,
            )
            for s in seats
        ],
    )


def match_end_to_pb(end: MatchEnd) -> game_pb2.MatchEnd:
    pb = game_pb2.MatchEnd(
        status=match_status_to_pb(end.status),
        summary=match_summary_to_pb(end.games_finished, end.seats),
        reason=end.reason,
    )
    if end.match_seed is not None:
        pb.match_seed = end.match_seed
    return pb


def match_end_from_pb(pb: game_pb2.MatchEnd, field: str = "match_end") -> MatchEnd:
    status = match_status_from_pb(pb.status, f"{field}.status")
    if status not in (MatchStatus.FINISHED, MatchStatus.CANCELLED, MatchStatus.FAILED):
        raise WireError(f"{field}.status", f"is {status.value}, not an end status")
    seats = tuple(
        SeatSummary(
            seat=s.seat,
            name=s.name,
            total_points=s.total_points,
            first_places=s.first_places,
            rank_sum=s.rank_sum,
            faults=s.faults,
            forfeits=s.forfeits,
        )
        for s in pb.summary.seats
    )
    return MatchEnd(
        status=status,
        match_seed=pb.match_seed if pb.HasField("match_seed") else None,
        games_finished=pb.summary.games_finished,
        seats=seats,
        reason=pb.reason,
    )
