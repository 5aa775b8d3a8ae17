"""A Python file without a Bot class: ``arena sprt`` must refuse it before any game."""


def choose(view: object) -> None:
    return None
