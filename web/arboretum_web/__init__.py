"""Arboretum Arena's web viewer and HTTP API (``arena web``).

Modules: :mod:`.app` (the Starlette application, :func:`~.app.create_app`), :mod:`.pages` and
:mod:`.api` (the endpoints), :mod:`.queries` (reads through the league's store, registry and
ratings), :mod:`.replays` (what a spectator may see of a replay), :mod:`.authors` (author tokens),
:mod:`.submission` (uploaded bots), :mod:`.client` (remote submission, standard library only),
:mod:`.cli` (``arena web``), :mod:`.demo` and :mod:`.screenshots`.

Importing the package imports nothing else, so :mod:`.client` works without Starlette.
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
