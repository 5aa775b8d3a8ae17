"""Decisions and answers, and the clocks and policies around them, to and from protobuf."""

from __future__ import annotations

from arboretum import (
    Card,
    Decision,
    DecisionKind,
    Draw,
    Play,
)
from arboretum_proto.v1 import bot_pb2, common_pb2

from ..info import (
    Clock,
    FaultPolicy,
    TimeControl,
)
from .values import (
    PROTOCOL_VERSION,
    WireError,
    _missing,
    card_from_pb,
    card_to_pb,
    cell_from_pb,
    source_from_pb,
    source_to_pb,
)

__all__ = [
    "ERROR_MESSAGE_CHARS",
    "ERROR_TYPE_CHARS",
    "answer_to_pb",
    "check_protocol_version",
    "clock_from_pb",
    "clock_to_pb",
    "decision_from_pb",
    "decision_to_pb",
    "failure_from_pb",
    "failure_to_pb",
    "fault_policy_from_pb",
    "fault_policy_to_pb",
    "refused_answer_to_pb",
    "time_control_from_pb",
    "time_control_to_pb",
]

# --------------------------------------------------------------------------- decisions

_DRAW_FIELDS = {DecisionKind.FIRST_DRAW: "first_draw", DecisionKind.SECOND_DRAW: "second_draw"}


def decision_to_pb(decision: Decision, kind: DecisionKind) -> common_pb2.Decision:
    """Encode ``decision`` as the answer to a decision of ``kind``.

    Raises :class:`WireError` when the decision's type does not fit the kind (a Draw
    for a play, ...).
    """
    if kind is DecisionKind.PLAY:
        if not isinstance(decision, Play):
            raise WireError("decision", f"must be a Play for a play decision, got {decision!r}")
        if not isinstance(decision.card, Card) or not isinstance(decision.cell, tuple):
            raise WireError("decision", f"is not a Play of a Card at a Cell: {decision!r}")
        play = common_pb2.PlayDecision(
            card=card_to_pb(decision.card),
            cell=common_pb2.Cell(x=decision.cell[0], y=decision.cell[1]),
        )
        if decision.discard is not None:
            if not isinstance(decision.discard, Card):
                raise WireError("decision.discard", f"is not a Card: {decision.discard!r}")
            play.discard.CopyFrom(card_to_pb(decision.discard))
        return common_pb2.Decision(play=play)
    if kind in _DRAW_FIELDS:
        if not isinstance(decision, Draw) or type(decision.source) is not int:
            raise WireError(
                "decision", f"must be a Draw for a {kind.value} decision, got {decision!r}"
            )
        msg = common_pb2.Decision()
        getattr(msg, _DRAW_FIELDS[kind]).CopyFrom(source_to_pb(decision.source))
        return msg
    raise WireError("kind", f"{kind.value!r} is not a decision kind that can be answered")


def decision_from_pb(
    pb: common_pb2.Decision,
    kind: DecisionKind,
    *,
    discard_required: bool | None = None,
    field: str = "decision",
) -> Decision:
    """Decode the answer to a decision of ``kind``.

    Raises :class:`WireError` for a missing or wrong oneof, a missing card or cell, an unknown
    species or a value outside 1..8, and (when ``discard_required`` is given) a discard present or
    absent against it. Seat numbers and cells are not range-checked here: an empty or missing pile
    or a bad cell is an *illegal* decision, for the engine to reject.
    """
    which = pb.WhichOneof("kind")
    if which is None:
        raise WireError(field, "is missing (set first_draw, second_draw or play)")
    expected = "play" if kind is DecisionKind.PLAY else _DRAW_FIELDS.get(kind)
    if expected is None:
        raise WireError("kind", f"{kind.value!r} is not a decision kind that can be answered")
    if which != expected:
        raise WireError(
            f"{field}.{which}", f"answers a {kind.value} decision (expected {expected})"
        )
    if which == "play":
        play = pb.play
        if not play.HasField("card"):
            raise _missing(f"{field}.play.card")
        if not play.HasField("cell"):
            raise _missing(f"{field}.play.cell")
        card = card_from_pb(play.card, f"{field}.play.card")
        cell = cell_from_pb(play.cell, f"{field}.play.cell")
        discard = None
        if play.HasField("discard"):
            if discard_required is False:
                raise WireError(
                    f"{field}.play.discard",
                    "is set but no discard is allowed (second draw skipped)",
                )
            discard = card_from_pb(play.discard, f"{field}.play.discard")
        elif discard_required:
            raise _missing(f"{field}.play.discard")
        return Play(card, cell, discard)
    return Draw(source_from_pb(getattr(pb, which), f"{field}.{which}"))


def answer_to_pb(
    decision_number: int, decision: Decision, kind: DecisionKind
) -> bot_pb2.BotMessage:
    """The bot's whole message answering decision ``decision_number`` of ``kind``."""
    return bot_pb2.BotMessage(
        protocol_version=PROTOCOL_VERSION,
        answer=bot_pb2.DecisionAnswer(
            decision_number=decision_number, decision=decision_to_pb(decision, kind)
        ),
    )


ERROR_TYPE_CHARS = 100
"""How much of a ``DecisionFailure.error_type`` counts (the rest is cut)."""
ERROR_MESSAGE_CHARS = 300
"""How much of a ``DecisionFailure.message`` counts (the rest is cut)."""


def _one_line(text: str, limit: int) -> str:
    """``text`` on one line of printable characters (runs of white space, line breaks included,
    become one space; other control characters ``?``), cut to ``limit`` characters."""
    flat = " ".join(text.split())
    flat = "".join(c if c.isprintable() else "?" for c in flat)
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def failure_to_pb(decision_number: int, error_type: str, message: str) -> bot_pb2.BotMessage:
    """The bot's whole message saying that its code failed on decision ``decision_number``: the
    error's type and message, each on one line and cut to what the referee keeps."""
    return bot_pb2.BotMessage(
        protocol_version=PROTOCOL_VERSION,
        failure=bot_pb2.DecisionFailure(
            decision_number=decision_number,
            error_type=_one_line(error_type, ERROR_TYPE_CHARS),
            message=_one_line(message, ERROR_MESSAGE_CHARS),
        ),
    )


def refused_answer_to_pb(decision_number: int, reason: str) -> bot_pb2.BotMessage:
    """The bot's message saying that it has no well-formed answer to ``decision_number``, and
    why (``DecisionAnswer.malformed_reason``)."""
    return bot_pb2.BotMessage(
        protocol_version=PROTOCOL_VERSION,
        answer=bot_pb2.DecisionAnswer(
            decision_number=decision_number, malformed_reason=reason or "no answer"
        ),
    )


def failure_from_pb(pb: bot_pb2.DecisionFailure) -> tuple[int, str, str]:
    """A ``DecisionFailure`` as (decision number, error type, message), the texts on one line of
    printable characters and cut as documented (whatever the sender did). An empty type reads
    as ``"an error"``."""
    error_type = _one_line(pb.error_type, ERROR_TYPE_CHARS) or "an error"
    return pb.decision_number, error_type, _one_line(pb.message, ERROR_MESSAGE_CHARS)


def check_protocol_version(
    msg: bot_pb2.BotMessage | bot_pb2.RefereeMessage, field: str = "message"
) -> str:
    """Check a stream message's envelope: ``protocol_version == 1`` and a ``kind`` set.

    Returns the name of the kind set (``"answer"``, ``"decision_request"``, ...).
    """
    if msg.protocol_version != PROTOCOL_VERSION:
        raise WireError(
            f"{field}.protocol_version", f"is {msg.protocol_version} (expected {PROTOCOL_VERSION})"
        )
    which = msg.WhichOneof("kind")
    if which is None:
        raise WireError(f"{field}.kind", "is missing")
    return which


# --------------------------------------------------------------------------- clocks and policies


def time_control_to_pb(tc: TimeControl) -> common_pb2.TimeControl:
    return common_pb2.TimeControl(per_decision_ms=tc.per_decision_ms, bank_ms=tc.bank_ms)


def time_control_from_pb(
    pb: common_pb2.TimeControl | None, field: str = "time_control"
) -> TimeControl:
    """Decode a time control; ``None`` (an absent field, where allowed) gives the defaults."""
    if pb is None:
        return TimeControl()
    if pb.per_decision_ms <= 0:
        raise WireError(f"{field}.per_decision_ms", "must be > 0")
    return TimeControl(pb.per_decision_ms, pb.bank_ms)


def fault_policy_to_pb(policy: FaultPolicy) -> common_pb2.FaultPolicy:
    return common_pb2.FaultPolicy(faults_to_forfeit=policy.faults_to_forfeit)


def fault_policy_from_pb(
    pb: common_pb2.FaultPolicy | None, field: str = "fault_policy"
) -> FaultPolicy:
    """Decode a fault policy; ``None`` (an absent field, where allowed) gives the default."""
    if pb is None:
        return FaultPolicy()
    if pb.faults_to_forfeit < 1:
        raise WireError(f"{field}.faults_to_forfeit", "must be >= 1")
    return FaultPolicy(pb.faults_to_forfeit)


def clock_to_pb(clock: Clock) -> common_pb2.DecisionClock:
    return common_pb2.DecisionClock(
        per_decision_ms=clock.per_decision_ms,
        bank_left_ms=clock.bank_left_ms,
        elapsed_ms=clock.elapsed_ms,
    )


def clock_from_pb(
    pb: common_pb2.DecisionClock, field: str = "clock", *, received_at: float | None = None
) -> Clock:
    if pb.per_decision_ms <= 0:
        raise WireError(f"{field}.per_decision_ms", "must be > 0")
    if received_at is None:
        return Clock(pb.per_decision_ms, pb.bank_left_ms, pb.elapsed_ms)
    return Clock(pb.per_decision_ms, pb.bank_left_ms, pb.elapsed_ms, received_at)
