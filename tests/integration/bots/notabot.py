"""Not a bot: no Bot subclass in here."""

ANSWER = 42
