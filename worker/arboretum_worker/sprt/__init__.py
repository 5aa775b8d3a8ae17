"""The sequential test ``arena sprt``: is NEW stronger than OLD?

- :mod:`.stats`: the statistics (pure): the pentanomial GSPRT in logistic Elo, the test's state.
- :mod:`.pairs`: how pairs are laid out in batches and seeded, wherever they are played.
- :mod:`.local`: the test played here, through :mod:`arboretum_server.local`'s runner.
- :mod:`.cli`: the command.
"""
