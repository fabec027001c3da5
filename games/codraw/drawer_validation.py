"""The CoDraw Drawer validation set: human-style Teller messages written by hand, and its scorer.

``games/codraw/data/drawer_validation.jsonl`` holds messages written by people (this project's
authors), independently of the rule Teller's generator (games/codraw/language.py) and of the
neural training data's paraphraser: the words people use for the clip art (``chopper``, ``bbq``,
``shades``, ``kitty``), typos (``helicoptor``, ``top rigth``), several pieces in one message,
relative places (``a dog to the left of the tree``), sizes, facing, Mike's and Jenny's pose and
expression, hats and glasses worn by a person and things held, and messages that name nothing
(``ok``, ``not yet``, ``hmm let me look``), each with the scene it describes. It is an
evaluation set only: nothing trains on it (tests/games/codraw/test_drawer_validation.py checks
that the neural training data holds none of its messages). See docs/games/codraw_agents.md.

One JSON object a line::

    {"id": "v123", "text": "mike on the left wearing a crown", "tags": ["worn"],
     "pieces": [{"name": "Mike", "x": 100, "y": 265},
                {"name": "crown", "on": "Mike's head"}]}

A piece: ``name`` (a clip art's canonical name, clipart.py), ``x``/``y`` (the centre on the
500x400 canvas) or ``on`` (``"<Mike|Jenny>'s head|face|hand"``: the piece is worn or held, its
centre is where the art's anchors put it: a hat's ``wear`` on the person's ``hat``, glasses'
``wear`` on ``eyes``, a held thing's ``hold`` on ``hand_front``), and what the message states:
``size`` (big/medium/small: depth 0/1/2), ``facing`` (right/left: flip 0/1), ``pose`` and
``expression`` (clipart.POSES/EXPRESSIONS, Mike and Jenny only); ``"place": false`` when the
message gives no place for the piece (a landmark named only as a landmark). Unstated attributes
take a default (medium, facing right, arms out, smile; a worn piece the wearer's size and
facing) and are not scored on their own. ``batch``: ``a`` (the default) for the messages written
first, ``b`` and ``c`` for those written after the rule Drawer's first fixes (see
:data:`BATCHES`): figures on batch c are the ones no change to a Drawer was fitted to. An empty
``pieces`` list: the message names nothing, and the right answer is to draw nothing (abstain).

:func:`evaluate` plays any Drawer (an object with ``act(view)``, as in games/codraw/agents.py:
the rule Drawer, the nearest-neighbour Drawer, the neural Drawer of games/codraw/neural/agents.py)
on every message, alone on an empty canvas with the whole library as its palette, through the
game's rules (:func:`agents.play`), and scores what it drew. With ``phrasing="rule_teller"`` the
Teller is instead the rule Teller (no peek), describing the same scenes in its own words: the
same Drawer and scoring, on the rule Teller's phrasing. Per category (a message's tags) it reports:

* ``clipart``: the drawn clip arts are exactly the message's (no piece missing, none extra);
  ``recall``/``precision`` of pieces;
* ``position``: mean distance of a piece drawn to where it should be, as the metric counts it
  (``min(1, distance / canvas)``), over pieces whose place the message states;
* ``size``, ``facing``, ``expr_pose``: the share of stated sizes, facings, poses and expressions
  drawn as stated (of the pieces drawn);
* ``on_wearer``: the share of worn or held pieces drawn on their wearer (the piece's anchor
  within :data:`WORN_SLACK_PX` of the wearer's, both as drawn); a missing piece counts as wrong;
* ``order``: of the pairs of the message's pieces drawn (both), the share of left/right and
  above/below orders drawn as in the scene (the metric's x/y order terms; pieces at the same
  x or y are not counted for that axis);
* ``abstain``: for messages that name nothing, the share where nothing was drawn; for the others,
  ``drew``: the share where something was drawn;
* ``score``: the mean scene similarity (games/codraw/metric.py, 0..5) of the drawn canvas to
  the message's scene (messages that name something).
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from games.codraw import clipart as ca
from games.codraw import content as codraw_content
from games.codraw import rules
from games.codraw.metric import similarity
from games.codraw.scenes import Piece, Scene, format_scene

DATA_PATH = Path(__file__).with_name("data") / "drawer_validation.jsonl"
CATEGORIES = ("issue", "names", "typos", "several", "relative", "size", "facing", "expression_pose", "worn",
              "held", "nothing")
CATEGORY_TEXT = {
    "issue": "the issue's own examples",
    "names": "the words people use for the clip art",
    "typos": "typos",
    "several": "several pieces in one message",
    "relative": "places relative to another piece",
    "size": "sizes",
    "facing": "facing",
    "expression_pose": "Mike's and Jenny's pose and expression",
    "worn": "hats and glasses worn by a person",
    "held": "things a person holds",
    "nothing": "messages that name nothing (abstain)",
}
SIZES = {"big": 0, "medium": 1, "small": 2}
FACINGS = {"right": 0, "left": 1}
PARTS = {"head": ("hat", "wear"), "face": ("eyes", "wear"), "hand": ("hand_front", "hold")}
DEFAULT_POSE = ca.POSES.index("arms out")
DEFAULT_EXPRESSION = ca.EXPRESSIONS.index("smile")
WORN_SLACK_PX = 15.0
PHRASINGS = ("human", "rule_teller")
BATCHES = {"a": "written first; the rule Drawer's first fixes were made looking at its failures on it",
           "b": "written after those fixes; the rule Drawer's second fixes were made looking at its failures on it",
           "c": "written after the first fixes, measured before the second; never used to change a Drawer"}
FULL_PALETTE = tuple(range(ca.N_CLIPARTS))
_PIECE_KEYS = {"name", "x", "y", "on", "size", "facing", "pose", "expression", "place"}


class ValidationSetError(ValueError):
    """A line of the validation set that cannot be read (the message names the line)."""


@dataclass(frozen=True)
class Expected:
    """One piece a message describes, with what the message states about it."""

    piece: Piece
    said: frozenset[str]                     # of "place", "size", "facing", "pose", "expression"
    on: tuple[int, str] | None = None        # (wearer idx, "head" | "face" | "hand")


@dataclass(frozen=True)
class Item:
    id: str
    text: str
    tags: tuple[str, ...]
    pieces: tuple[Expected, ...]
    batch: str = "a"

    @property
    def abstain(self) -> bool:
        """The message names nothing: the right answer is to draw nothing."""
        return not self.pieces

    @property
    def scene(self) -> Scene:
        return Scene(tuple(e.piece for e in self.pieces))

    @property
    def scene_string(self) -> str:
        return format_scene(self.scene)


# ------------------------------------------------------------------------------------------ reading
def _wearer(text: str, where: str) -> tuple[int, str]:
    person, _, part = text.partition("'s ")
    idx = {"mike": ca.MIKE, "jenny": ca.JENNY}.get(person.strip().lower())
    if idx is None or part.strip() not in PARTS:
        raise ValidationSetError(f"{where}: 'on' must read \"Mike's|Jenny's head|face|hand\", not {text!r}")
    return idx, part.strip()


def worn_point(piece_idx: int, part: str, person: Piece, depth: int, flip: int) -> tuple[int, int]:
    """The centre of a piece worn or held by ``person`` (the art's anchors)."""
    person_anchor, piece_anchor = PARTS[part]
    point = ca.anchor_point(person.idx, person.subtype, person_anchor, person.x, person.y, person.depth, person.flip)
    x, y = ca.centre_for(piece_idx, 0, piece_anchor, point, depth, flip)
    return int(round(x)), int(round(y))


def _expected(raw: dict, placed: dict[int, Piece], where: str) -> Expected:
    if not isinstance(raw, dict) or "name" not in raw:
        raise ValidationSetError(f"{where}: a piece must be an object with a name")
    unknown = set(raw) - _PIECE_KEYS
    if unknown:
        raise ValidationSetError(f"{where}: unknown keys {sorted(unknown)} (use {sorted(_PIECE_KEYS)})")
    name = raw["name"]
    idx = next((art.idx for art in ca.CLIPARTS if art.name == name), None)
    if idx is None:
        raise ValidationSetError(f"{where}: {name!r} is not a clip art's canonical name (clipart.NAMES)")
    said = set()
    for key, table in (("size", SIZES), ("facing", FACINGS)):
        if key in raw:
            if raw[key] not in table:
                raise ValidationSetError(f"{where}: {key} must be one of {sorted(table)}, not {raw[key]!r}")
            said.add(key)
    human = idx in ca.HUMAN_IDXS
    for key, names in (("pose", ca.POSES), ("expression", ca.EXPRESSIONS)):
        if key in raw:
            if not human or raw[key] not in names:
                raise ValidationSetError(f"{where}: {key} {raw[key]!r}: only Mike and Jenny have one, "
                                         f"from {list(names)}")
            said.add(key)
    subtype = ca.subtype_of(ca.POSES.index(raw["pose"]) if "pose" in raw else DEFAULT_POSE,
                            ca.EXPRESSIONS.index(raw["expression"]) if "expression" in raw else DEFAULT_EXPRESSION
                            ) if human else 0
    on = None
    if "on" in raw:
        if "x" in raw or "y" in raw:
            raise ValidationSetError(f"{where}: a worn or held piece takes 'on', not x/y")
        on = _wearer(raw["on"], where)
        person = placed.get(on[0])
        if person is None:
            raise ValidationSetError(f"{where}: {raw['on']!r}: list the wearer before what it wears")
        depth = SIZES[raw["size"]] if "size" in raw else person.depth
        flip = FACINGS[raw["facing"]] if "facing" in raw else person.flip
        x, y = worn_point(idx, on[1], person, depth, flip)
        said.add("place")
    else:
        if not all(isinstance(raw.get(k), int) and not isinstance(raw.get(k), bool) for k in ("x", "y")):
            raise ValidationSetError(f"{where}: x and y must be integers (or give 'on')")
        x, y = raw["x"], raw["y"]
        if not (0 <= x <= ca.CANVAS_W and 0 <= y <= ca.CANVAS_H):
            raise ValidationSetError(f"{where}: ({x}, {y}) is off the {ca.CANVAS_W}x{ca.CANVAS_H} canvas")
        depth = SIZES.get(raw.get("size"), SIZES["medium"])
        flip = FACINGS.get(raw.get("facing"), 0)
        if raw.get("place", True) not in (True, False):
            raise ValidationSetError(f"{where}: place must be true or false")
        if raw.get("place", True):
            said.add("place")
    return Expected(Piece(idx=idx, x=x, y=y, depth=depth, flip=flip, subtype=subtype), frozenset(said), on)


def parse_line(line: str, where: str = "") -> Item:
    """One item from a JSON line (raises :class:`ValidationSetError` naming ``where``)."""
    try:
        raw = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValidationSetError(f"{where}: not JSON: {exc}") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("text"), str) or not raw["text"].strip():
        raise ValidationSetError(f"{where}: an item needs a non-empty text")
    if not isinstance(raw.get("id"), str) or not raw["id"]:
        raise ValidationSetError(f"{where}: an item needs an id")
    tags = raw.get("tags")
    if not isinstance(tags, list) or not tags or any(t not in CATEGORIES for t in tags):
        raise ValidationSetError(f"{where}: tags must be a non-empty list from {list(CATEGORIES)}, not {tags!r}")
    pieces_raw = raw.get("pieces")
    if not isinstance(pieces_raw, list):
        raise ValidationSetError(f"{where}: pieces must be a list (empty: the message names nothing)")
    if ("nothing" in tags) != (not pieces_raw):
        raise ValidationSetError(f"{where}: a message tagged 'nothing' has no pieces, and only such a one")
    placed: dict[int, Piece] = {}
    expected = []
    for k, piece in enumerate(pieces_raw):
        item = _expected(piece, placed, f"{where} piece {k + 1}")
        if item.piece.idx in placed:
            raise ValidationSetError(f"{where}: {item.piece.name} is listed twice")
        placed[item.piece.idx] = item.piece
        expected.append(item)
    batch = raw.get("batch", "a")
    if batch not in BATCHES:
        raise ValidationSetError(f"{where}: batch must be one of {list(BATCHES)}, not {batch!r}")
    return Item(raw["id"], raw["text"], tuple(tags), tuple(expected), batch)


def load(path: str | Path = DATA_PATH) -> list[Item]:
    """The validation set (every line checked; ids and texts unique)."""
    items: list[Item] = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                items.append(parse_line(line, f"{path}:{number}"))
    for attr in ("id", "text"):
        values = [getattr(item, attr) for item in items]
        repeated = sorted({v for v in values if values.count(v) > 1})
        if repeated:
            raise ValidationSetError(f"{path}: repeated {attr}s {repeated}")
    return items


def messages(path: str | Path = DATA_PATH) -> list[str]:
    """Every message of the set (for checks that nothing trains on them)."""
    return [item.text for item in load(path)]


def counts(items: Iterable[Item]) -> dict[str, int]:
    """Messages per category."""
    items = list(items)
    return {tag: sum(tag in item.tags for item in items) for tag in CATEGORIES}


# ------------------------------------------------------------------------------------------ playing
class OneMessageTeller:
    """Sends one message, then ends the game."""

    def __init__(self, text: str):
        self.text = text

    def act(self, view: dict) -> dict | None:
        if not (view.get("role") == rules.TELLER and view.get("your_turn") and not view.get("over")):
            return None
        said = any(m.get("role") == rules.TELLER for m in view.get("chat", []))
        return {"type": "end"} if said else {"type": "chat", "text": self.text}


def content_for(item: Item, palette: Iterable[int] = FULL_PALETTE) -> dict:
    """A match content item whose target is the message's scene."""
    return codraw_content.generate(0, {"scenes": [{"abs_t": item.scene_string, "palette": list(palette)}]})


def draw(drawer, item: Item, *, phrasing: str = "human", palette: Iterable[int] = FULL_PALETTE) -> list[Piece]:
    """What ``drawer`` draws for the item, through the game's rules: for the message itself
    (``human``), or for the rule Teller's own description of the item's scene (``rule_teller``)."""
    from games.codraw import agents       # the rule agents import this package's language module

    if phrasing == "human":
        teller = OneMessageTeller(item.text)
    elif phrasing == "rule_teller":
        teller = agents.RuleTeller(peek=False)
    else:
        raise ValueError(f"phrasing must be one of {PHRASINGS}, not {phrasing!r}")
    state = agents.play(content_for(item, palette), {rules.TELLER: teller, rules.DRAWER: drawer})
    return [Piece.from_dict(p) for p in state["canvas"].values()]


# ------------------------------------------------------------------------------------------ scoring
@dataclass
class Tally:
    """Sums for one category."""

    items: int = 0
    clipart_right: int = 0
    expected_pieces: int = 0
    drawn_pieces: int = 0
    matched_pieces: int = 0
    position: list[float] = field(default_factory=list)
    size: list[int] = field(default_factory=list)
    facing: list[int] = field(default_factory=list)
    expr_pose: list[int] = field(default_factory=list)
    on_wearer: list[int] = field(default_factory=list)
    order: list[int] = field(default_factory=list)
    abstain: list[int] = field(default_factory=list)
    drew: list[int] = field(default_factory=list)
    score: list[float] = field(default_factory=list)

    def add(self, other: "Tally") -> None:
        for name, value in vars(other).items():
            setattr(self, name, getattr(self, name) + value)

    def summary(self) -> dict:
        def mean(values):
            return None if not values else sum(values) / len(values)

        named = self.items - len(self.abstain)
        return {
            "items": self.items,
            "clipart": None if not named else self.clipart_right / named,
            "recall": None if not self.expected_pieces else self.matched_pieces / self.expected_pieces,
            "precision": None if not self.drawn_pieces or not named else self.matched_pieces / self.drawn_pieces,
            "position": mean(self.position),
            "size": mean(self.size),
            "facing": mean(self.facing),
            "expr_pose": mean(self.expr_pose),
            "on_wearer": mean(self.on_wearer),
            "order": mean(self.order),
            "abstain": mean(self.abstain),
            "drew": mean(self.drew),
            "score": mean(self.score),
        }


def _worn_ok(expected: Expected, drawn: dict[int, Piece]) -> int:
    piece, person = drawn.get(expected.piece.idx), drawn.get(expected.on[0])
    if piece is None or person is None:
        return 0
    person_anchor, piece_anchor = PARTS[expected.on[1]]
    want = ca.anchor_point(person.idx, person.subtype, person_anchor, person.x, person.y, person.depth, person.flip)
    got = ca.anchor_point(piece.idx, 0, piece_anchor, piece.x, piece.y, piece.depth, piece.flip) \
        or (piece.x, piece.y)
    return int(math.dist(want, got) <= WORN_SLACK_PX)


def score_item(item: Item, drawn_pieces: list[Piece]) -> Tally:
    """The tally of one item given what was drawn."""
    drawn: dict[int, Piece] = {}
    for piece in drawn_pieces:
        drawn.setdefault(piece.idx, piece)
    tally = Tally(items=1, drawn_pieces=len(drawn))
    if item.abstain:
        tally.abstain.append(int(not drawn))
        tally.drawn_pieces = 0
        return tally
    tally.drew.append(int(bool(drawn)))
    wanted = {e.piece.idx for e in item.pieces}
    tally.clipart_right = int(set(drawn) == wanted)
    tally.expected_pieces = len(wanted)
    tally.matched_pieces = len(wanted & set(drawn))
    for e in item.pieces:
        got = drawn.get(e.piece.idx)
        if e.on is not None:
            tally.on_wearer.append(_worn_ok(e, drawn))
        if got is None:
            continue
        want = e.piece
        if "place" in e.said:
            tally.position.append(min(1.0, math.hypot((got.x - want.x) / ca.CANVAS_W, (got.y - want.y) / ca.CANVAS_H)))
        if "size" in e.said:
            tally.size.append(int(got.depth == want.depth))
        if "facing" in e.said:
            tally.facing.append(int(got.flip == want.flip))
        if "pose" in e.said:
            tally.expr_pose.append(int(got.pose == want.pose))
        if "expression" in e.said:
            tally.expr_pose.append(int(got.expression == want.expression))
    placed = [e.piece for e in item.pieces if e.piece.idx in drawn]
    for a in range(len(placed)):
        for b in range(a + 1, len(placed)):
            ta, tb = placed[a], placed[b]
            pa, pb = drawn[ta.idx], drawn[tb.idx]
            if ta.x != tb.x:
                tally.order.append(int((ta.x - tb.x) * (pa.x - pb.x) > 0))
            if ta.y != tb.y:
                tally.order.append(int((ta.y - tb.y) * (pa.y - pb.y) > 0))
    tally.score.append(similarity(list(drawn.values()), item.scene).score)
    return tally


@dataclass
class Report:
    drawer: str
    phrasing: str
    per_item: list[dict]
    categories: dict[str, dict]

    def to_dict(self) -> dict:
        return {"drawer": self.drawer, "phrasing": self.phrasing, "categories": self.categories,
                "items": self.per_item}

    @classmethod
    def from_dict(cls, data: dict) -> "Report":
        return cls(data["drawer"], data["phrasing"], data["items"], data["categories"])


def evaluate(drawer, items: list[Item] | None = None, *, name: str = "", phrasing: str = "human",
             progress: Callable[[int, int], None] | None = None) -> Report:
    """Play ``drawer`` on every item and tally per category (``all`` is every item). With the
    ``rule_teller`` phrasing, messages that name nothing are left out (the Teller says nothing)."""
    items = load() if items is None else items
    if phrasing == "rule_teller":
        items = [item for item in items if not item.abstain]
    tallies = {tag: Tally() for tag in ("all", *(f"batch {b}" for b in BATCHES), *CATEGORIES)}
    per_item = []
    for k, item in enumerate(items):
        drawn = draw(drawer, item, phrasing=phrasing)
        tally = score_item(item, drawn)
        for tag in ("all", f"batch {item.batch}", *item.tags):
            tallies[tag].add(tally)
        per_item.append({"id": item.id, "text": item.text, "tags": list(item.tags),
                         "drawn": [p.to_dict() for p in drawn],
                         "score": tally.score[0] if tally.score else None,
                         "clipart_right": bool(tally.clipart_right) if not item.abstain else None,
                         "abstained": bool(tally.abstain[0]) if item.abstain else None})
        if progress:
            progress(k + 1, len(items))
    categories = {tag: t.summary() for tag, t in tallies.items() if t.items}
    return Report(name or type(drawer).__name__, phrasing, per_item, categories)


# ------------------------------------------------------------------------------------------ output
ROWS = ("all", *(f"batch {b}" for b in BATCHES), *CATEGORIES)
COLUMNS = (("items", "n", "{:d}"), ("clipart", "clip art right", "{:.0%}"), ("recall", "recall", "{:.0%}"),
           ("precision", "precision", "{:.0%}"), ("position", "position error", "{:.3f}"),
           ("size", "size", "{:.0%}"), ("facing", "facing", "{:.0%}"), ("expr_pose", "expr./pose", "{:.0%}"),
           ("on_wearer", "on wearer", "{:.0%}"), ("order", "order", "{:.0%}"),
           ("abstain", "abstain", "{:.0%}"), ("drew", "drew", "{:.0%}"), ("score", "similarity", "{:.2f}"))


def _cell(value, fmt: str) -> str:
    return "–" if value is None else fmt.format(value)


def table(report: Report) -> str:
    """A Markdown table: one row per category."""
    head = "| category | " + " | ".join(label for _, label, _ in COLUMNS) + " |"
    lines = [f"**{report.drawer}**, {report.phrasing} phrasing", "", head,
             "|" + "---|" * (len(COLUMNS) + 1)]
    for tag, summary in report.categories.items():
        lines.append(f"| {tag} | " + " | ".join(_cell(summary[key], fmt) for key, _, fmt in COLUMNS) + " |")
    return "\n".join(lines)


SUMMARY_KEYS = ("items", "clipart", "recall", "precision", "position", "size", "facing", "expr_pose", "on_wearer",
                "order", "abstain", "score")


def compare(reports: list[Report], row: str = "all", keys: tuple[str, ...] = SUMMARY_KEYS) -> str:
    """One Markdown table of several reports on one row of theirs (``all``, ``batch b``, a
    category): a line per report (Drawer and phrasing), a column per figure."""
    labels = {key: label for key, label, _ in COLUMNS}
    formats = {key: fmt for key, _, fmt in COLUMNS}
    lines = ["| Drawer | phrasing | " + " | ".join(labels[k] for k in keys) + " |",
             "|" + "---|" * (2 + len(keys))]
    for report in reports:
        summary = report.categories.get(row, {})
        lines.append(f"| {report.drawer} | {report.phrasing} | "
                     + " | ".join(_cell(summary.get(k), formats[k]) for k in keys) + " |")
    return "\n".join(lines)


def by_category(reports: list[Report]) -> str:
    """One Markdown table: a line per category, a column per report, each cell ``clip art right
    / scene similarity`` (for messages that name nothing: the share abstained)."""
    head = "| category | n | " + " | ".join(f"{r.drawer}, {r.phrasing}" for r in reports) + " |"
    lines = [head, "|" + "---|" * (2 + len(reports))]
    for tag in ROWS:
        if tag not in reports[0].categories:
            continue
        cells = []
        for report in reports:
            summary = report.categories.get(tag)
            if summary is None:
                cells.append("–")
            elif tag == "nothing":
                cells.append(f"abstain {_cell(summary['abstain'], '{:.0%}')}")
            else:
                cells.append(f"{_cell(summary['clipart'], '{:.0%}')} / {_cell(summary['score'], '{:.2f}')}")
        lines.append(f"| {tag} | {reports[0].categories[tag]['items']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def report_markdown(reports: list[Report]) -> str:
    """The comparison the command prints and writes into the docs."""
    return "\n\n".join([
        "All messages (the rule Teller's phrasing: the messages that name something, described by it):",
        compare(reports, "all"),
        "Batch c only (written after the rule Drawer's first fixes and measured before its second; no Drawer "
        "was changed for it):",
        compare(reports, "batch c"),
        "Per category (clip art right / mean scene similarity; messages that name nothing: share abstained):",
        by_category(reports)])


def plot(reports: list[Report], path: str | Path,
         keys: tuple[str, ...] = ("clipart", "size", "facing", "expr_pose", "on_wearer", "abstain")) -> None:
    """Bars per category of each report's shares (``keys``), one panel per key (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    labels = {key: label for key, label, _ in COLUMNS}
    fig, axes = plt.subplots(len(keys), 1, figsize=(11, 2.4 * len(keys)), sharex=True)
    tags = [t for t in ROWS if t in reports[0].categories]
    width = 0.8 / len(reports)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, key in zip(np.atleast_1d(axes), keys):
        for k, report in enumerate(reports):
            values = [report.categories.get(t, {}).get(key) for t in tags]
            xs = np.arange(len(tags)) + k * width
            colour = colours[k % len(colours)]
            ax.bar(xs, [np.nan if v is None else v for v in values], width, color=colour,
                   label=f"{report.drawer} ({report.phrasing})")
            zero = [x for x, v in zip(xs, values) if v == 0]      # 0 is shown, "not measured" is blank
            ax.plot(zero, [0.03] * len(zero), "x", color=colour, markersize=5)
        ax.set_ylabel(labels[key])
        ax.set_ylim(0, 1.05)
    axes = np.atleast_1d(axes)
    axes[-1].set_xticks(np.arange(len(tags)) + 0.4 - width / 2, tags, rotation=30, ha="right")
    fig.suptitle("CoDraw Drawers on the hand-written validation set (games/codraw/data/drawer_validation.jsonl);"
                 "\nx: measured 0, blank: nothing to measure", fontsize=10, y=0.995)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="upper center", ncol=3, fontsize=8,
               bbox_to_anchor=(0.5, 0.955))
    fig.tight_layout(rect=(0, 0, 1, 0.915))
    fig.savefig(path, dpi=110)
    plt.close(fig)
