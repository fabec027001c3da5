"""Visual-dialog chat (Das et al. 2017, ``seeds/004_*``): the VisDial live two-person protocol.

The questioner sees only a caption of a hidden image and asks questions to imagine the scene
better; the answerer sees the image (here a CLEVR scene, fully annotated, ``seeds/002_*``) and the
caption and answers. The chat strictly alternates: the questioner must wait for each answer before
asking again. The dialog has ``rounds`` (10) question/answer pairs; the game ends after the 10th
answer. Messages are 1-200 characters.

Actions (``at`` stamped by the server)::

    {"type": "ask", "text": str}       questioner, when expects == "question"
    {"type": "answer", "text": str}    answerer, when expects == "answer"

Illegal-move codes: bad_action, unknown_action, unknown_role, wrong_role, bad_field,
empty_message, message_too_long, answer_pending (asks before the answer came), no_question
(answers when no question is pending), game_over.

Version history: ``visdial_v1``: first version.
"""
from __future__ import annotations

from games.base import SYSTEM, Event, action_type, at_ms, require, text_field

GAME_ID = "visdial_v1"
ROLES = ("questioner", "answerer")


class C:
    ROUNDS = 10
    QUESTION_MAX = 200
    ANSWER_MAX = 200
    ACTIONS = ("ask", "answer")


# What takes a turn (games/base.py, the turn clock): the question, the answer.
TURN_ACTIONS = {"questioner": ("ask",), "answerer": ("answer",)}
TURN_LIMIT_S = 180


def initial_state(content: dict, seed: int, config: dict) -> dict:
    rounds = int((config or {}).get("rounds", C.ROUNDS))
    if not 1 <= rounds <= 50:
        raise ValueError("rounds must be in 1..50")
    return {"game_id": GAME_ID, "seed": seed, "rounds": rounds, "image_id": content["image_id"],
            "scene": content["scene"], "caption": content["caption"], "phase": "question", "round": 1,
            "dialog": []}


def start_events(state: dict) -> list[Event]:
    return [Event("game_started", {"rounds": state["rounds"], "caption": state["caption"]},
                  private={"answerer": {"image_id": state["image_id"]}})]


def to_act(state: dict) -> tuple[str, ...]:
    return {"question": ("questioner",), "answer": ("answerer",)}.get(state["phase"], ())


def is_over(state: dict) -> bool:
    return state["phase"] == "done"


def view_for(state: dict, role: str) -> dict:
    phase = state["phase"]
    view = {
        "game_id": GAME_ID, "role": role, "phase": phase,
        "expects": phase if role in to_act(state) else None,
        "your_turn": role in to_act(state), "waiting_for": list(to_act(state)),
        "round": state["round"], "rounds_total": state["rounds"], "caption": state["caption"],
        "pending_question": state["dialog"][-1]["question"] if phase == "answer" else None,
        "dialog": [{"round": d["round"], "question": d["question"], "answer": d.get("answer")}
                   for d in state["dialog"]],
    }
    if role == "answerer":
        view["image"] = {"id": state["image_id"], "scene": state["scene"]}
    return view


def outcome(state: dict) -> dict:
    done = [d for d in state["dialog"] if d.get("answer") is not None]
    return {"rounds": state["rounds"], "rounds_completed": len(done), "complete": state["phase"] == "done",
            "mean_question_words": (sum(len(d["question"].split()) for d in done) / len(done)) if done else None,
            "mean_answer_words": (sum(len(d["answer"].split()) for d in done) / len(done)) if done else None}


def outcome_for(state: dict, role: str) -> dict:
    """What ``role`` may see of the outcome: all of it (counts of the dialog both seats read;
    the image stays the answerer's, games/visdial/hidden.py)."""
    return outcome(state)


def apply(state: dict, role: str, action: dict) -> tuple[dict, list[Event]]:
    kind = action_type(action, C.ACTIONS)
    at = at_ms(action)
    require(role in ROLES or role == SYSTEM, "unknown_role", f"{role!r} is not a seat of this game.")
    need = "questioner" if kind == "ask" else "answerer"
    require(role == need, "wrong_role", f"Only the {need} may {kind}.")
    phase = state["phase"]
    require(phase != "done", "game_over", "This dialog is complete.")
    rnd = state["round"]
    if kind == "ask":
        require(phase == "question", "answer_pending", "Wait for the answer before asking again.")
        text = text_field(action, "text", max_len=C.QUESTION_MAX, what="question")
        entry = {"round": rnd, "question": text, "asked_at": at}
        return ({**state, "phase": "answer", "dialog": state["dialog"] + [entry]},
                [Event("question_asked", {"round": rnd, "text": text})])
    require(phase == "answer", "no_question", "There is no question to answer.")
    text = text_field(action, "text", max_len=C.ANSWER_MAX, what="answer")
    entry = {**state["dialog"][-1], "answer": text, "answered_at": at}
    dialog = state["dialog"][:-1] + [entry]
    events = [Event("answer_given", {"round": rnd, "text": text})]
    if rnd >= state["rounds"]:
        events.append(Event("dialog_completed", {"rounds": rnd}))
        return {**state, "phase": "done", "dialog": dialog}, events
    return {**state, "phase": "question", "round": rnd + 1, "dialog": dialog}, events
