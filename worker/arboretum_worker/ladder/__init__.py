"""The continuous ladder: ``arena league create NAME --ladder``.

- :mod:`.choice`: what to play next (pure): the pairings that teach the most under the fit.
- :mod:`.state`: the ladder's records in Redis: its members, their versions, the rounds of each
  pairing, the scheduler's lock.
- :mod:`.scheduler`: the tick, an rq job that tops the ladder's matches up to its depth.
- :mod:`.ops`: create, join, pause, resume, close; a ladder's status.
- :mod:`.cli`: the commands.
"""

DEALS_PER_UNIT = 5
"""A ladder's default ``deals_per_series``: its unit of a pairing is these deals in both seat
orders (docs/benchmarks.md, "Ladder": smaller units let the scheduler follow the fit more
closely; each unit starts two pairs of bot processes)."""
