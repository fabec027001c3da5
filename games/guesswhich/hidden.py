"""What each seat of GuessWhich must not know (see :mod:`games.hidden`).

* Questioner, until it has clicked the secret image: the secret image's id. It may appear only as
  one element of the pool the questioner sees (the pool's items and its list of ids) and as the
  questioner's own click (its dialog, its ``guess_made`` event): anywhere else (an outcome, a
  ``secret_id`` field, the answerer's image, a URL, a file name) it is a leak. Which pool image
  is the secret is also caught by :func:`vary`: another pool image made the secret must leave
  the questioner's view and outcome unchanged (the per-round bonus, the correctness of its round
  guesses and the coarse ranks are therefore hidden too).
* Answerer: nothing (it sees the secret; the questioner's guesses are no secret of the game).
"""
from __future__ import annotations

import random

from games.guesswhich import rules
from games.hidden import Hidden

# The roles something is hidden from at some point of a match, and those whose secrets the full
# record (rules.outcome) holds while it runs (games/hidden.py; games/testing.py checks both).
SECRET_ROLES = ("questioner",)
OUTCOME_HIDES_FROM = ("questioner",)


def _found(state: dict) -> bool:
    return state["phase"] in ("feedback", "done") and bool(state["final_clicks"])


def hidden_from(state: dict, role: str) -> list[Hidden]:
    if role != "questioner" or _found(state):
        return []
    secret = state["secret_id"]
    allowed = [state["pool"], state["pool_ids"], rules.view_for(state, role)["dialog"]]
    allowed += [{"round": d["round"], "image_id": secret} for d in state["dialog"] if d.get("guess") == secret]
    return [Hidden("the secret image id (outside the pool and the questioner's own clicks)", secret,
                   allowed_in=tuple(allowed))]


def vary(state: dict, role: str, rng: random.Random) -> dict | None:
    """Questioner: another pool image, not yet clicked and not ruled out, is the secret."""
    if role != "questioner" or _found(state):
        return None
    clicked = {d.get("guess") for d in state["dialog"]} | {c["image_id"] for c in state["final_clicks"]}
    others = [i for i in state["pool_ids"] if i != state["secret_id"] and i not in clicked]
    if not others:
        return None
    return {**state, "secret_id": rng.choice(others)}


def random_action(view: dict, rng: random.Random) -> dict | None:
    expects = view.get("expects")
    if expects == "question":
        return {"type": "ask", "text": rng.choice(("is there a cube?", "how many spheres?", "what color is it?"))}
    if expects == "answer":
        return {"type": "answer", "text": rng.choice(("yes", "no", "two", "it is red"))}
    if expects in ("guess", "final_guess"):
        ruled_out = set(view.get("ruled_out") or ())
        choices = [item["id"] for item in view.get("pool") or () if item["id"] not in ruled_out]
        return {"type": "guess", "image_id": rng.choice(choices)} if choices else None
    if expects == "feedback":
        if rng.random() < 0.5:
            return {"type": "skip_feedback"}
        return {"type": "feedback", "ratings": {k: rng.randint(rules.C.RATING_MIN, rules.C.RATING_MAX)
                                                for k in rules.C.RATING_KEYS}, "comment": "fine"}
    return None
