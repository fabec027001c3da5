"""CoDraw agents (the baselines are added by the agents work; see docs/games/codraw.md).

``summarize`` is what ``manage.py simulate`` prints for this game.
"""
from __future__ import annotations

from agents.base import AgentSpec
from games.codraw.exports import summarize

AGENTS: list[AgentSpec] = []

__all__ = ["AGENTS", "summarize"]
