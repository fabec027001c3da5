"""Rules of CoDraw, ``codraw_v1`` (pure: no Django, no I/O).

Kim, Kitaev, Chen, Rohrbach, Tian, Batra & Parikh, "CoDraw: Collaborative Drawing as a Testbed for
Grounded Goal-driven Communication" (seeds/000). A Teller sees a clip-art park scene; a Drawer sees
an empty 500x400 canvas and a palette (Mike, Jenny and 18 other clip arts) and rebuilds the scene
from the Teller's messages. Score: the scene similarity of :mod:`games.codraw.metric` (0..5).

Turns. A round is one Teller message, then the Drawer's canvas changes, then one Drawer message:

* Teller's turn: ``{"type": "chat", "text"}`` (at most 140 characters) hands the turn to the
  Drawer; ``{"type": "peek"}`` (once per game) shows the Teller, and only the Teller, the Drawer's
  canvas as it is now; chat is blocked until ``{"type": "close_peek"}``; ``{"type": "end"}`` ends
  the game.
* Drawer's turn: any number of canvas actions, then ``{"type": "chat", "text"}``, which ends the
  round. Canvas actions (``idx`` is the clip art's global index, see clipart.py)::

      {"type": "place",  "idx", "x", "y", "depth"?: 0, "flip"?: 0,
                         "subtype"?: 0 | "pose"?, "expression"?    (Mike/Jenny only)}
      {"type": "update", "idx", any of "x", "y", "depth", "flip", "subtype" | "pose"/"expression"}
      {"type": "remove", "idx"}

  ``x, y`` (the piece's centre; numbers, rounded like the dataset's ``int(round(v))``) may lie
  outside the canvas, as pieces in the CoDraw scenes do ("cut off at the top"), but the piece must
  stay within reach: the centre may be at most ``max(100, half the piece's scaled size)`` pixels
  beyond the canvas edge. 100 px keeps any piece partly visible and grabbable in the browser, and
  the half-size term admits every position the original drag-and-drop interface could produce
  (the pointer is on the canvas and on the piece, so the centre is within half a piece of it).
* ``{"type": "time_up"}`` from ``system`` ends the game (the platform's timer). The limit is
  ``config["time_limit_s"]`` (default 1200 s, the paper's 20 minutes), counted from
  ``config["start_ms"]`` if given, else from the first action; an action stamped after the
  deadline ends the game instead of being applied.

After every round the Drawer's canvas is recorded (``round_recorded``: ``seq_t, seq_d, msg_t,
msg_d, peeked`` public; the canvas strings ``abs_b`` (before the Drawer's changes) and ``abs_d``
(after) private to the Drawer; the round's score private to ``system``). A round is ``peeked``
when its Teller message came after the peek. ``game_ended`` carries the score and the final
canvas (the game is over, so both sides may see everything).

Events: ``game_started``, ``message_sent``, ``canvas_changed`` (public: only that the Drawer
changed something; private to the Drawer: what), ``peek_opened`` (the snapshot private to the
Teller), ``peek_closed``, ``round_recorded``, ``game_ended``.

Illegal-move codes: ``game_over``, ``wrong_role``, ``out_of_turn``, ``peek_used``, ``peek_open``,
``peek_not_open``, ``unknown_clipart``, ``not_in_palette``, ``already_placed``, ``not_on_canvas``,
``bad_position``, ``off_canvas``, ``bad_depth``, ``bad_flip``, ``bad_subtype``, ``bad_pose``,
``bad_expression``, ``subtype_not_allowed``, ``empty_update``, plus those of :mod:`games.base`
(``bad_action``, ``unknown_action``, ``bad_field``, ``empty_message``, ``message_too_long``).

State (plain JSON dict, never mutated; ``apply`` copies only what changes)::

    {"seed", "abs_t", "target": [piece], "palette": [idx], "layout": canvas string (the palette's
     slots as last written, see :func:`canvas_scene`), "canvas": {str(idx): piece},
     "phase": "teller" | "drawer" | "over", "round": index of the current round (0-based),
     "pending": {"msg_t", "abs_b", "peeked", "at"} while the Drawer has the turn, else None,
     "rounds": [{"seq_t", "seq_d", "msg_t", "msg_d", "abs_b", "abs_d", "peeked", "score"}],
     "chat": [{"role", "text", "round", "at"}],
     "peek": {"used", "open", "round", "abs"}, "max_message_len", "time_limit_s",
     "started_at", "deadline", "ended_by", "ended_at", "script",
     "replay": the recorded rounds (config ``replay_dialog``) or None}

Replays (``config["replay_dialog"]``, content with a recorded dialog): the canvas starts as the
recorded first ``abs_b``; a message equal to the recorded one is taken as it is (even empty or
over the length limit); rounds carry the recorded ``seq_t``/``seq_d``; a canvas that reads the
same as the recorded ``abs_b``/``abs_d`` keeps the recorded string and score (docs/games/codraw.md).

with ``piece = {"idx", "x", "y", "depth", "flip", "subtype"}``.
"""
from __future__ import annotations

import math

from games.base import SYSTEM, Event, IllegalAction, action_type, at_ms, require, text_field
from games.codraw import clipart as ca
from dataclasses import replace

from games.codraw.content import check_content, layout_of
from games.codraw.metric import original_similarity, similarity
from games.codraw.scenes import NOT_USED, Piece, Scene, as_scene, format_scene, parse_scene

# ------------------------------------------------------------------------------------- constants
GAME_ID = "codraw_v1"
ROLES = ("teller", "drawer")
TELLER, DRAWER = ROLES
ACTIONS = ("chat", "peek", "close_peek", "end", "place", "update", "remove", "time_up")
CANVAS_ACTIONS = ("place", "update", "remove")
MAX_MESSAGE_LEN = 140
# What takes a turn (games/base.py, the turn clock): the Teller's message (or ending the game), the
# Drawer's reply. Canvas changes and the peek are part of a turn, not the end of one.
TURN_ACTIONS = {TELLER: ("chat", "end"), DRAWER: ("chat",)}
TURN_LIMIT_S = 300
TIME_LIMIT_S = 1200
OFF_CANVAS_MARGIN = 100
PHASE_TELLER, PHASE_DRAWER, PHASE_OVER = "teller", "drawer", "over"
REPLAY_KEYS = ("seq_t", "seq_d", "msg_t", "msg_d", "abs_b", "abs_d", "peeked", "score")


# ------------------------------------------------------------------------------------- the state
def initial_state(content: dict, seed: int, config: dict | None = None) -> dict:
    config = config or {}
    check_content(content)
    target = parse_scene(content["abs_t"])
    seen: set[int] = set()
    pieces = []
    for piece in target.placed:          # the first of a repeated idx counts, as in the metric
        if piece.idx not in seen:
            seen.add(piece.idx)
            pieces.append(piece.to_dict())
    limit = int(config.get("time_limit_s", TIME_LIMIT_S))
    start = config.get("start_ms")
    script = None
    if config.get("script_teller"):
        script = [r.get("msg_t", "") for r in content.get("dialog", [])]
    layout = layout_of(content, seed)
    canvas: dict[str, dict] = {}
    replay = None
    if config.get("replay_dialog"):
        replay = [{key: r.get(key) for key in REPLAY_KEYS if key in r} for r in content.get("dialog") or []]
        first = parse_scene(replay[0].get("abs_b") or "") if replay else Scene(())
        if first.pieces:
            layout = replay[0]["abs_b"]
        for piece in first.placed:              # the recorded Drawer's canvas before round 1
            if piece.idx in content["palette"] and str(piece.idx) not in canvas:
                canvas[str(piece.idx)] = piece.to_dict()
    return {
        "seed": seed,
        "abs_t": content["abs_t"],
        "target": pieces,
        "palette": list(content["palette"]),
        "layout": layout,
        "canvas": canvas,
        "phase": PHASE_TELLER,
        "round": 0,
        "pending": None,
        "rounds": [],
        "chat": [],
        "peek": {"used": False, "open": False, "round": None, "abs": None},
        "max_message_len": int(config.get("max_message_len", MAX_MESSAGE_LEN)),
        "time_limit_s": limit,
        "started_at": start,
        "deadline": None if start is None else int(start) + limit * 1000,
        "ended_by": None,
        "ended_at": None,
        "script": script,
        "replay": replay,
    }


def is_over(state: dict) -> bool:
    return state["phase"] == PHASE_OVER


def to_act(state: dict) -> tuple[str, ...]:
    if state["phase"] == PHASE_TELLER:
        return (TELLER,)
    if state["phase"] == PHASE_DRAWER:
        return (DRAWER,)
    return ()


def target_scene(state: dict) -> Scene:
    return Scene(tuple(Piece.from_dict(p) for p in state["target"]))


def canvas_scene(state: dict) -> Scene:
    """The Drawer's canvas as ``Abs.js`` writes ``abs_b``/``abs_d``: every slot of the layout in
    its order (content.make_layout: 28 slots, 5 of them Mike's and 5 Jenny's), the pieces on the
    canvas in their slots, the others at ``-10000`` with their slot's flip (state of matches made
    before layouts: every palette piece, in palette order)."""
    if "layout" not in state:
        pieces = []
        for idx in state["palette"]:
            data = state["canvas"].get(str(idx))
            pieces.append(Piece.from_dict(data) if data else Piece(idx=idx))
        return Scene(tuple(pieces), trailing_comma=True)
    return merge_layout(parse_scene(state["layout"]), state["canvas"])


def merge_layout(layout: Scene, canvas: dict[str, dict]) -> Scene:
    """The layout's slots with ``canvas`` (``{str(idx): piece}``) in them, as ``Abs.js`` keeps them.

    A piece goes into its clip art's slot (Mike or Jenny into the slot already holding them if
    the look is unchanged, else the slot with that look, as picking another look in the original
    palette moves the person there; with no slot of that look, the holding or first slot takes
    the new look); a slot whose piece left the canvas keeps everything but ``x`` (set to -10000,
    as the interface does); a slot whose values are unchanged keeps its spelling. A piece without
    a slot (not in the recorded palette) is written after the last slot.
    """
    slots = list(layout.pieces)
    done: set[int] = set()
    for idx_text, data in canvas.items():
        piece = Piece.from_dict(data)
        places = [i for i, slot in enumerate(slots) if slot.idx == piece.idx]
        if not places:
            continue
        if piece.is_human:
            holding = [i for i in places if slots[i].placed]
            same = [i for i in places if slots[i].subtype == piece.subtype]
            if holding and slots[holding[0]].subtype == piece.subtype:
                chosen = holding[0]
            elif same:
                chosen = same[0]
            else:
                chosen = (holding or places)[0]
        else:
            chosen = places[0]
        slot = slots[chosen]
        if (slot.x, slot.y, slot.depth, slot.flip, slot.subtype) != (piece.x, piece.y, piece.depth,
                                                                     piece.flip, piece.subtype):
            slots[chosen] = replace(piece, local=slot.local)
        for i in places:
            if i != chosen and slots[i].placed:
                slots[i] = slots[i].moved(x=NOT_USED)
        done.add(piece.idx)
    for i, slot in enumerate(slots):
        if slot.placed and slot.idx not in done:
            slots[i] = slot.moved(x=NOT_USED)
    have = {slot.idx for slot in slots}
    for idx_text, data in canvas.items():
        if data["idx"] not in have:
            slots.append(Piece.from_dict(data))
    return Scene(tuple(slots), trailing_comma=True if layout.blank or not layout.pieces else layout.trailing_comma,
                 extra=layout.extra)


def reads_the_same(a: Scene | str, b: Scene | str) -> bool:
    """Whether the reference reader gets the same placed pieces from both (in any order)."""
    def placed(scene):
        return sorted((p.idx, p.subtype, p.depth, p.flip, p.x, p.y) for p in as_scene(scene).placed)
    return placed(a) == placed(b)


def canvas_string(state: dict) -> str:
    return format_scene(canvas_scene(state))


def placed_pieces(state: dict) -> list[dict]:
    """The pieces on the canvas, in palette order, with names."""
    return [Piece.from_dict(state["canvas"][str(idx)]).to_dict(names=True)
            for idx in state["palette"] if str(idx) in state["canvas"]]


def score(state: dict) -> float:
    return similarity(canvas_scene(state), target_scene(state)).score


def start_events(state: dict) -> list[Event]:
    return [Event("game_started",
                  {"time_limit_s": state["time_limit_s"], "max_message_len": state["max_message_len"],
                   "deadline": state["deadline"]},
                  {TELLER: {"target": [Piece.from_dict(p).to_dict(names=True) for p in state["target"]]},
                   DRAWER: {"palette": palette_view(state)}})]


# --------------------------------------------------------------------------------------- the views
def palette_view(state: dict) -> list[dict]:
    return [{"idx": idx, "name": ca.CLIPARTS[idx].name, "group": ca.CLIPARTS[idx].group,
             "human": ca.is_human(idx), "on_canvas": str(idx) in state["canvas"]}
            for idx in state["palette"]]


def allowed_actions(state: dict, role: str) -> list[str]:
    """The action types ``role`` may send now (a hint for the UI and agents)."""
    phase = state["phase"]
    if role == TELLER and phase == PHASE_TELLER:
        if state["peek"]["open"]:
            return ["close_peek", "end"]
        return ["chat"] + ([] if state["peek"]["used"] else ["peek"]) + ["end"]
    if role == DRAWER and phase == PHASE_DRAWER:
        return ["place", "update", "remove", "chat"] if state["canvas"] else ["place", "chat"]
    return []


def view_for(state: dict, role: str | None) -> dict:
    """What ``role`` may see: the Teller the target (and its one peek), the Drawer the palette and
    the canvas; both the chat. ``None`` (an observer) gets the shared part only. Once the game is
    over both get the result, target and final canvas included."""
    over = state["phase"] == PHASE_OVER
    view = {
        "game_id": GAME_ID,
        "role": role,
        "phase": state["phase"],
        "your_turn": role in to_act(state),
        "can": allowed_actions(state, role) if role in ROLES else [],
        "round": state["round"],
        "chat": [dict(message) for message in state["chat"]],
        "max_message_len": state["max_message_len"],
        "canvas_size": [ca.CANVAS_W, ca.CANVAS_H],
        "time": {"limit_s": state["time_limit_s"], "started_at": state["started_at"],
                 "deadline": state["deadline"]},
        "over": over,
        "ended_by": state["ended_by"],
    }
    if role == TELLER:
        view["target"] = [Piece.from_dict(p).to_dict(names=True) for p in state["target"]]
        peek = state["peek"]
        view["peek"] = {
            "available": not peek["used"] and not over,
            "open": peek["open"],
            "round": peek["round"],
            "canvas": None if peek["abs"] is None else parse_scene(peek["abs"]).to_dicts(names=True),
        }
        if state.get("script") is not None:
            view["script"] = list(state["script"])
        if state.get("replay") is not None:     # a replay: the recorded Teller side, round by round
            view["replay"] = [{"msg_t": r.get("msg_t", ""), "peeked": bool(r.get("peeked"))}
                              for r in _replay_rounds(state)]
    elif role == DRAWER:
        view["palette"] = palette_view(state)
        view["canvas"] = placed_pieces(state)
        if state.get("replay") is not None:     # a replay: the recorded Drawer side, round by round
            view["replay"] = [{"msg_d": r.get("msg_d", ""), "abs_d": r.get("abs_d", "")}
                              for r in _replay_rounds(state)]
    if over:
        result = similarity(canvas_scene(state), target_scene(state))
        view["result"] = {
            "score": result.score,
            "similarity": result.to_dict(),
            "target": [Piece.from_dict(p).to_dict(names=True) for p in state["target"]],
            "canvas": placed_pieces(state),
            "rounds": len(state["rounds"]),
        }
    return view


# ------------------------------------------------------------------------------------- validation
def _whole(action: dict, key: str, code: str, lo: int, hi: int, what: str) -> int:
    value = action.get(key)
    require(isinstance(value, int) and not isinstance(value, bool), code, f"The {what} must be a whole number.")
    require(lo <= value <= hi, code, f"The {what} must be between {lo} and {hi}, not {value}.")
    return value


def _idx(state: dict, action: dict) -> int:
    value = action.get("idx")
    require(isinstance(value, int) and not isinstance(value, bool), "bad_field",
            "A canvas action needs the clip art's \"idx\" (a whole number).")
    require(ca.is_valid_idx(value), "unknown_clipart", f"There is no clip art {value}; idx runs 0..57.")
    require(value in state["palette"], "not_in_palette",
            f"The {ca.CLIPARTS[value].name} (idx {value}) is not in the Drawer's palette.")
    return value


def _coordinate(action: dict, key: str) -> int:
    value = action.get(key)
    require(isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value), "bad_position", f"\"{key}\" must be a number (pixels).")
    return int(round(float(value)))


def _check_reach(idx: int, x: int, y: int, depth: int) -> None:
    width, height = ca.scaled_size(idx, depth)
    margin_x = max(OFF_CANVAS_MARGIN, width / 2)
    margin_y = max(OFF_CANVAS_MARGIN, height / 2)
    require(-margin_x <= x <= ca.CANVAS_W + margin_x and -margin_y <= y <= ca.CANVAS_H + margin_y,
            "off_canvas",
            f"({x}, {y}) is too far off the {ca.CANVAS_W}x{ca.CANVAS_H} canvas for the "
            f"{ca.CLIPARTS[idx].name} at depth {depth}: its centre may be at most "
            f"{int(margin_x)} px left/right and {int(margin_y)} px above/below the edges.")


def _subtype(action: dict, idx: int, current: int) -> int:
    keys = [key for key in ("subtype", "pose", "expression") if key in action]
    if not keys:
        return current
    require(ca.is_human(idx), "subtype_not_allowed",
            f"Only Mike and Jenny have a pose and expression, not the {ca.CLIPARTS[idx].name}.")
    if "subtype" in action:
        require(keys == ["subtype"], "bad_subtype", "Give either \"subtype\" or \"pose\"/\"expression\", not both.")
        return _whole(action, "subtype", "bad_subtype", 0, ca.N_SUBTYPES - 1, "subtype")
    pose = _whole(action, "pose", "bad_pose", 0, ca.N_POSES - 1, "pose") if "pose" in action \
        else ca.pose_of(current)
    expression = _whole(action, "expression", "bad_expression", 0, ca.N_EXPRESSIONS - 1, "expression") \
        if "expression" in action else ca.expression_of(current)
    return ca.subtype_of(pose, expression)


def _piece_fields(action: dict, idx: int, base: dict) -> dict:
    """The piece ``base`` with the action's fields applied and checked."""
    piece = dict(base)
    if "x" in action:
        piece["x"] = _coordinate(action, "x")
    if "y" in action:
        piece["y"] = _coordinate(action, "y")
    if "depth" in action:
        piece["depth"] = _whole(action, "depth", "bad_depth", 0, ca.N_DEPTHS - 1, "depth")
    if "flip" in action:
        piece["flip"] = _whole(action, "flip", "bad_flip", 0, 1, "flip")
    piece["subtype"] = _subtype(action, idx, piece["subtype"])
    _check_reach(idx, piece["x"], piece["y"], piece["depth"])
    return piece


# ------------------------------------------------------------------------------------------ apply
def apply(state: dict, role: str, action: dict) -> tuple[dict, list[Event]]:
    kind = action_type(action, ACTIONS)
    at = at_ms(action)
    require(role in ROLES or role == SYSTEM, "wrong_role", f"Unknown role {role!r}.")
    require(state["phase"] != PHASE_OVER, "game_over", "The game is over.")
    if role == SYSTEM:
        require(kind == "time_up", "wrong_role", "The server may only call time (\"time_up\").")
        return _end(state, at, "time_up")
    require(kind != "time_up", "wrong_role", "Only the server's timer calls time.")
    if state["deadline"] is not None and at > state["deadline"]:
        return _end(state, at, "time_up")
    if state["started_at"] is None:
        state = {**state, "started_at": at, "deadline": at + state["time_limit_s"] * 1000}
    return _HANDLERS[kind](state, role, action, at)


def _teller_turn(state: dict, role: str) -> None:
    require(role == TELLER, "wrong_role", "Only the Teller can do that.")
    require(state["phase"] == PHASE_TELLER, "out_of_turn", "It is the Drawer's turn; wait for the reply.")


def _drawer_turn(state: dict, role: str) -> None:
    require(role == DRAWER, "wrong_role", "Only the Drawer can change the canvas.")
    require(state["phase"] == PHASE_DRAWER, "out_of_turn",
            "It is the Teller's turn; the canvas can change after the Teller's next message.")


def _replay_rounds(state: dict) -> list[dict]:
    return state.get("replay") or []


def _recorded(state: dict) -> dict | None:
    """The recorded round this round replays (config ``replay_dialog``), if any."""
    replay = state.get("replay")
    if replay and state["round"] < len(replay):
        return replay[state["round"]]
    return None


def _chat(state: dict, role: str, action: dict, at: int) -> tuple[dict, list[Event]]:
    if role == TELLER:
        _teller_turn(state, role)
        require(not state["peek"]["open"], "peek_open", "Close the peek window before sending a message.")
    else:
        _drawer_turn(state, role)
    recorded = _recorded(state)
    said = action.get("text")
    if recorded is not None and isinstance(said, str) and said == recorded.get("msg_t" if role == TELLER else "msg_d"):
        text = said              # a replay sends the recorded message as it is (even empty or long)
    else:
        text = text_field(action, "text", max_len=state["max_message_len"])
    round_ = state["round"]
    message = {"role": role, "text": text, "round": round_, "at": at}
    sent = Event("message_sent", {"role": role, "text": text, "round": round_})
    chat = state["chat"] + [message]
    if role == TELLER:
        abs_b = canvas_string(state)
        layout = state.get("layout")
        if recorded is not None and isinstance(recorded.get("abs_b"), str) \
                and reads_the_same(recorded["abs_b"], abs_b):
            abs_b = recorded["abs_b"]             # the same canvas, spelled as recorded
            if parse_scene(abs_b).pieces:
                layout = abs_b
        pending = {"msg_t": text, "abs_b": abs_b, "peeked": state["peek"]["used"], "at": at}
        new_state = {**state, "chat": chat, "phase": PHASE_DRAWER, "pending": pending}
        if layout is not None:
            new_state["layout"] = layout
        return new_state, [sent]
    record, recorded_event, layout = _record_round(state, text)
    new_state = {**state, "chat": chat, "phase": PHASE_TELLER, "pending": None,
                 "rounds": state["rounds"] + [record], "round": round_ + 1}
    if layout is not None:
        new_state["layout"] = layout
    return new_state, [sent, recorded_event]


def _record_round(state: dict, msg_d: str) -> tuple[dict, Event, str | None]:
    """The round's record and event, and the layout after it (the canvas string just written)."""
    pending = state["pending"]
    round_ = state["round"]
    scene = canvas_scene(state)
    abs_d = format_scene(scene)
    seq_t = seq_d = round_
    release_score = original_similarity(scene, target_scene(state))
    from_recording = False
    recorded = _recorded(state)
    if recorded is not None:
        seq_t, seq_d = recorded.get("seq_t", round_), recorded.get("seq_d", round_)
        if isinstance(recorded.get("abs_d"), str) and reads_the_same(recorded["abs_d"], scene):
            abs_d = recorded["abs_d"]             # the recorded canvas: its string and its score
            from_recording = True
            release_score = recorded.get("score", "absent")
    layout = abs_d if "layout" in state and parse_scene(abs_d).pieces else state.get("layout")
    result = similarity(scene, target_scene(state))
    record = {"seq_t": seq_t, "seq_d": seq_d, "msg_t": pending["msg_t"], "msg_d": msg_d,
              "abs_b": pending["abs_b"], "abs_d": abs_d, "peeked": pending["peeked"],
              "score": result.score}
    system = {"score": result.score, "similarity": result.to_dict(), "release_score": release_score}
    if from_recording:
        system["from_recording"] = True
    event = Event("round_recorded",
                  {"round": round_, "seq_t": seq_t, "seq_d": seq_d, "msg_t": pending["msg_t"],
                   "msg_d": msg_d, "peeked": pending["peeked"]},
                  {DRAWER: {"abs_b": pending["abs_b"], "abs_d": abs_d}, SYSTEM: system})
    return record, event, layout


def _peek(state: dict, role: str, action: dict, at: int) -> tuple[dict, list[Event]]:
    _teller_turn(state, role)
    require(not state["peek"]["used"], "peek_used", "The one peek of this game has been used.")
    snapshot = canvas_string(state)
    peek = {"used": True, "open": True, "round": state["round"], "abs": snapshot}
    event = Event("peek_opened", {"round": state["round"]},
                  {TELLER: {"canvas": placed_pieces(state), "abs": snapshot}})
    return {**state, "peek": peek}, [event]


def _close_peek(state: dict, role: str, action: dict, at: int) -> tuple[dict, list[Event]]:
    require(role == TELLER, "wrong_role", "Only the Teller can close the peek window.")
    require(state["peek"]["open"], "peek_not_open", "The peek window is not open.")
    return {**state, "peek": {**state["peek"], "open": False}}, [Event("peek_closed", {"round": state["round"]})]


def _end_action(state: dict, role: str, action: dict, at: int) -> tuple[dict, list[Event]]:
    _teller_turn(state, role)
    return _end(state, at, "teller")


def _end(state: dict, at: int, ended_by: str) -> tuple[dict, list[Event]]:
    events: list[Event] = []
    if state["phase"] == PHASE_DRAWER:       # time ran out mid-round: keep the Drawer's work
        record, recorded, layout = _record_round(state, "")
        state = {**state, "rounds": state["rounds"] + [record], "round": state["round"] + 1, "pending": None}
        if layout is not None:
            state["layout"] = layout
        events.append(recorded)
    result = similarity(canvas_scene(state), target_scene(state))
    new_state = {**state, "phase": PHASE_OVER, "ended_by": ended_by, "ended_at": at,
                 "peek": {**state["peek"], "open": False}, "pending": None}
    events.append(Event("game_ended", {
        "ended_by": ended_by,
        "score": result.score,
        "similarity": result.to_dict(),
        "rounds": len(new_state["rounds"]),
        "peeked": new_state["peek"]["used"],
        "abs_t": new_state["abs_t"],
        "abs_d": canvas_string(new_state),
        "target": [Piece.from_dict(p).to_dict(names=True) for p in new_state["target"]],
        "canvas": placed_pieces(new_state),
    }))
    return new_state, events


def _canvas_event(state: dict, op: str, detail: dict) -> Event:
    return Event("canvas_changed", {"round": state["round"]}, {DRAWER: {"op": op, **detail}})


def _with_piece(state: dict, idx: int, piece: dict | None) -> dict:
    canvas = dict(state["canvas"])
    if piece is None:
        del canvas[str(idx)]
    else:
        canvas[str(idx)] = piece
    return {**state, "canvas": canvas}


def _place(state: dict, role: str, action: dict, at: int) -> tuple[dict, list[Event]]:
    _drawer_turn(state, role)
    idx = _idx(state, action)
    require(str(idx) not in state["canvas"], "already_placed",
            f"The {ca.CLIPARTS[idx].name} is already on the canvas; move it with \"update\".")
    require("x" in action and "y" in action, "bad_position", "Placing a piece needs \"x\" and \"y\".")
    piece = _piece_fields(action, idx, {"idx": idx, "x": 0, "y": 0, "depth": 0, "flip": 0, "subtype": 0})
    shown = Piece.from_dict(piece).to_dict(names=True)
    return _with_piece(state, idx, piece), [_canvas_event(state, "place", {"idx": idx, "piece": shown})]


def _update(state: dict, role: str, action: dict, at: int) -> tuple[dict, list[Event]]:
    _drawer_turn(state, role)
    idx = _idx(state, action)
    current = state["canvas"].get(str(idx))
    require(current is not None, "not_on_canvas", f"The {ca.CLIPARTS[idx].name} is not on the canvas.")
    require(any(key in action for key in ("x", "y", "depth", "flip", "subtype", "pose", "expression")),
            "empty_update", "An update needs at least one of x, y, depth, flip, subtype, pose, expression.")
    piece = _piece_fields(action, idx, current)
    shown = Piece.from_dict(piece).to_dict(names=True)
    return _with_piece(state, idx, piece), [_canvas_event(state, "update", {"idx": idx, "piece": shown})]


def _remove(state: dict, role: str, action: dict, at: int) -> tuple[dict, list[Event]]:
    _drawer_turn(state, role)
    idx = _idx(state, action)
    require(str(idx) in state["canvas"], "not_on_canvas", f"The {ca.CLIPARTS[idx].name} is not on the canvas.")
    return _with_piece(state, idx, None), [_canvas_event(state, "remove", {"idx": idx})]


def _time_up(state: dict, role: str, action: dict, at: int) -> tuple[dict, list[Event]]:
    raise IllegalAction("wrong_role", "Only the server's timer calls time.")    # apply() handles it


_HANDLERS = {"chat": _chat, "peek": _peek, "close_peek": _close_peek, "end": _end_action,
             "place": _place, "update": _update, "remove": _remove, "time_up": _time_up}


# ---------------------------------------------------------------------------------------- outcome
def outcome(state: dict) -> dict:
    result = similarity(canvas_scene(state), target_scene(state))
    return {
        "score": result.score,
        "components": result.to_dict()["components"],
        "intersection": result.intersection,
        "union": result.union,
        "rounds": len(state["rounds"]),
        "round_scores": [r["score"] for r in state["rounds"]],
        "peeked": state["peek"]["used"],
        "ended_by": state["ended_by"],
        "finished": state["phase"] == PHASE_OVER,
        "n_target": len(state["target"]),
        "n_canvas": len(state["canvas"]),
    }


def outcome_for(state: dict, role: str) -> dict:
    """What ``role`` may see of the outcome (games/codraw/hidden.py): all of it once the game is
    over; before, nothing that scores the canvas against the target (score, its parts, the round
    scores, the number of target pieces)."""
    full = outcome(state)
    if state["phase"] == PHASE_OVER:
        return full
    return {key: full[key] for key in ("rounds", "peeked", "ended_by", "finished")}


# ------------------------------------------------------------------------------- helpers for agents
def canvas_actions(current, goal) -> list[dict]:
    """Canvas actions that turn the ``current`` canvas into ``goal`` (Scenes, strings or piece
    lists; only placed pieces count): removals, then updates, then placements in draw order.
    A Drawer agent can return the first one each turn and recompute from its next view."""
    now = {p.idx: p for p in as_scene(current).placed}
    want: dict[int, Piece] = {}
    for piece in as_scene(goal).placed:
        want.setdefault(piece.idx, piece)
    actions: list[dict] = [{"type": "remove", "idx": idx} for idx in sorted(now.keys() - want.keys())]
    for idx in sorted(now.keys() & want.keys()):
        old, new = now[idx], want[idx]
        changes = {key: getattr(new, key) for key in ("x", "y", "depth", "flip")
                   if getattr(old, key) != getattr(new, key)}
        if ca.is_human(idx) and old.subtype != new.subtype:
            changes["subtype"] = new.subtype
        if changes:
            actions.append({"type": "update", "idx": idx, **changes})
    for piece in sorted((want[idx] for idx in want.keys() - now.keys()), key=Piece.sort_key):
        action = {"type": "place", "idx": piece.idx, "x": piece.x, "y": piece.y,
                  "depth": piece.depth, "flip": piece.flip}
        if piece.is_human:
            action["subtype"] = piece.subtype
        actions.append(action)
    return actions
