"""Rules of the color reference game, ``colors_v1`` (pure: no Django, no I/O).

Monroe, Hawkins, Goodman & Potts (2017), "Colors in Context: A Pragmatic Neural Model for Grounded
Language Understanding", TACL 5; as used in seeds/003 (Newman, Mirchandani & Gong).

A speaker and a listener see the same three colors, each in their own order; only the speaker
sees which one is the target. Both may chat (``{"type": "chat", "text": ..., "round"?: n}``); once
the speaker has sent a message this round, the listener clicks one of the three positions in the
listener's own order (``{"type": "click", "position": 0..2, "round": n}``). The click ends the
round, right or wrong; the next round starts at once and the game ends after the last round.
Round numbers in actions and views are 1-based.

Events: ``round_started`` (per-role colors in ``private``; the target only in the speaker's part),
``message_sent``, ``color_clicked``, ``round_ended`` (the full round record, public; in
``private`` each role's ``as_seen``: the round's colors in that role's order, where the target and
the listener's pick were in it, right or wrong, the messages), ``game_ended``. The target of a
round reaches the listener only in the events of the click that ends the round. Time comes only
from ``action["at"]``.

Illegal-move codes: ``game_over``, ``wrong_role``, ``round_over`` (stale round number),
``bad_round`` (a round not yet started), ``speaker_first`` (click before the speaker spoke),
plus the field codes of :mod:`games.base` (``bad_action``, ``unknown_action``, ``bad_field``,
``out_of_range``, ``empty_message``, ``message_too_long``).

State (plain JSON dict, never mutated; ``apply`` copies only what changes)::

    {"rounds": [content round, ...], "max_message_len": int, "seed": int,
     "round": 0-based index of the current round (== len(rounds) once over),
     "messages": [{"role", "text", "at"}] of the current round,
     "history": [round summary: round, condition, correct, chosen, positions, response_ms,
                 speaker_words, messages ([{"role", "text"}])], "correct": int}

The full round record (colors, positions, every message with its time, the click) is the
``round_ended`` event's payload in the log; the state keeps a small summary per round (with the
round's messages, so the page can show the chat of every round and the finished page can sum the
rounds up after a reload) so it stays a few kilobytes for a 50-round game.

Views: the round's colors in the seat's order, this round's messages, the score, and ``history``,
each ended round as that seat saw it (:func:`as_seen`: colors, target and pick positions in its own
order, right or wrong, the messages); ``last_round`` is its last item.
"""
from __future__ import annotations

from games.base import Event, action_type, at_ms, int_field, require, text_field

# ----------------------------------------------------------------------------------------- constants
GAME_ID = "colors_v1"
ROLES = ("speaker", "listener")
ACTIONS = ("chat", "click")
CONDITIONS = ("far", "split", "close")
STATUSES = ("target", "distr1", "distr2")   # content color index 0, 1, 2
MAX_MESSAGE_LEN = 140
N_COLORS = 3
# Keys of the state no action changes: stored once per match instead of with every action's
# snapshot (live/match_store.py; the game contract tests check the promise).
STATIC_STATE_KEYS = ("rounds", "max_message_len", "seed")
# What takes a turn (games/base.py, the turn clock): the speaker's is taken by describing the target
# (its first message of the round changes who is to act), the listener's only by the click. Chat
# from the listener, or more chat from the speaker, does not restart the clock.
TURN_ACTIONS = {"speaker": ("chat",), "listener": ("click",)}
TURN_LIMIT_S = 120


# ----------------------------------------------------------------------------------------- the state
def initial_state(content: dict, seed: int, config: dict | None = None) -> dict:
    config = config or {}
    available = content["rounds"]
    n_rounds = int(config.get("rounds", len(available)))
    if not 1 <= n_rounds <= len(available):
        raise ValueError(f"config asks for {n_rounds} rounds; the content has {len(available)}.")
    return {
        "rounds": available[:n_rounds],
        "max_message_len": int(config.get("max_message_len", MAX_MESSAGE_LEN)),
        "seed": seed,
        "round": 0,
        "messages": [],
        "history": [],
        "correct": 0,
    }


def is_over(state: dict) -> bool:
    return state["round"] >= len(state["rounds"])


def speaker_spoke(state: dict) -> bool:
    return any(message["role"] == "speaker" for message in state["messages"])


def to_act(state: dict) -> tuple[str, ...]:
    if is_over(state):
        return ()
    return ("listener",) if speaker_spoke(state) else ("speaker",)


def start_events(state: dict) -> list[Event]:
    return [round_started(state, at=None)]


# ---------------------------------------------------------------------------------------- the views
def colors_for(round_: dict, role: str) -> list[dict]:
    """The round's colors in ``role``'s order; the speaker's carry a ``target`` flag."""
    slots = round_["positions"][role]
    ordered = [None] * N_COLORS
    for index, slot in enumerate(slots):
        item = {"hsl": list(round_["colors"][index])}
        if role == "speaker":
            item["target"] = index == 0
        ordered[slot] = item
    return ordered


def as_seen(round_: dict, summary: dict, role: str) -> dict:
    """An ended round as ``role`` saw it: its colors in ``role``'s order, the target's and the
    listener's pick's positions in that order, right or wrong, and the round's messages. Only for
    a round whose click has happened (it reveals the target)."""
    slots = round_["positions"][role]
    colors = [None] * N_COLORS
    for index, slot in enumerate(slots):
        colors[slot] = list(round_["colors"][index])
    return {
        "round": summary["round"],
        "colors": colors,
        "target_position": slots[0],
        "clicked_position": slots[summary["chosen"]],
        "correct": summary["correct"],
        "messages": [{"role": m["role"], "text": m["text"]} for m in summary.get("messages", ())],
    }


def view_for(state: dict, role: str) -> dict:
    over = is_over(state)
    history = state["history"]
    seen = [as_seen(state["rounds"][record["round"] - 1], record, role) for record in history]
    last = seen[-1] if seen else None
    return {
        "game_id": GAME_ID,
        "role": role,
        "round": len(state["rounds"]) if over else state["round"] + 1,
        "rounds": len(state["rounds"]),
        "colors": [] if over else colors_for(state["rounds"][state["round"]], role),
        "messages": [dict(message) for message in state["messages"]],
        "can_chat": not over,
        "can_click": role == "listener" and not over and speaker_spoke(state),
        "max_message_len": state["max_message_len"],
        "score": {"correct": state["correct"], "played": len(history)},
        "history": seen,
        "last_round": last,
        "over": over,
    }


# ---------------------------------------------------------------------------------------- the moves
def apply(state: dict, role: str, action: dict) -> tuple[dict, list[Event]]:
    kind = action_type(action, ACTIONS)
    require(not is_over(state), "game_over", "The game is over.")
    require(role in ROLES, "wrong_role", f"{role!r} does not play this game.")
    at = at_ms(action)
    if kind == "chat":
        return chat(state, role, action, at)
    return click(state, role, action, at)


def check_round(state: dict, action: dict, *, required: bool) -> int:
    """The current 1-based round number; an action naming another round is refused."""
    current = state["round"] + 1
    if not required and action.get("round") is None:
        return current
    number = int_field(action, "round", lo=1, hi=len(state["rounds"]), what="round number")
    require(number >= current, "round_over", f"Round {number} is over; this is round {current}.")
    require(number == current, "bad_round", f"Round {number} has not started; this is round {current}.")
    return current


def chat(state: dict, role: str, action: dict, at: int) -> tuple[dict, list[Event]]:
    number = check_round(state, action, required=False)
    text = text_field(action, "text", max_len=state["max_message_len"])
    message = {"role": role, "text": text, "at": at}
    new_state = {**state, "messages": [*state["messages"], message]}
    return new_state, [Event("message_sent", {**message, "round": number})]


def click(state: dict, role: str, action: dict, at: int) -> tuple[dict, list[Event]]:
    require(role == "listener", "wrong_role", "Only the listener clicks a color.")
    number = check_round(state, action, required=True)
    position = int_field(action, "position", lo=0, hi=N_COLORS - 1)
    require(speaker_spoke(state), "speaker_first",
            "Wait for the speaker to describe the target before clicking.")
    round_ = state["rounds"][state["round"]]
    chosen = round_["positions"]["listener"].index(position)
    correct = chosen == 0
    score = {"correct": state["correct"] + int(correct), "played": number}
    record = {
        "round": number,
        "condition": round_["condition"],
        "colors": [list(color) for color in round_["colors"]],
        "statuses": list(STATUSES),
        "positions": {who: list(slots) for who, slots in round_["positions"].items()},
        "messages": [dict(message) for message in state["messages"]],
        "click": {"color": chosen, "status": STATUSES[chosen],
                  "listener_position": position,
                  "speaker_position": round_["positions"]["speaker"][chosen]},
        "click_at": at,
        "correct": correct,
        "outcome": "correct" if correct else "incorrect",
        "score": score,
    }
    spoken = [m for m in state["messages"] if m["role"] == "speaker"]
    summary = {  # the state keeps only what views and scores need; the full record is in the log
        "round": number,
        "condition": round_["condition"],
        "correct": correct,
        "chosen": chosen,
        "positions": record["positions"],
        "response_ms": at - spoken[0]["at"],
        "speaker_words": sum(len(m["text"].split()) for m in spoken),
        "messages": [{"role": m["role"], "text": m["text"]} for m in state["messages"]],
    }
    new_state = {
        **state,
        "round": state["round"] + 1,
        "messages": [],
        "history": [*state["history"], summary],
        "correct": score["correct"],
    }
    events = [
        Event("color_clicked", {"round": number, "role": role, **record["click"],
                                "hsl": record["colors"][chosen], "at": at}),
        Event("round_ended", record,
              private={who: {"as_seen": as_seen(round_, summary, who)} for who in ROLES}),
    ]
    if is_over(new_state):
        events.append(Event("game_ended", {**outcome(new_state), "at": at}))
    else:
        events.append(round_started(new_state, at=at))
    return new_state, events


def round_started(state: dict, *, at: int | None) -> Event:
    round_ = state["rounds"][state["round"]]
    return Event(
        "round_started",
        {"round": state["round"] + 1, "rounds": len(state["rounds"]), "at": at},
        private={role: {"colors": colors_for(round_, role)} for role in ROLES},
    )


# ------------------------------------------------------------------------------------------ scoring
def outcome(state: dict) -> dict:
    """Accuracy overall and per condition, plus the Gricean True Score's ingredients.

    ``mean_response_ms`` is, per round, the click time minus the time of the speaker's first message
    (the listener's time to act on the description); ``mean_speaker_words`` counts the speaker's
    whitespace tokens per round. ``gricean_true_score`` (seeds/003, sec. 3.3) is accuracy divided by
    (mean response time in seconds x mean speaker words), ``None`` where undefined.
    """
    history = state["history"]
    played = len(history)
    by_condition = {}
    for condition in CONDITIONS:
        rows = [record for record in history if record["condition"] == condition]
        hits = sum(record["correct"] for record in rows)
        by_condition[condition] = {"played": len(rows), "correct": hits,
                                   "accuracy": hits / len(rows) if rows else None}
    accuracy = state["correct"] / played if played else None
    response_ms = [record["response_ms"] for record in history]
    words = [record["speaker_words"] for record in history]
    mean_ms = sum(response_ms) / played if played else None
    mean_words = sum(words) / played if played else None
    gts = None
    if accuracy is not None and mean_ms and mean_words:
        gts = accuracy / ((mean_ms / 1000.0) * mean_words)
    return {
        "game_id": GAME_ID,
        "rounds": len(state["rounds"]),
        "played": played,
        "correct": state["correct"],
        "accuracy": accuracy,
        "by_condition": by_condition,
        "mean_response_ms": mean_ms,
        "mean_speaker_words": mean_words,
        "gricean_true_score": gts,
        "over": is_over(state),
    }


def outcome_for(state: dict, role: str) -> dict:
    """What ``role`` may see of the outcome: all of it (it counts only rounds already clicked,
    whose outcome both seats see; games/colors/hidden.py)."""
    return outcome(state)

