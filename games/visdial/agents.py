"""Visual-dialog agents: ALICE as answerer, QBot as questioner.

* ``visdial_alice_exact`` / ``visdial_alice_noisy``: :class:`clevr.alice.Alice` (exact; wrong
  in 20% of rounds) answering from the scene graph.
* ``visdial_qbot``: :class:`clevr.qbot.QBot`; with no pool to choose from it keeps its
  belief over scenes it imagines from the caption and asks the most informative CLEVR-Dialog
  question about them.

``summarize(outcomes)``: completed dialogs and mean message lengths.
"""
from __future__ import annotations

import numpy as np

from agents.base import AgentSpec
from clevr.alice import ALICE_VERSIONS, make_alice
from clevr.qbot import QBot

GAME_ID = "visdial_v1"


def _alice(**kwargs):
    return make_alice(**kwargs)


def _qbot(**kwargs) -> QBot:
    return QBot(**kwargs)


AGENTS = [
    AgentSpec("visdial_alice_exact", GAME_ID, "answerer", _alice,
              description=ALICE_VERSIONS["alice_exact"]["description"], kwargs={"name": "alice_exact"}),
    AgentSpec("visdial_alice_noisy", GAME_ID, "answerer", _alice,
              description=ALICE_VERSIONS["alice_noisy"]["description"], kwargs={"name": "alice_noisy"}),
    AgentSpec("visdial_qbot", GAME_ID, "questioner", _qbot,
              description="QBot asking CLEVR-Dialog questions chosen by information gain over scenes "
                          "imagined from the caption.",
              kwargs={"name": "visdial_qbot"}),
]


def summarize(outcomes) -> str:
    """Completed dialogs and mean message lengths, as text for the simulate command."""
    outcomes = [o for o in outcomes if o]
    q = [o["mean_question_words"] for o in outcomes if o.get("mean_question_words") is not None]
    a = [o["mean_answer_words"] for o in outcomes if o.get("mean_answer_words") is not None]
    rounds = [o["rounds_completed"] for o in outcomes]
    return "\n".join([
        f"{GAME_ID}: {len(outcomes)} matches, {sum(1 for o in outcomes if o.get('complete'))} complete dialogs",
        f"  mean rounds {np.mean(rounds):.2f}" if rounds else "  mean rounds -",
        f"  mean question length {np.mean(q):.1f} words, mean answer length {np.mean(a):.1f} words"
        if q and a else "  no messages",
    ])
