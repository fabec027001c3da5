"""The actions of the color reference game, ``colors_v1``, as typed schemas (games/actions.py).

Structure and types only; whose turn it is and which round is on are the rules' checks
(games/colors/rules.py).
"""
from typing import Literal

from games.actions import ActionModel, ActionSchema, Int, Text
from games.colors import rules

ChatText = Text(rules.MAX_MESSAGE_LEN)
Round = Int(lo=1)


class Chat(ActionModel):
    """A chat message, from either seat at any time of a round. ``round`` (1-based, optional,
    may be null) names the round it is meant for: a message for a round that is over is refused
    (``round_over``). A match's config may set a shorter limit than the one shown here."""

    ROLES = ("speaker", "listener")
    type: Literal["chat"]
    text: ChatText
    round: Round | None = None


class Click(ActionModel):
    """The listener's choice, once the speaker has spoken this round: ``position`` in the
    listener's own order of the three colors. Ends the round, right or wrong."""

    ROLES = ("listener",)
    type: Literal["click"]
    position: Int(0, rules.N_COLORS - 1)
    round: Round


SCHEMA = ActionSchema(rules.GAME_ID, (Chat, Click))
