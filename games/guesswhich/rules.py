"""GuessWhich (Chattopadhyay et al. 2017, ``seeds/001_*``): identify a secret image from a pool by
asking questions of an answerer who sees only the secret.

Play
----
The answerer (ALICE, or a person) sees the secret image; the questioner sees the pool and a
caption of the secret. Each of ``rounds`` (9) rounds: the questioner asks one question (1-200
characters), the answerer answers (1-200 characters), then the questioner clicks its current best
guess (any pool image) before it may ask again. After the last round the questioner clicks images
until it hits the secret; wrong clicks are ruled out and cannot be clicked again; the click order
is its ranking of the pool. Then the questioner rates the answerer (``feedback``: six 1-5 ratings
and an optional comment of at most 1000 characters) or skips; the game is over after that. The
server (role ``system``) may skip the feedback on a timeout.

Bonus (the released code's): 200, minus 10 per wrong final click, plus 10 per round whose best
guess was the secret. Computed here, never taken from an action: an action carrying ``bonus``,
``score``, ``rank``, ``correct`` or ``secret_id`` is refused (``forged_field``). The questioner's
view shows the bonus parts it already knows (wrong clicks) and the total only once the secret is
found, since the per-round part would give the secret away.

Actions (JSON, ``at`` stamped by the server)::

    {"type": "ask", "text": str}                  questioner, when expects == "question"
    {"type": "answer", "text": str}               answerer, when expects == "answer"
    {"type": "guess", "image_id": str}            questioner, when expects == "guess" | "final_guess"
    {"type": "feedback", "ratings": {understood_question, understood_image, fluency, detail,
      accuracy, consistency: int 1-5}, "comment": str (optional, <= 1000)}
    {"type": "skip_feedback"}                     questioner (or system), when expects == "feedback"

Phases: question -> answer -> guess (x rounds) -> final -> feedback -> done.

Illegal-move codes: bad_action, unknown_action, unknown_role, wrong_role, forged_field, bad_field,
empty_message, message_too_long, out_of_range, answer_pending (asks while an answer is due),
guess_required (asks before clicking a best guess), dialog_over (asks after the last round),
no_question (answers when no question is pending), guess_before_answer (guesses before the
round's answer), not_in_pool, ruled_out, already_found (clicks after the secret was found),
not_finished (feedback before the secret was found), game_over.

Version history: ``guesswhich_v1``: first version.
"""
from __future__ import annotations

from games.base import SYSTEM, Event, IllegalAction, action_type, at_ms, require, text_field

GAME_ID = "guesswhich_v1"
ROLES = ("questioner", "answerer")


class C:
    ROUNDS = 9
    QUESTION_MAX = 200
    ANSWER_MAX = 200
    COMMENT_MAX = 1000
    BONUS_BASE = 200
    BONUS_WRONG_CLICK = -10
    BONUS_RIGHT_ROUND = 10
    RATING_KEYS = ("understood_question", "understood_image", "fluency", "detail", "accuracy",
                   "consistency")
    RATING_MIN, RATING_MAX = 1, 5
    FORGED = ("bonus", "score", "rank", "correct", "secret_id", "reciprocal_rank", "outcome")
    ACTIONS = ("ask", "answer", "guess", "feedback", "skip_feedback")


# What takes a turn (games/base.py, the turn clock): every move of the seat the game waits for (there
# is no free chat in GuessWhich); the feedback is the questioner's last turn.
TURN_ACTIONS = {"questioner": ("ask", "guess", "feedback", "skip_feedback"), "answerer": ("answer",)}
TURN_LIMIT_S = 180


# Who may send each action type.
_ACTOR = {"ask": "questioner", "answer": "answerer", "guess": "questioner", "feedback": "questioner",
          "skip_feedback": "questioner"}


# --------------------------------------------------------------------------------------------
# State
# --------------------------------------------------------------------------------------------
def initial_state(content: dict, seed: int, config: dict) -> dict:
    rounds = int((config or {}).get("rounds", C.ROUNDS))
    if not 1 <= rounds <= 50:
        raise ValueError("rounds must be in 1..50")
    pool_ids = [item["id"] for item in content["pool"]]
    if content["secret_id"] not in pool_ids or len(set(pool_ids)) != len(pool_ids):
        raise ValueError("content: the secret must be one of the pool's distinct ids")
    return {
        "game_id": GAME_ID,
        "seed": seed,
        "rounds": rounds,
        "pool": content["pool"],
        "pool_ids": pool_ids,
        "secret_id": content["secret_id"],
        "caption": content["caption"],
        "coarse_rank": content.get("coarse_rank") or {},
        "phase": "question",
        "round": 1,
        "dialog": [],
        "final_clicks": [],
        "feedback": None,
    }


def start_events(state: dict) -> list[Event]:
    return [Event("game_started",
                  {"rounds": state["rounds"], "pool_size": len(state["pool_ids"]), "pool_ids": state["pool_ids"],
                   "caption": state["caption"]},
                  private={"answerer": {"secret_id": state["secret_id"]}})]


def to_act(state: dict) -> tuple[str, ...]:
    phase = state["phase"]
    if phase == "done":
        return ()
    return ("answerer",) if phase == "answer" else ("questioner",)


def is_over(state: dict) -> bool:
    return state["phase"] == "done"


def _found(state: dict) -> bool:
    return state["phase"] in ("feedback", "done") and bool(state["final_clicks"])


def _ruled_out(state: dict) -> list[str]:
    return [c["image_id"] for c in state["final_clicks"] if not c["correct"]]


def bonus(state: dict) -> dict:
    """The bonus parts and total (server-side; see the module docstring)."""
    wrong = len(_ruled_out(state))
    right = sum(1 for d in state["dialog"] if d.get("guess") == state["secret_id"])
    return {"base": C.BONUS_BASE, "wrong_clicks": wrong, "right_round_guesses": right,
            "total": C.BONUS_BASE + C.BONUS_WRONG_CLICK * wrong + C.BONUS_RIGHT_ROUND * right}


def _expects(state: dict, role: str) -> str | None:
    if role not in to_act(state):
        return None
    return {"question": "question", "answer": "answer", "guess": "guess", "final": "final_guess",
            "feedback": "feedback"}.get(state["phase"])


def view_for(state: dict, role: str) -> dict:
    phase = state["phase"]
    pending = state["dialog"][-1]["question"] if phase == "answer" else None
    common = {
        "game_id": GAME_ID, "role": role, "phase": phase, "expects": _expects(state, role),
        "your_turn": role in to_act(state), "waiting_for": list(to_act(state)),
        "round": state["round"], "rounds_total": state["rounds"], "caption": state["caption"],
        "pending_question": pending,
    }
    if role == "answerer":
        secret = next(item for item in state["pool"] if item["id"] == state["secret_id"])
        return {**common,
                "image": {"id": secret["id"], "scene": secret["scene"]},
                "dialog": [{"round": d["round"], "question": d["question"], "answer": d.get("answer")}
                           for d in state["dialog"]],
                "bonus": bonus(state)}
    b = bonus(state)
    found = _found(state)
    view = {**common,
            "pool": state["pool"],
            "dialog": [{"round": d["round"], "question": d["question"], "answer": d.get("answer"),
                        "guess": d.get("guess")} for d in state["dialog"]],
            "final_clicks": [c["image_id"] for c in state["final_clicks"]],
            "ruled_out": _ruled_out(state),
            "bonus": {"base": b["base"], "wrong_clicks": b["wrong_clicks"],
                      "per_wrong_click": C.BONUS_WRONG_CLICK, "per_right_round": C.BONUS_RIGHT_ROUND,
                      "right_round_guesses": b["right_round_guesses"] if found else None,
                      "total": b["total"] if found else None}}
    if found:
        view["secret_id"] = state["secret_id"]
        view["rank"] = len(state["final_clicks"])
    if phase == "feedback":
        view["feedback_form"] = {"ratings": list(C.RATING_KEYS), "min": C.RATING_MIN, "max": C.RATING_MAX,
                                 "comment_max": C.COMMENT_MAX}
    if state["feedback"] is not None:
        view["feedback"] = state["feedback"]
    return view


def outcome(state: dict) -> dict:
    secret = state["secret_id"]
    guesses = [d.get("guess") for d in state["dialog"] if d.get("guess") is not None]
    found = _found(state)
    rank = len(state["final_clicks"]) if found else None
    return {
        "secret_id": secret,
        "pool_size": len(state["pool_ids"]),
        "rounds": state["rounds"],
        "rounds_played": len(guesses),
        "found": found,
        "rank": rank,
        "reciprocal_rank": (1.0 / rank) if rank else None,
        "bonus": bonus(state)["total"],
        "bonus_parts": bonus(state),
        "round_guesses": guesses,
        "round_guess_correct": [g == secret for g in guesses],
        "coarse_ranks": [state["coarse_rank"].get(g) for g in guesses],
        "final_clicks": [c["image_id"] for c in state["final_clicks"]],
        "feedback": state["feedback"],
    }


def outcome_for(state: dict, role: str) -> dict:
    """What ``role`` may see of the outcome (games/guesswhich/hidden.py): the answerer all of it;
    the questioner, until it has clicked the secret, nothing that tells which image it is (the
    secret's id, which round guesses were right, their coarse ranks, the bonus's per-round part)."""
    full = outcome(state)
    if role != "questioner" or _found(state):
        return full
    parts = full["bonus_parts"]
    return {**full, "secret_id": None, "bonus": None, "round_guess_correct": None, "coarse_ranks": None,
            "bonus_parts": {"base": parts["base"], "wrong_clicks": parts["wrong_clicks"]}}


# --------------------------------------------------------------------------------------------
# Actions
# --------------------------------------------------------------------------------------------
def _check_role(role: str, kind: str) -> None:
    require(role in ROLES or role == SYSTEM, "unknown_role", f"{role!r} is not a seat of this game.")
    if role == SYSTEM:
        require(kind == "skip_feedback", "wrong_role", "The server may only skip the feedback.")
        return
    need = _ACTOR[kind]
    require(role == need, "wrong_role", f"Only the {need} may {kind.replace('_', ' ')}.")


def _image_id(state: dict, action: dict) -> str:
    image_id = action.get("image_id")
    require(isinstance(image_id, str), "bad_field", "The guess needs an image id.")
    require(image_id in state["pool_ids"], "not_in_pool", f"{image_id!r} is not an image of this pool.")
    return image_id


def apply(state: dict, role: str, action: dict) -> tuple[dict, list[Event]]:
    kind = action_type(action, C.ACTIONS)
    for key in C.FORGED:
        require(key not in action, "forged_field",
                f"{key!r} is computed by the server and cannot be sent.")
    at = at_ms(action)
    _check_role(role, kind)
    phase = state["phase"]
    require(phase != "done", "game_over", "This game has ended.")
    rnd = state["round"]

    if kind == "ask":
        require(phase != "answer", "answer_pending", "Wait for the answer to your question.")
        require(phase != "guess", "guess_required", "Click your best guess before the next question.")
        require(phase == "question", "dialog_over", f"All {state['rounds']} questions have been asked.")
        text = text_field(action, "text", max_len=C.QUESTION_MAX, what="question")
        entry = {"round": rnd, "question": text, "asked_at": at}
        return ({**state, "phase": "answer", "dialog": state["dialog"] + [entry]},
                [Event("question_asked", {"round": rnd, "text": text})])

    if kind == "answer":
        require(phase == "answer", "no_question", "There is no question to answer.")
        text = text_field(action, "text", max_len=C.ANSWER_MAX, what="answer")
        entry = {**state["dialog"][-1], "answer": text, "answered_at": at}
        return ({**state, "phase": "guess", "dialog": state["dialog"][:-1] + [entry]},
                [Event("answer_given", {"round": rnd, "text": text})])

    if kind == "guess":
        require(phase not in ("question", "answer"), "guess_before_answer",
                "Guess after this round's answer.")
        require(phase in ("guess", "final"), "already_found", "You already found the secret image.")
        image_id = _image_id(state, action)
        if phase == "guess":
            entry = {**state["dialog"][-1], "guess": image_id, "guessed_at": at}
            dialog = state["dialog"][:-1] + [entry]
            events = [Event("guess_made", {"round": rnd, "image_id": image_id})]
            if rnd >= state["rounds"]:
                events.append(Event("dialog_ended", {"rounds": rnd}))
                return {**state, "phase": "final", "dialog": dialog}, events
            return {**state, "phase": "question", "round": rnd + 1, "dialog": dialog}, events
        require(image_id not in _ruled_out(state), "ruled_out", "That image was already ruled out.")
        correct = image_id == state["secret_id"]
        clicks = state["final_clicks"] + [{"image_id": image_id, "correct": correct, "at": at}]
        events = [Event("image_clicked", {"image_id": image_id, "correct": correct, "click": len(clicks)})]
        if not correct:
            return {**state, "final_clicks": clicks}, events
        new = {**state, "final_clicks": clicks, "phase": "feedback"}
        b = bonus(new)
        events.append(Event("secret_found", {"secret_id": image_id, "rank": len(clicks),
                                             "reciprocal_rank": 1.0 / len(clicks), "bonus": b["total"],
                                             "bonus_parts": b}))
        return new, events

    # feedback / skip_feedback
    require(phase == "feedback", "not_finished", "Feedback comes after you have found the secret image.")
    if kind == "skip_feedback":
        new = {**state, "phase": "done", "feedback": {"skipped": True, "by": role}}
        return new, [Event("feedback_skipped", {"by": role}), _finished(new)]
    ratings = action.get("ratings")
    require(isinstance(ratings, dict), "bad_field", "Ratings must be an object.")
    unknown = sorted(set(ratings) - set(C.RATING_KEYS))
    require(not unknown, "bad_field", f"Unknown ratings: {', '.join(map(str, unknown))}.")
    clean = {}
    for key in C.RATING_KEYS:
        value = ratings.get(key)
        require(isinstance(value, int) and not isinstance(value, bool), "bad_field",
                f"Rate {key.replace('_', ' ')} with a whole number.")
        require(C.RATING_MIN <= value <= C.RATING_MAX, "out_of_range",
                f"Ratings go from {C.RATING_MIN} to {C.RATING_MAX}.")
        clean[key] = value
    comment = action.get("comment", "")
    require(isinstance(comment, str), "bad_field", "The comment must be text.")
    comment = comment.strip()
    require(len(comment) <= C.COMMENT_MAX, "message_too_long",
            f"The comment is {len(comment)} characters long; the limit is {C.COMMENT_MAX}.")
    fb = {"ratings": clean, "comment": comment, "at": at}
    new = {**state, "phase": "done", "feedback": fb}
    return new, [Event("feedback_given", {"ratings": clean, "comment": comment}), _finished(new)]


def _finished(state: dict) -> Event:
    o = outcome(state)
    return Event("game_finished", {"rank": o["rank"], "bonus": o["bonus"], "secret_id": o["secret_id"]})


# Keep IllegalAction importable from here for callers that catch it by module.
__all__ = ["GAME_ID", "ROLES", "C", "initial_state", "start_events", "to_act", "view_for", "apply",
           "is_over", "outcome", "outcome_for", "bonus", "IllegalAction"]
