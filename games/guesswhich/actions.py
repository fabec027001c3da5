"""The actions of GuessWhich, ``guesswhich_v1``, as typed schemas (games/actions.py).

Structure and types only; the phases (question, answer, guess, final, feedback) and whether an
image is in the pool or ruled out are the rules' checks (games/guesswhich/rules.py). Keys that
would forge a result the server computes (``C.FORGED``) are refused as ``forged_field``.
"""
from typing import Literal

from games.actions import ActionModel, ActionSchema, Id, Int, StrictModel, Text
from games.base import SYSTEM
from games.guesswhich.rules import GAME_ID, C

Rating = Int(C.RATING_MIN, C.RATING_MAX)


class GuessWhichAction(ActionModel):
    FORGED = C.FORGED


class Ask(GuessWhichAction):
    """The questioner's question of this round (one per round, after the previous round's guess)."""

    ROLES = ("questioner",)
    type: Literal["ask"]
    text: Text(C.QUESTION_MAX, what="question")


class Answer(GuessWhichAction):
    """The answerer's answer to the pending question."""

    ROLES = ("answerer",)
    type: Literal["answer"]
    text: Text(C.ANSWER_MAX, what="answer")


class Guess(GuessWhichAction):
    """A click on a pool image: the round's best guess, or, after the last round, a try at the
    secret (a wrong one is ruled out)."""

    ROLES = ("questioner",)
    type: Literal["guess"]
    image_id: Id()


class Ratings(StrictModel):
    """The six ratings of the answerer, each 1-5; all six are required."""

    understood_question: Rating
    understood_image: Rating
    fluency: Rating
    detail: Rating
    accuracy: Rating
    consistency: Rating


class Feedback(GuessWhichAction):
    """The questioner's ratings of the answerer once the secret is found, with an optional comment."""

    ROLES = ("questioner",)
    type: Literal["feedback"]
    ratings: Ratings
    comment: Text(C.COMMENT_MAX, what="comment", required=False) = ""


class SkipFeedback(GuessWhichAction):
    """No ratings: the questioner skips the feedback (or the server does, on a timeout)."""

    ROLES = ("questioner", SYSTEM)
    type: Literal["skip_feedback"]


SCHEMA = ActionSchema(GAME_ID, (Ask, Answer, Guess, Feedback, SkipFeedback))
