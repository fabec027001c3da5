"""The actions of the visual-dialog chat, ``visdial_v1``, as typed schemas (games/actions.py).

Structure and types only; the strict alternation of question and answer is the rules' check
(games/visdial/rules.py).
"""
from typing import Literal

from games.actions import ActionModel, ActionSchema, Text
from games.visdial.rules import GAME_ID, C


class Ask(ActionModel):
    """The questioner's next question (after the previous answer came)."""

    ROLES = ("questioner",)
    type: Literal["ask"]
    text: Text(C.QUESTION_MAX, what="question")


class Answer(ActionModel):
    """The answerer's answer to the pending question."""

    ROLES = ("answerer",)
    type: Literal["answer"]
    text: Text(C.ANSWER_MAX, what="answer")


SCHEMA = ActionSchema(GAME_ID, (Ask, Answer))
