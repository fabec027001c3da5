"""Baseline agents for CoDraw (``codraw_v1``), after Kim et al., "CoDraw" (seeds/000), Section 4.1
and 5 (rule-based nearest-neighbour agents, script-based Drawer evaluation, crosstalk).

Every agent is stateless: ``act(view)`` reads only the seat's view (``rules.view_for``), including
the chat so far, and returns one action in the browser's format (or None when it is not its turn).

* :class:`RuleTeller` (``codraw_rule_teller``): describes one clip art per message, each piece
  once, in the order of the authors' code (ascending clip-art index: sky, large objects, Mike,
  Jenny, animals, clothing, food, toys), with size, facing, Mike's/Jenny's pose and expression,
  and a place in words a person uses, never a measure: worn and held things relative to their
  person (``small crown on Jenny's head``), everything else by a region of the canvas (``on the
  far left``, ``just right of center``, ``near the bottom``, ``just below the horizon``, ``in
  the sky``) or by a piece already described (``right of the oak tree``, ``under the sun, a bit
  to the left``). It predicts how a Drawer reading :mod:`games.codraw.language` will draw each
  message (it replays its own messages through :func:`language.interpret_dialog`) and picks the
  place whose reading costs least: left/right and above/below orders it gets wrong against the
  pieces already described, and the distance to the true place (:func:`describe_piece`). After the last piece it may peek once
  (``peek=True``), compare the Drawer's canvas with what it meant, and send up to
  ``max_corrections`` corrections (a missed piece asked for, only what is wrong with a misdrawn
  one, removals of pieces that are not in the scene) before it ends the game. ``relative=False``:
  canvas regions only (the nearest-neighbour database's utterances, said out of their scene).
* :class:`RuleDrawer` (``codraw_rule_drawer``): reads every Teller message with
  :func:`language.interpret` (the closed CoDraw vocabulary, see language.py) against its palette,
  and moves its canvas, one canvas action per call, to the canvas the whole chat describes; then
  replies (``ok, added the oak tree``), which ends its turn.
* :class:`NearestNeighbourTeller` / :class:`NearestNeighbourDrawer` (``codraw_nn_teller``,
  ``codraw_nn_drawer``): the paper's rule-based nearest-neighbour agents over a database of
  (Teller utterance, single clip art added) tuples taken from rounds where the Drawer added
  exactly one piece and changed nothing else. The Drawer finds the stored utterance nearest to
  the message by character edit distance (RapidFuzz ``Levenshtein``) among those whose clip art
  is in its palette and draws that clip art as recorded (or moves it there if already drawn);
  the Teller, for each target piece in order, says the stored utterance whose clip art is most
  similar (``metric.clipart_similarity``: same idx, then flip, pose, expression, size, position),
  skipping pieces no stored utterance is about, then ends.
  Data: ``data_path`` (kwarg, or the ``GROUNDTALK_CODRAW_NN_DATA`` environment variable): either a
  database written by :func:`save_database` or a ``CoDraw_1_0.json``; from the latter the Teller
  uses the first half of the ``train_*`` dialogs and the Drawer the second half (the paper's
  crosstalk protocol; ``split="train"`` or ``"all"`` uses them all). Without data, each builds its
  database from dialogs between the rule-based agents on generated scenes, on disjoint seed
  ranges for the Teller and the Drawer (so the defaults work offline, and crosstalk holds).
* :class:`ScriptTeller` (``codraw_script_teller``): replays the Teller side of a recorded dialog
  (the ``msg_t`` of every round of the match content's ``dialog``, which the rules put in the
  Teller's view as ``script`` when the match config has ``"script_teller": true``), then ends:
  script-based Drawer evaluation. With ``"replay_dialog": true`` it sends every round's message
  as recorded (empty ones too) and peeks where the recording did.
* :class:`ScriptDrawer` (``codraw_script_drawer``): with ``"replay_dialog": true``, redraws each
  round's recorded canvas and sends the recorded reply, so that the two script agents replay a
  whole recorded dialog through the platform (``simulate codraw --content-file``).

:func:`play` runs one match between two agents in-process (pure: rules only, no database), and
:func:`summarize` formats ``simulate`` results (mean scene similarity with a 95% bootstrap
confidence interval).
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable

import numpy as np
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from agents.base import AgentSpec
from games.codraw import clipart as ca
from games.codraw import content as codraw_content
from games.codraw import language as lang
from games.codraw import rules
from games.codraw.metric import clipart_similarity
from games.codraw.scenes import Piece, parse_scene

# ----------------------------------------------------------------------------------------- constants
GAME_ID = rules.GAME_ID
TELLER, DRAWER = rules.TELLER, rules.DRAWER
DATA_ENV = "GROUNDTALK_CODRAW_NN_DATA"
NN_DIALOGS = 150                  # generated dialogs per database half when no data is given
NN_TELLER_SEED = 1_000_000        # seed ranges of the generated databases (far from simulate's 0..)
NN_DRAWER_SEED = 2_000_000
TICK_MS = 1                       # clock step per action in :func:`play`
LANDMARKS = 3                     # places relative to this many nearest pieces already drawn
ORDER_COST = 0.15                 # a wrong left/right or above/below order costs this much distance
PHRASE_COST = 0.004               # ... and each extra phrase of a place this much
ATTACH_SLACK_PX = 6.0             # a worn/held thing this far from the person's anchor is not worn
CORRECTION_THRESHOLD = 4.75       # clipart_similarity below this after the peek: correct it
MAX_CORRECTIONS = 3
DATABASE_VERSION = 1


# ------------------------------------------------------------------------------------- view helpers
def my_turn(view: dict, role: str) -> bool:
    return view.get("role") == role and bool(view.get("your_turn")) and not view.get("over")


def _stats():
    """scipy.stats, imported on first use: importing it costs about 1.3 s of CPU, and every Django
    process imports this module (the game registry, the research pages) without testing anything."""
    from scipy import stats

    return stats


def teller_messages(view: dict) -> list[dict]:
    return [m for m in view.get("chat", []) if m.get("role") == TELLER]


def target_order(target: Iterable[Piece]) -> list[Piece]:
    """The order the Tellers describe pieces in: ascending clip-art index, as the authors' code
    sorts ``Clipart`` tuples (sky, large objects, Mike, Jenny, animals, clothing, food, toys)."""
    return sorted(target, key=lambda p: p.idx)


def _pieces(dicts: Iterable[dict]) -> list[Piece]:
    return [Piece.from_dict(d) for d in dicts]


def _chat(text: str, limit: int) -> dict:
    text = text.strip()
    if len(text) > limit:
        text = text[:limit].rstrip()
    return {"type": "chat", "text": text}


# --------------------------------------------------------------------------------------- the Tellers
@dataclass(frozen=True)
class Description:
    text: str
    predicted: Piece             # where a language.interpret Drawer will put the piece
    violations: int              # left/right + above/below orders it gets wrong
    place: str = ""              # the words of the place ("on the left", "on Mike's head")


class RuleTeller:
    """Describes one piece per message (see the module docstring)."""

    def __init__(self, peek: bool = True, max_corrections: int = MAX_CORRECTIONS, relative: bool = True):
        self.peek = bool(peek)
        self.max_corrections = int(max_corrections)
        self.relative = bool(relative)

    def act(self, view: dict) -> dict | None:
        if not my_turn(view, TELLER):
            return None
        peek = view.get("peek") or {}
        if peek.get("open"):
            return {"type": "close_peek"}
        limit = int(view.get("max_message_len", rules.MAX_MESSAGE_LEN))
        order = target_order(_pieces(view.get("target", [])))
        mine = teller_messages(view)
        peek_round = peek.get("round")
        before = [m["text"] for m in mine if peek_round is None or m["round"] < peek_round]
        after = [m["text"] for m in mine if peek_round is not None and m["round"] >= peek_round]
        if peek_round is None and len(before) < len(order):
            return _chat(self.describe(order, before)[0].text, limit)
        if peek_round is None and self.peek and peek.get("available") and order:
            return {"type": "peek"}
        if peek_round is not None:
            fixes = self.corrections(order, before, _pieces(peek.get("canvas") or []))
            if len(after) < len(fixes):
                return _chat(fixes[len(after)], limit)
        return {"type": "end"}

    # -- describing
    def describe(self, order: list[Piece], said: list[str]) -> tuple[Description, dict[int, Piece]]:
        """The description of the next piece, given what was said (and so drawn) so far."""
        drawn = lang.interpret_dialog(said)
        described = order[:len(said)]
        return describe_piece(order[len(said)], described, drawn, relative=self.relative), drawn

    def corrections(self, order: list[Piece], said: list[str], seen: list[Piece]) -> list[str]:
        """Messages fixing what the peek showed (worst first), never a piece's description said
        again: a piece the Drawer missed is asked for (``you missed the big oak tree on the
        left, facing right``), a piece drawn unlike the description meant gets only what is
        wrong with it (``the dog should be left of the oak tree, small, facing left``); then
        removals of pieces the scene does not have."""
        meant = lang.interpret_dialog(said)
        seen_by_idx = {p.idx: p for p in seen}
        wanted = {p.idx for p in order}
        fixes: list[tuple[float, str]] = []
        for k, piece in enumerate(order):
            goal = meant.get(piece.idx)
            if goal is None:
                continue
            drawn = seen_by_idx.get(piece.idx)
            similarity = 0.0 if drawn is None else clipart_similarity(drawn, goal)
            if similarity >= CORRECTION_THRESHOLD:
                continue
            place = describe_piece(piece, order[:k], lang.interpret_dialog(said[:k]),
                                   relative=self.relative).place
            if drawn is None:
                text = said[k] if k < len(said) else lang.describe(piece, place)
                fixes.append((similarity, lang.missed(text)))
            else:
                fixes.append((similarity, lang.describe_fix(goal, drawn, place)))
        fixes.sort(key=lambda item: item[0])
        extra = [lang.describe_removal(p.idx) for p in seen if p.idx not in wanted]
        texts = [text for _, text in fixes] + extra
        return texts[:self.max_corrections]


def describe_piece(piece: Piece, described: list[Piece], drawn: dict[int, Piece], *,
                   relative: bool = True) -> Description:
    """The best description of ``piece`` in words for a Drawer whose canvas is ``drawn`` (the
    pieces ``described`` so far, as it drew them). Every place :func:`language.place_phrases`
    offers (canvas regions, and places beside, above, under, in front of or behind the
    :data:`LANDMARKS` nearest pieces already drawn), and a worn/held description when the target
    has the piece on a person, is read back with :func:`language.interpret`; the one kept has the
    lowest cost: :data:`ORDER_COST` per left/right or above/below order it gets wrong against
    the described pieces' true places, plus the distance to the true place as the metric counts
    it (a fraction of the canvas), plus a little per extra phrase."""
    pairs = [(p, drawn[p.idx]) for p in described if p.idx in drawn and p.idx != piece.idx]
    near = sorted(pairs, key=lambda pair: math.dist(_xy(pair[0]), _xy(piece)))[:LANDMARKS if relative else 0]
    options = [(lang.describe(piece, place.words), place)
               for place in lang.place_phrases(piece, [d for _, d in near])]
    part = lang.attached_part(piece.idx)
    for person_idx in (ca.MIKE, ca.JENNY) if part else ():
        truth = next((p for p, _ in pairs if p.idx == person_idx), None)
        if truth is None:
            continue
        if math.dist(lang.relate_point(part, piece, truth), (piece.x, piece.y)) > ATTACH_SLACK_PX:
            continue                              # not actually worn / held by this person
        options.append((lang.describe_attached(piece, truth, part),
                        lang.Place(lang.attached_place(truth, part), -1)))
    best = None
    for text, place in options:
        if len(text) > rules.MAX_MESSAGE_LEN:
            continue
        after, _, changes = lang.interpret(text, drawn)
        got = after.get(piece.idx)
        if got is None or [c.idx for c in changes] != [piece.idx] or \
                (got.depth, got.flip, got.subtype) != (piece.depth, piece.flip, piece.subtype):
            continue
        if place.relation is not None and not lang.relation_holds(place.relation, got, drawn[place.landmark]):
            continue                              # "left of the tree" must be left of it
        wrong = sum(int((piece.x - t.x) * (got.x - d.x) <= 0) + int((piece.y - t.y) * (got.y - d.y) <= 0)
                    for t, d in pairs)
        error = min(1.0, math.hypot((got.x - piece.x) / ca.CANVAS_W, (got.y - piece.y) / ca.CANVAS_H))
        cost = (wrong * ORDER_COST + error + place.extra * PHRASE_COST, len(text))
        if best is None or cost < best[0]:
            best = (cost, Description(text, got, wrong, place.words))
    if best is None:                              # cannot happen with the whole vocabulary
        raise ValueError(f"no description of {piece} reads back as it")
    return best[1]


def _xy(piece: Piece) -> tuple[int, int]:
    return piece.x, piece.y


class ScriptTeller:
    """Replays the recorded Teller messages (``view["script"]``), one per turn, then ends."""

    def act(self, view: dict) -> dict | None:
        if not my_turn(view, TELLER):
            return None
        peek = view.get("peek") or {}
        if "replay" in view:                   # config replay_dialog: every round as recorded
            if peek.get("open"):
                return {"type": "close_peek"}
            sent = len(teller_messages(view))
            if sent >= len(view["replay"]):
                return {"type": "end"}
            recorded = view["replay"][sent]
            if recorded["peeked"] and peek.get("available"):
                return {"type": "peek"}
            return {"type": "chat", "text": recorded["msg_t"]}
        if "script" not in view:
            raise ValueError("codraw_script_teller needs a script: create the match with config "
                             "{\"script_teller\": true} and content that carries a recorded dialog "
                             "(e.g. scenes imported from CoDraw_1_0.json).")
        if peek.get("open"):
            return {"type": "close_peek"}
        limit = int(view.get("max_message_len", rules.MAX_MESSAGE_LEN))
        script = script_messages(view["script"], limit)
        sent = len(teller_messages(view))
        if sent < len(script):
            return {"type": "chat", "text": script[sent]}
        return {"type": "end"}


class ScriptDrawer:
    """Replays the recorded Drawer of a replayed dialog (config ``replay_dialog``): each round it
    moves its canvas, one action per call, to the recorded ``abs_d``, then sends the recorded
    reply as it is."""

    def act(self, view: dict) -> dict | None:
        if not my_turn(view, DRAWER):
            return None
        if "replay" not in view:
            raise ValueError("codraw_script_drawer replays a recorded dialog: create the match with "
                             "config {\"replay_dialog\": true} and content that carries one "
                             "(scenes imported from CoDraw_1_0.json).")
        round_ = int(view.get("round", 0))
        if round_ >= len(view["replay"]):
            return {"type": "chat", "text": "ok"}
        recorded = view["replay"][round_]
        steps = rules.canvas_actions(_pieces(view.get("canvas", [])), parse_scene(recorded["abs_d"] or ""))
        if steps:
            return steps[0]
        return {"type": "chat", "text": recorded["msg_d"]}


def script_messages(script: list[str], limit: int = rules.MAX_MESSAGE_LEN) -> list[str]:
    """The messages a script Teller sends: the non-empty recorded ``msg_t``, trimmed, cut at the
    length limit (the original interface capped messages at 140 characters too)."""
    out = []
    for text in script:
        text = (text or "").strip()
        if text:
            out.append(text[:limit].rstrip())
    return out


# --------------------------------------------------------------------------------------- the Drawers
class DialogDrawer:
    """A Drawer whose canvas is a function of the chat: :meth:`read` turns one Teller message
    into canvas changes; :meth:`act` replays every Teller message of the chat from an empty
    canvas, then returns the first canvas action that brings the real canvas there, or, once
    it is there, its reply (which ends the turn). Nothing is remembered between calls."""

    def read(self, message: str, canvas: dict[int, Piece], palette: list[int], focus):
        raise NotImplementedError

    def messages(self, view: dict) -> list[str]:
        """The Teller messages the canvas follows (all of them, oldest first)."""
        return [m["text"] for m in teller_messages(view)]

    def goal(self, view: dict) -> tuple[dict[int, Piece], dict[int, Piece], list]:
        """(canvas before the last message, canvas after it, the last message's changes)."""
        palette = [p["idx"] for p in view.get("palette", [])]
        canvas: dict[int, Piece] = {}
        before: dict[int, Piece] = {}
        changes: list = []
        focus = None
        for message in self.messages(view):
            before = canvas
            canvas, focus, changes = self.read(message, canvas, palette, focus)
        return before, canvas, changes

    def act(self, view: dict) -> dict | None:
        if not my_turn(view, DRAWER):
            return None
        before, goal, changes = self.goal(view)
        current = _pieces(view.get("canvas", []))
        steps = rules.canvas_actions(current, list(goal.values()))
        if steps:
            return steps[0]
        return _chat(self.reply(changes, goal), int(view.get("max_message_len", rules.MAX_MESSAGE_LEN)))

    def reply(self, changes: list, canvas: dict[int, Piece]) -> str:
        return lang.summary(changes, canvas) or "Sorry, I could not tell which piece you mean."


class RuleDrawer(DialogDrawer):
    """Reads messages with :func:`language.interpret` (see the module docstring)."""

    def read(self, message, canvas, palette, focus):
        return lang.interpret(message, canvas, palette, focus)


# ---------------------------------------------------------------------- nearest-neighbour database
@dataclass(frozen=True)
class Entry:
    """One (Teller utterance, single clip art added) tuple."""

    msg: str
    piece: Piece
    key: str = ""


class Database:
    """The nearest-neighbour agents' tuples, with the lookups both agents need."""

    def __init__(self, entries: Iterable[Entry], source: str = ""):
        self.entries: tuple[Entry, ...] = tuple(entries)
        self.source = source
        # as the authors' dicts: the last tuple of a repeated utterance wins
        by_msg: dict[str, Entry] = {}
        for entry in self.entries:
            by_msg.pop(entry.msg, None)
            by_msg[entry.msg] = entry
        self.unique: tuple[Entry, ...] = tuple(by_msg.values())
        by_idx: dict[int, list[Entry]] = {}
        for entry in self.unique:
            by_idx.setdefault(entry.piece.idx, []).append(entry)
        self.by_idx = {idx: tuple(items) for idx, items in by_idx.items()}

    def __len__(self) -> int:
        return len(self.entries)

    @lru_cache(maxsize=256)
    def _choices(self, palette: frozenset[int]) -> tuple[tuple[str, ...], tuple[Entry, ...]]:
        entries = tuple(e for e in self.unique if e.piece.idx in palette)
        return tuple(e.msg for e in entries), entries

    def nearest_to_message(self, message: str, palette: Iterable[int]) -> Entry | None:
        """The tuple whose utterance is nearest to ``message`` by character edit distance, among
        those whose clip art is in ``palette`` (first one on ties)."""
        choices, entries = self._choices(frozenset(palette))
        if not choices:
            return None
        found = process.extractOne(message, choices, scorer=Levenshtein.distance, processor=None)
        return entries[found[2]]

    def nearest_to_piece(self, piece: Piece, limit: int = rules.MAX_MESSAGE_LEN) -> Entry | None:
        """The tuple whose clip art is most similar to ``piece`` (None if no tuple has its idx)."""
        best, best_score = None, -1.0
        for entry in self.by_idx.get(piece.idx, ()):
            if len(entry.msg) > limit:
                continue
            score = clipart_similarity(entry.piece, piece)
            if score > best_score:
                best, best_score = entry, score
        return best

    def to_json(self) -> dict:
        return {"format": "groundtalk_codraw_nn", "version": DATABASE_VERSION, "source": self.source,
                "entries": [{"msg": e.msg, "piece": e.piece.to_dict(), "key": e.key} for e in self.entries]}


def extract_entries(data: dict[str, dict]) -> list[Entry]:
    """The (utterance, clip art) tuples of CoDraw dialogs (``{key: {"dialog": [...]}}``, the
    ``data`` of CoDraw_1_0.json): rounds with a non-empty Teller message in which the Drawer added
    exactly one piece and changed nothing else (as ``codraw_data.get_place_one``)."""
    entries = []
    for key in sorted(data):
        for round_ in data[key].get("dialog", []):
            msg = (round_.get("msg_t") or "").strip()
            if not msg:
                continue
            before = set(parse_scene(round_.get("abs_b") or "").placed)
            after = set(parse_scene(round_.get("abs_d") or "").placed)
            added = after - before
            if before <= after and len(added) == 1:
                piece = next(iter(added))
                entries.append(Entry(msg, Piece(idx=piece.idx, x=piece.x, y=piece.y, depth=piece.depth,
                                                flip=piece.flip, subtype=piece.subtype), key))
    return entries


def split_keys(keys: Iterable[str], split: str) -> list[str]:
    """Dialog keys for a database: ``teller`` the first half of the ``train_*`` keys, ``drawer``
    the second half (crosstalk), ``train`` all of them, ``all`` every key."""
    keys = sorted(keys)
    if split == "all":
        return keys
    train = [k for k in keys if k.startswith("train")] or keys
    if split == "train":
        return train
    half = (len(train) + 1) // 2
    if split == "teller":
        return train[:half]
    if split == "drawer":
        return train[half:]
    raise ValueError(f"unknown split {split!r}; use teller, drawer, train or all")


def load_database(path: str | Path, split: str) -> Database:
    """A database from a file: one written by :func:`save_database`, or a CoDraw_1_0.json whose
    dialogs of ``split`` are turned into tuples."""
    with open(path, encoding="utf-8") as handle:
        document = json.load(handle)
    if isinstance(document, dict) and document.get("format") == "groundtalk_codraw_nn":
        entries = [Entry(e["msg"], Piece.from_dict(e["piece"]), e.get("key", "")) for e in document["entries"]]
        return Database(entries, source=f"{path}")
    if isinstance(document, dict) and isinstance(document.get("data"), dict):
        data = document["data"]
        chosen = {key: data[key] for key in split_keys(data, split)}
        return Database(extract_entries(chosen), source=f"{path} ({split})")
    raise ValueError(f"{path}: neither a CoDraw_1_0.json nor a nearest-neighbour database")


def save_database(database: Database, path: str | Path) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(database.to_json(), handle, ensure_ascii=False)


def generated_dialogs(seeds: Iterable[int], teller=None, drawer=None) -> dict[str, dict]:
    """CoDraw dialogs (``{key: {"image_id", "abs_t", "dialog"}}``) between two agents (default:
    the rule-based pair, without the peek) on generated scenes."""
    teller = teller or RuleTeller(peek=False)
    drawer = drawer or RuleDrawer()
    data = {}
    for seed in seeds:
        state = play(codraw_content.generate(seed), {TELLER: teller, DRAWER: drawer}, seed=seed)
        rounds = [{key: r[key] for key in ("seq_t", "seq_d", "msg_t", "msg_d", "abs_b", "abs_d")}
                  for r in state["rounds"]]
        data[f"generated_{seed:08d}"] = {"image_id": seed, "abs_t": state["abs_t"], "dialog": rounds}
    return data


@lru_cache(maxsize=8)
def default_database(split: str, dialogs: int = NN_DIALOGS) -> Database:
    """The database built from rule-based dialogs on generated scenes (Teller and Drawer halves
    on disjoint seed ranges)."""
    first = {"teller": NN_TELLER_SEED, "drawer": NN_DRAWER_SEED}[split]
    # places in canvas words only: a stored utterance is said again out of its scene, where
    # "right of the oak tree" would mean nothing
    data = generated_dialogs(range(first, first + dialogs), teller=RuleTeller(peek=False, relative=False))
    return Database(extract_entries(data), source=f"generated:{split}:{first}+{dialogs}")


@lru_cache(maxsize=8)
def _file_database(path: str, split: str) -> Database:
    return load_database(path, split)


def database_for(split: str, data_path: str | None = None, dialogs: int = NN_DIALOGS) -> Database:
    path = data_path or os.environ.get(DATA_ENV) or None
    if path:
        return _file_database(str(path), split)
    return default_database(split, dialogs)


class NearestNeighbourDrawer(DialogDrawer):
    """The paper's rule-based nearest-neighbour Drawer (see the module docstring)."""

    def __init__(self, data_path: str | None = None, split: str = "drawer", dialogs: int = NN_DIALOGS,
                 database: Database | None = None):
        self.database = database or database_for(split, data_path, dialogs)

    def read(self, message, canvas, palette, focus):
        entry = self.database.nearest_to_message(message, palette)
        if entry is None:
            return canvas, focus, []
        piece = entry.piece
        x, y = lang.clamp(piece.idx, piece.depth, piece.x, piece.y, subtype=piece.subtype, cut_off=True)
        piece = piece.moved(x=x, y=y)
        old = canvas.get(piece.idx)
        if old == piece:
            return canvas, piece.idx, []
        canvas = {**canvas, piece.idx: piece}
        return canvas, piece.idx, [lang.Change("place" if old is None else "update", piece.idx)]

    def reply(self, changes, canvas) -> str:
        return "ok"


class NearestNeighbourTeller:
    """The paper's rule-based nearest-neighbour Teller (see the module docstring)."""

    def __init__(self, data_path: str | None = None, split: str = "teller", dialogs: int = NN_DIALOGS,
                 database: Database | None = None):
        self.database = database or database_for(split, data_path, dialogs)

    def plan(self, view: dict) -> list[str]:
        limit = int(view.get("max_message_len", rules.MAX_MESSAGE_LEN))
        messages = []
        for piece in target_order(_pieces(view.get("target", []))):
            entry = self.database.nearest_to_piece(piece, limit)
            if entry is not None:
                messages.append(entry.msg)
        return messages

    def act(self, view: dict) -> dict | None:
        if not my_turn(view, TELLER):
            return None
        if (view.get("peek") or {}).get("open"):
            return {"type": "close_peek"}
        plan = self.plan(view)
        sent = len(teller_messages(view))
        if sent < len(plan):
            return _chat(plan[sent], int(view.get("max_message_len", rules.MAX_MESSAGE_LEN)))
        return {"type": "end"}


# ---------------------------------------------------------------------------------- playing, scores
def play(content: dict, agents: dict, *, seed: int = 0, config: dict | None = None,
         start_ms: int = 0, max_steps: int = 5000) -> dict:
    """Play one match in-process with ``agents`` (``{"teller": agent, "drawer": agent}``),
    applying each action with the rules exactly as the platform would; returns the final state."""
    state = rules.initial_state(content, seed, config or {})
    clock = start_ms
    for _ in range(max_steps):
        waiting = rules.to_act(state)
        if not waiting:
            return state
        role = waiting[0]
        action = agents[role].act(rules.view_for(state, role))
        if action is None:
            raise RuntimeError(f"the {role} agent did not act in its turn (round {state['round']})")
        clock += TICK_MS
        state, _ = rules.apply(state, role, {**action, "at": clock})
    raise RuntimeError(f"the match did not end within {max_steps} actions")


def score_interval(scores: list[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """(mean, low, high): the mean with a bootstrap confidence interval (BCa, 9999 resamples,
    fixed seed); degenerate (low = high = mean) for fewer than two distinct scores."""
    values = np.asarray(scores, dtype=float)
    if values.size == 0:
        return float("nan"), float("nan"), float("nan")
    mean = float(values.mean())
    if values.size < 2 or np.all(values == values[0]):
        return mean, mean, mean
    result = _stats().bootstrap((values,), np.mean, confidence_level=confidence, n_resamples=9999,
                             random_state=np.random.default_rng(0))
    low, high = result.confidence_interval
    if not (math.isfinite(low) and math.isfinite(high)):       # BCa can fail on tiny samples
        result = _stats().bootstrap((values,), np.mean, confidence_level=confidence, n_resamples=9999,
                                 method="percentile", random_state=np.random.default_rng(0))
        low, high = result.confidence_interval
    return mean, float(low), float(high)


def summarize(outcomes: list[dict]) -> str:
    """Mean scene similarity with a 95% bootstrap confidence interval over finished matches."""
    finished = [o for o in outcomes if o.get("score") is not None]
    lines = [f"{GAME_ID}: {len(outcomes)} matches"]
    if not finished:
        return "\n".join(lines + ["  no scores"])
    scores = [float(o["score"]) for o in finished]
    mean, low, high = score_interval(scores)
    lines.append(f"  scene similarity: mean {mean:.3f}  95% CI [{low:.3f}, {high:.3f}]  "
                 f"(bootstrap, n={len(scores)})")
    lines.append(f"  median {float(np.median(scores)):.3f}  min {min(scores):.3f}  max {max(scores):.3f}")
    rounds = [int(o.get("rounds", 0)) for o in finished]
    peeked = sum(1 for o in finished if o.get("peeked"))
    lines.append(f"  rounds: mean {float(np.mean(rounds)):.2f}  peeked: {peeked}/{len(finished)}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------- registry
AGENTS: list[AgentSpec] = [
    AgentSpec("codraw_rule_teller", GAME_ID, TELLER, RuleTeller,
              "Describes one clip art per message (sky, large objects, people, small things) with "
              "size, facing, pose, expression and place in words (left/right, near the bottom, "
              "right of the tree, on Jenny's head); peeks once at the end to correct mistakes, "
              "then ends."),
    AgentSpec("codraw_rule_drawer", GAME_ID, DRAWER, RuleDrawer,
              "Parses Teller messages over the closed CoDraw vocabulary (names, sizes, places, "
              "relations, facing, pose, expression) and draws them from its palette; replies ok."),
    AgentSpec("codraw_nn_teller", GAME_ID, TELLER, NearestNeighbourTeller,
              "Paper's nearest-neighbour Teller: for each target piece, the stored utterance whose "
              "clip art is most similar (database: GROUNDTALK_CODRAW_NN_DATA or generated dialogs)."),
    AgentSpec("codraw_nn_drawer", GAME_ID, DRAWER, NearestNeighbourDrawer,
              "Paper's nearest-neighbour Drawer: adds the clip art of the stored utterance nearest "
              "to the message by edit distance (RapidFuzz)."),
    AgentSpec("codraw_script_teller", GAME_ID, TELLER, ScriptTeller,
              "Replays the recorded Teller messages of the content's dialog (config "
              "script_teller: true), then ends: script-based Drawer evaluation. With config "
              "replay_dialog: true, every round as recorded (empty messages and peeks too)."),
    AgentSpec("codraw_script_drawer", GAME_ID, DRAWER, ScriptDrawer,
              "Replays the recorded Drawer of the content's dialog (config replay_dialog: true): "
              "each round's recorded canvas and reply; with codraw_script_teller it replays a "
              "whole CoDraw_1_0.json dialog through the platform."),
]
