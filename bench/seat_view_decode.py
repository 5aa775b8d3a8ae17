"""A bot's decoding of its seat views: ``wire.seat_view_from_pb`` on the views of random games.

The views of ``--games`` random games of 2, 3 and 4 players (every decision's view, as a bot
receives it) are decoded in passes; the figure is the CPU time per view of the fastest pass (CPU
time, so that time slices lost to other processes on a shared machine do not count). With
``--before FILE`` an earlier ``arboretum_sdk/wire/views.py`` is loaded beside this one and the two
decode the same views in alternating passes, in one process, so their ratio stays meaningful on a
noisy machine. Usage (from the repository root)::

    python bench/seat_view_decode.py
    python bench/seat_view_decode.py --before OLD/sdk/arboretum_sdk/wire/views.py
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import time
from collections.abc import Callable
from typing import Any

from arboretum import GameState, Species, random_decision
from arboretum_proto.v1 import game_pb2
from arboretum_sdk import wire
from arboretum_sdk.wire import views

Views = list[tuple[game_pb2.SeatView, tuple[Species, ...]]]


def game_views(games: int) -> Views:
    rng = random.Random(7)
    out: Views = []
    for g in range(games):
        players = 2 + g % 3
        state = GameState.new(players=players, seed=g)
        while not state.is_over:
            view = state.view(state.current_seat)
            out.append((wire.seat_view_to_pb(view, bank_left_ms=[5] * players), state.species))
            state.apply(random_decision(view, rng))
    return out


def load(path: str) -> Any:
    spec = importlib.util.spec_from_file_location("arboretum_sdk.wire.views_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def one_pass(decode: Callable[..., Any], found: Views) -> float:
    start = time.process_time()
    for pb, species in found:
        decode(pb, species=species)
    return (time.process_time() - start) / len(found)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--games", type=int, default=30, help="random games (default 30)")
    parser.add_argument("--passes", type=int, default=15, help="passes each (default 15)")
    parser.add_argument("--before", metavar="FILE", help="an earlier wire/views.py to compare")
    args = parser.parse_args()
    found = game_views(args.games)
    decoders = {"after" if args.before else "this": views.seat_view_from_pb}
    if args.before:
        decoders = {"before": load(args.before).seat_view_from_pb, **decoders}
    best = dict.fromkeys(decoders, float("inf"))
    for _ in range(args.passes):
        for name, decode in decoders.items():
            best[name] = min(best[name], one_pass(decode, found))
    figures = ", ".join(f"{name} {t * 1e6:.1f} us/view" for name, t in best.items())
    print(f"{len(found)} views, fastest of {args.passes} passes (CPU time): {figures}")
    if args.before:
        print(f"ratio after/before: {best['after'] / best['before']:.3f}")


if __name__ == "__main__":
    main()
