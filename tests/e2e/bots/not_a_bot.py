"""A Python file without any Bot class: ``arena play`` must refuse it (exit status 2)."""


def choose(view: object) -> None:
    return None
