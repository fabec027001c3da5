"""What each seat of the color reference game must not know (see :mod:`games.hidden`).

* Listener, while a round is open: which colour is the target. By value: the target's HSL may
  reach the listener only as one of its own three colours, in its own order, unflagged (the list
  :func:`games.colors.rules.colors_for` gives it); the speaker's list (with its ``target`` flag),
  the content's list (target first) or the HSL anywhere else is a leak. Its position (0..2) is
  a small number: :func:`vary` makes another colour the target and the listener's view and
  outcome must not change. Once the listener has clicked, the round is over and its outcome
  (target, click, both orders) may be shown to both seats.
* Speaker, while a round is open: the listener's order of the colours (it would allow "click the
  left one"), when it differs from the speaker's own.
"""
from __future__ import annotations

import random

from games.colors import rules
from games.hidden import Hidden

# The roles something is hidden from at some point of a match, and those whose secrets the full
# record (rules.outcome) holds while it runs (games/hidden.py; games/testing.py checks both).
SECRET_ROLES = ("speaker", "listener")
OUTCOME_HIDES_FROM = ()


def _current(state: dict) -> dict | None:
    return None if rules.is_over(state) else state["rounds"][state["round"]]


def hidden_from(state: dict, role: str) -> list[Hidden]:
    round_ = _current(state)
    if round_ is None:
        return []
    mine = rules.colors_for(round_, "listener")
    if role == "listener":
        return [Hidden("the current round's target colour (outside the listener's own list)",
                       list(round_["colors"][0]), allowed_in=(mine,))]
    if role == "speaker":
        order = [c["hsl"] for c in mine]
        if order != [c["hsl"] for c in rules.colors_for(round_, "speaker")]:
            return [Hidden("the listener's order of the current round's colours", order),
                    Hidden("the listener's colours in its order", mine)]
    return []


def vary(state: dict, role: str, rng: random.Random) -> dict | None:
    """Listener: make a distractor the target of the current round, every colour staying where
    the listener sees it (content index 0 is the target)."""
    round_ = _current(state)
    if role != "listener" or round_ is None:
        return None
    other = rng.choice((1, 2))
    order = [other] + [i for i in range(3) if i != other]
    swapped = {**round_,
               "colors": [round_["colors"][i] for i in order],
               "positions": {who: [slots[i] for i in order] for who, slots in round_["positions"].items()}}
    rounds = list(state["rounds"])
    rounds[state["round"]] = swapped
    return {**state, "rounds": rounds}


def random_action(view: dict, rng: random.Random) -> dict | None:
    if view.get("over"):
        return None
    number = view["round"]
    if view.get("can_click") and rng.random() < 0.7:
        return {"type": "click", "position": rng.randrange(3), "round": number}
    spoke = any(m.get("role") == "speaker" for m in view.get("messages", []))
    if view["role"] == "speaker" and spoke and rng.random() < 0.7:
        return None
    return {"type": "chat", "text": rng.choice(("the bright one", "not the dark one", "which?", "ok")),
            "round": number}
