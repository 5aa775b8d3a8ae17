"""The one conversion module between the engine's objects and the protobuf messages of protocol v1.

Both the referee and the bot client use it; nothing else in the project touches protobuf. Every
``*_to_pb`` takes engine (or :mod:`arboretum_sdk.info`) objects and builds a message; every
``*_from_pb`` validates strictly and raises :class:`WireError` naming the field, such as
``decision.play.cell is missing`` or ``view.hand[2].value is 9 (expected 1 to 8)``. A message that
decodes is well-formed; whether a decision is *legal* is the engine's business
(:meth:`arboretum.GameState.apply`), so "malformed" and "illegal" stay distinct faults.

Mapping notes (decisions taken here, documented for both sides):

- ``Species``: protobuf value = ``Species.index + 1`` (0 is ``SPECIES_UNSPECIFIED``).
- Draw source: ``arboretum.DECK`` (-1) is ``DrawSource.deck``; a seat number is ``discard_seat``.
- ``DecisionKind.GAME_OVER`` has no protobuf value; encoding it raises :class:`WireError`.
- ``SeatView``: the protobuf view lacks the species in play (they are in ``GameSetup``), the
  decision kind and ``discard_required`` (they are in the request). :func:`seat_view_from_pb` takes
  the species, *infers* the kind and ``discard_required`` from the board (the current seat's hand
  size: 7 = first draw, 8 = second draw, or a play without discard when no source is left,
  9 = play; 7 with an empty deck = game over), and checks them against the request's values
  when given. ``last_turn`` is ``deck_size == 0``. ``turn_number`` is the engine's ``turn + 1``.
- Known hand cards: the engine keeps them as a set and sends them sorted by card id.
- Events: one engine event may become several protobuf events (:func:`event_to_pb`):
  ``DrawEvent`` -> ``draw`` (which draw of the turn, first or second, must be given);
  ``PlayEvent`` with a discard -> ``play`` then ``discard``; ``PlayEvent`` without one (the second
  draw was skipped) -> ``second_draw_skipped`` then ``play``, the protocol's order within a turn;
  ``ForfeitEvent`` -> ``forfeit``. Fault events are referee data: :meth:`EventEncoder.fault` builds
  them and :class:`EventDecoder` skips them (they have no engine type). :class:`EventEncoder`
  numbers ``sequence`` and ``turn_number`` from the engine's event stream; :func:`redact_event`
  hides a deck card from everyone but its drawer.
- ``GameResult``: ``eight_cancelled`` is derived from the revealed hands when encoding, and not kept
  when decoding (the engine's result does not store it). Per-seat names, faults, the seed, the turn
  count and the final board are referee data, given as keyword arguments."""

from __future__ import annotations

from .decisions import (
    ERROR_MESSAGE_CHARS,
    ERROR_TYPE_CHARS,
    answer_to_pb,
    check_protocol_version,
    clock_from_pb,
    clock_to_pb,
    decision_from_pb,
    decision_to_pb,
    failure_from_pb,
    failure_to_pb,
    fault_policy_from_pb,
    fault_policy_to_pb,
    refused_answer_to_pb,
    time_control_from_pb,
    time_control_to_pb,
)
from .events import EventDecoder, EventEncoder, event_to_pb, events_from_pb, redact_event
from .messages import (
    fault_notice_from_pb,
    fault_notice_to_pb,
    game_end_from_pb,
    game_setup_to_pb,
    game_start_from_pb,
    match_end_from_pb,
    match_end_to_pb,
    match_start_from_pb,
    match_start_to_pb,
    match_summary_to_pb,
)
from .results import game_result_from_pb, game_result_to_pb
from .values import (
    PROTOCOL_VERSION,
    WireError,
    card_from_pb,
    card_to_pb,
    cell_from_pb,
    cell_to_pb,
    fault_kind_from_pb,
    fault_kind_to_pb,
    kind_from_pb,
    kind_to_pb,
    match_status_from_pb,
    match_status_to_pb,
    source_from_pb,
    source_to_pb,
    species_from_pb,
    species_to_pb,
)
from .views import public_state_to_pb, seat_view_from_pb, seat_view_to_pb

__all__ = [
    "ERROR_MESSAGE_CHARS",
    "ERROR_TYPE_CHARS",
    "PROTOCOL_VERSION",
    "EventDecoder",
    "EventEncoder",
    "WireError",
    "answer_to_pb",
    "card_from_pb",
    "card_to_pb",
    "cell_from_pb",
    "cell_to_pb",
    "check_protocol_version",
    "clock_from_pb",
    "clock_to_pb",
    "decision_from_pb",
    "decision_to_pb",
    "event_to_pb",
    "events_from_pb",
    "failure_from_pb",
    "failure_to_pb",
    "fault_kind_from_pb",
    "fault_kind_to_pb",
    "fault_notice_from_pb",
    "fault_notice_to_pb",
    "fault_policy_from_pb",
    "fault_policy_to_pb",
    "game_end_from_pb",
    "game_result_from_pb",
    "game_result_to_pb",
    "game_setup_to_pb",
    "game_start_from_pb",
    "kind_from_pb",
    "kind_to_pb",
    "match_end_from_pb",
    "match_end_to_pb",
    "match_start_from_pb",
    "match_start_to_pb",
    "match_status_from_pb",
    "match_status_to_pb",
    "match_summary_to_pb",
    "public_state_to_pb",
    "redact_event",
    "refused_answer_to_pb",
    "seat_view_from_pb",
    "seat_view_to_pb",
    "source_from_pb",
    "source_to_pb",
    "species_from_pb",
    "species_to_pb",
    "time_control_from_pb",
    "time_control_to_pb",
]
