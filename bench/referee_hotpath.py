"""The referee's own work per decision, without gRPC: answer bytes in, next request bytes out.

A match runs in this process on its event loop, exactly as in the referee (``Match``, its seats'
outboxes, ``edge.inbound_from_bytes``), but nothing goes over a socket: for each decision request
that a seat's outbox holds, an instant bot (first legal option, from the request's helper fields)
serializes its answer, and the time is taken from handing those bytes to the referee
(``inbound_from_bytes`` then ``Match.receive``) to the next request's bytes being in the outbox.
That is what the referee adds to each round trip on top of gRPC; ``bench/referee_latency.py``
measures the round trip itself. The bot's own work is not timed.

Each round plays ``--games`` 2-player games; the figure is the median decision of each round, and
the report gives the fastest round (the least disturbed by other processes on a shared machine)
and every round's median. Usage::

    python bench/referee_hotpath.py                 # 7 rounds of 40 games
    python bench/referee_hotpath.py --rounds 3 --games 100

It also runs against an earlier checkout of the referee, for before/after figures
(``PYTHONPATH=OLD/sdk:OLD/server python bench/referee_hotpath.py``): a referee whose outbox is an
``asyncio.Queue`` of message objects, encoded by the stream's writer, is timed with that encoding
(``edge.referee_message_bytes``) added, and its answers are read with ``edge.inbound_from_pb``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

from arboretum_proto.v1 import bot_pb2
from arboretum_sdk import eventloop
from arboretum_server import edge
from arboretum_server.match import Match
from arboretum_server.matchconfig import MatchConfig
from arboretum_server.messages import TimeControl
from referee_support import first_legal, machine


def answer_to(data: bytes) -> bytes | None:
    """The instant bot: the serialized answer to a serialized decision request (else None)."""
    message = bot_pb2.RefereeMessage.FromString(data)
    if message.WhichOneof("kind") != "decision_request":
        return None
    request = message.decision_request
    answer = bot_pb2.DecisionAnswer(
        decision_number=request.decision_number, decision=first_legal(request)
    )
    return bot_pb2.BotMessage(protocol_version=1, answer=answer).SerializeToString()


def _take(outbox: Any) -> object:
    """The next item of a stream's outbox, or None."""
    if hasattr(outbox, "take_message"):
        item = outbox.take_message()
        return item if item is not None else outbox.take_end()
    return None if outbox.empty() else outbox.get_nowait()  # an earlier referee's asyncio.Queue


def _inbound(data: bytes) -> Any:
    if hasattr(edge, "inbound_from_bytes"):
        return edge.inbound_from_bytes(data)
    return edge.inbound_from_pb(edge.decode_bot_message(data))  # an earlier referee


async def one_round(games: int, seed: int) -> list[float]:
    """Plays a match of ``games`` games; the referee's microseconds for each answered decision."""
    config = MatchConfig(
        players=2,
        match_seed=seed,
        game_count=games,
        time_control=TimeControl(per_decision_ms=60_000, bank_ms=0),
    )
    match = Match("bench", config, ["a", "b"])
    streams = [match.connect(0), match.connect(1)]
    match.start()
    perf = time.perf_counter_ns
    encode = getattr(edge, "referee_message_bytes", None)  # an earlier referee's writer step
    times: list[float] = []
    spent = 0  # the referee's time since the last answer, for an encoding done by the writer
    while not match.done.is_set():
        await asyncio.sleep(0)  # the match's own task starts each game
        for seat, stream in enumerate(streams):
            while (item := _take(stream.outbox)) is not None:
                if not isinstance(item, bytes):
                    if encode is None or type(item).__name__ != "DecisionRequest":
                        continue  # game start and end, match start and end, the stream's end
                    start = perf()
                    item = encode(item)
                    spent += perf() - start
                answer = answer_to(item)
                if answer is None:
                    continue
                if spent and times:  # (a game's first request comes from no answer: the
                    times[-1] += spent / 1000.0  # median does not mind one in 50 such)
                spent = 0
                start = perf()
                match.receive(seat, stream, _inbound(answer))
                times.append((perf() - start) / 1000.0)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=7, help="rounds (default 7)")
    parser.add_argument("--games", type=int, default=40, help="games per round (default 40)")
    args = parser.parse_args()
    medians: list[float] = []
    decisions = 0
    for r in range(args.rounds):
        times = eventloop.run(one_round(args.games, 1000 + r))
        decisions += len(times)
        medians.append(statistics.median(times))
    print(f"machine: {machine()}")
    print(f"{args.rounds} rounds of {args.games} 2-player games, {decisions} decisions")
    print("each round's median, us: " + ", ".join(f"{m:.1f}" for m in medians))
    print(f"referee work per decision (fastest round's median): {min(medians):.1f} us")


if __name__ == "__main__":
    main()
