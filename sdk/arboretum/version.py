"""The rules engine's version, recorded in every replay."""

ENGINE_VERSION = "1.0.0"
RULES_VERSION = "arena-1"
"""The rule set (RULES.md with its [arena] decisions) this engine implements."""
