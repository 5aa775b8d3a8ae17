"""Challenges: an author's bot against listed bots, or two of the author's own versions,
unrated, played on the workers in the sandbox like league matches (docs/league.md,
"Challenges")."""

from __future__ import annotations

from .create import cancel_challenge, create_challenge
from .records import (
    BotPrefs,
    Challenge,
    ChallengeError,
    ChallengeMatch,
    ChallengeStatus,
    NotYours,
    bot_prefs,
    challenge_matches,
    challenge_visible,
    get_challenge,
    list_challenges,
    match_id,
    set_bot_prefs,
)

__all__ = [
    "BotPrefs",
    "Challenge",
    "ChallengeError",
    "ChallengeMatch",
    "ChallengeStatus",
    "NotYours",
    "bot_prefs",
    "cancel_challenge",
    "challenge_matches",
    "challenge_visible",
    "create_challenge",
    "get_challenge",
    "list_challenges",
    "match_id",
    "set_bot_prefs",
]
