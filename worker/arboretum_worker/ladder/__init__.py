"""The continuous ladder: ``arena league create NAME --ladder``.

- :mod:`.choice`: what to play next (pure): the pairings that teach the most under the fit.
- :mod:`.state`: the ladder's records in Redis: its members, their versions, the rounds of each
  pairing, the scheduler's lock.
- :mod:`.scheduler`: the tick, an rq job that tops the ladder's matches up to its depth.
- :mod:`.ops`: create, join, pause, resume, close; a ladder's status.
- :mod:`.cli`: the commands.
"""
