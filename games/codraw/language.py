"""CoDraw language for the rule-based agents: reading Teller messages and writing descriptions.

Pure Python (no Django, no I/O), deterministic. Two halves share one set of conventions, so the
rule-based Teller can predict exactly what the rule-based Drawer will do with its words:

* :func:`interpret` turns one Teller message into canvas changes (a new ``{idx: Piece}`` canvas),
  given the canvas before it and the Drawer's palette; :func:`interpret_dialog` folds it over a
  whole chat. It reads the closed CoDraw vocabulary: clip-art names and synonyms (clipart.py, plus
  the generic words ``tree``, ``cloud``, ``hat``, ``ball``, ``kid`` ... resolved against the
  palette; a bare one or ``the ...`` means the piece already drawn), pronouns (the last piece
  mentioned they can mean: ``he`` Mike or an animal, ``she`` Jenny or an animal, ``it``
  anything), spelling slips (RapidFuzz), sizes (``big/large``,
  ``medium``, ``small/little/tiny``; ``bigger``/``smaller``), places (``left/right/middle``,
  ``top/bottom``, ``far left``, ``top right corner``, ``left edge``, ``at the horizon``, ``in the
  sky``, ``on the grass``, ``cut off on the left``), distances (``1 1/2 inches from the left``,
  ``half an inch from the top``, ``centered 2.3 in from left``), relations (``next to / near /
  left of / above / under / in front of / behind the tree``, ``on Mike's head``, ``in her hand``,
  ``at his feet``, ``on the table``, ``holding``, ``wearing``, ``with``, ``kicking a ball``),
  facing (``facing left``, ``looking right``, ``hole facing right``, ``facing Jenny``, ``facing
  each other``, ``flip it``), Mike's and Jenny's pose and expression (clipart.py's words and
  synonyms), moves of pieces already drawn (``move the sun a bit left``, ``a little higher``) and
  removals (``remove the dog``, ``there is no cat``).

  People's ways of saying it (issue 25, measured on games/codraw/data/drawer_validation.jsonl):
  a worn or held thing stays on its person when the message moves the person after it; ``a boy
  in a witch hat``, ``wearing shades and a crown`` (the wearer carries over the list), ``witches
  hat``; ``both sitting``/``both big`` (the last two pieces); ``a big open mouth smile`` and
  ``smiling big`` (a wide smile, not a size); names of 2-3 words with one slip (``hot air
  baloon``), short slips (:data:`SHORT_SLIPS`); ``right next to`` (close, not on the right);
  ``right side of the picture``; a landmark the message draws takes the pair's place (``a cat
  under the apple tree on the right``); ``X, Y and Z at the bottom`` side by side.

  A message is split into clauses (at punctuation and ``and``/``then``/``but``...). Each clip-art
  mention owns the words after it up to the next mention; words before a clause's first mention
  belong to it, sizes (and, for Mike and Jenny, pose and expression words) right before a mention
  belong to that mention, and a clause with no mention describes the last piece mentioned.
  Relation targets (``the tree`` in ``next to the tree``) are looked up (drawn if they are not
  yet), not changed.

* :func:`describe` writes the rule-based Teller's description of one piece at a place in words
  (:func:`place_phrases`: regions of the canvas, or next to / left of / under ... a piece already
  drawn), e.g. ``medium Mike on the left, near the bottom, kicking, big smile, facing left``,
  ``small dog right of the oak tree, facing right`` or ``small crown on Jenny's head, facing
  right`` (at most 140 characters, no numbers or units); :func:`describe_fix` and
  :func:`missed` its corrections after the peek.

Every piece is held on the canvas (unless asked to be cut off), people stand on the grass, and
every piece named is drawn (landmarks included); see docs/games/codraw_agents.md.

Distances people give are in inches of the 500x400 canvas at CSS resolution (:data:`INCH_PX` =
96 px, the size a browser draws the original interface's canvas). ``N in from the left`` measures
to the piece's near edge (as people mean it); ``centered N in from the left`` measures to its
centre. The rule-based Teller says no distances (since issue 20). Positions are rounded like the
dataset (``int(round(v))``).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import lru_cache

from rapidfuzz import fuzz, process
from rapidfuzz.distance import OSA

from games.codraw import clipart as ca
from games.codraw.scenes import Piece

# ----------------------------------------------------------------------------------------- constants
W, H = ca.CANVAS_W, ca.CANVAS_H
INCH_PX = 96.0                        # one inch of the canvas as a browser draws it (CSS px)
REACH = 100                           # rules.OFF_CANVAS_MARGIN: how far a centre may leave the canvas
DEFAULT_DEPTH = 1                     # a piece described without a size is medium
GROUND_BOTTOM = (359, 296, 233)       # default y of a ground piece's bottom per depth (the
                                      # generator's bands: 320-398, 262-330, 204-262)
GROUND_MIN_BOTTOM = (250, 224, 204)   # feet of people and animals never higher than this (per
                                      # depth: on the grass, 12 px below its line at the least)
EDGE_GAP = 2                          # "at the edge": this many px from it
SIDE_X = 100                          # "on the left": centre this far from the edge (at least)
CENTRE_SIDE_X = 175                   # "left of centre", "slightly left"
NEAR_CENTRE_X = 212                   # "just left of centre", "a bit left of the middle"
FIX_DISTANCE_PX = 20                  # the rule Teller's corrections say the place when this far off
MOVE_PX = {"small": 15, "normal": 30, "large": 80}
SPREAD_PX = 60                        # "a burger, a hot dog and ketchup at the bottom": this far apart
NUDGE_PX = 30                         # "under the tree, a bit to the left": 30 px left of under it
FUZZY_CUTOFF = 86                     # rapidfuzz ratio for a misspelt clip-art name (>= 5 letters)

SIZE_NAMES = ("big", "medium", "small")        # what the Teller says for depth 0, 1, 2
POSE_PHRASES = ("arms out", "arms up", "kicking", "running", "cross-legged", "sitting", "waving")
EXPRESSION_PHRASES = ("angry", "big smile", "smiling", "sad", "scared")

SIZE_WORDS = {
    "big": 0, "large": 0, "huge": 0, "giant": 0, "biggest": 0, "largest": 0, "full size": 0,
    "full sized": 0, "largest size": 0,
    "medium": 1, "med": 1, "mid size": 1, "mid sized": 1, "midsize": 1, "medium sized": 1,
    "medium size": 1, "average": 1, "normal": 1, "regular": 1, "middle size": 1, "middle sized": 1,
    "small": 2, "little": 2, "tiny": 2, "smallest": 2, "smaller size": 2, "small sized": 2,
}
SIZE_RELATIVE = {"bigger": -1, "larger": -1, "smaller": 1, "tinier": 1}

# generic words -> every clip art they may mean (resolved against the Drawer's palette)
GENERIC = {
    "tree": (16, 17, 15), "trees": (16, 17, 15), "cloud": (2, 5, 4), "clouds": (2, 5, 4),
    "hat": (30, 26, 27, 28, 29, 31, 32, 33), "ball": (45, 43, 46, 47, 48, 49),
    "bird": (23, 24), "glasses": (34, 35), "bottle": (39, 40), "balloon": (52, 1),
    "kid": (18, 19), "child": (18, 19), "person": (18, 19), "someone": (18, 19),
    "helmet": (33,), "fire": (57,), "food": (36, 37, 38, 41, 42),
}
PRONOUNS = {"he": ca.MIKE, "him": ca.MIKE, "his": ca.MIKE, "himself": ca.MIKE,
            "she": ca.JENNY, "her": ca.JENNY, "hers": ca.JENNY, "herself": ca.JENNY}
IT_WORDS = ("it", "its", "it s")
# synonyms clipart.py lists that would shadow a size or a pronoun here
_SKIP_NAMES = {"him", "he", "her", "she", "big tree", "kid", "child"}

POSE_EXTRA = {
    "arms out": ("arms to the sides", "hands out", "arms open", "arms spread", "standing up",
                 "stands", "standing normally"),
    "arms up": ("both hands up", "arms in the air", "hands in the air", "both arms raised",
                "arms above head", "jumping"),
    "kicking": ("kicks", "leg out", "one leg raised", "kicking leg"),
    "running": ("runs", "running pose"),
    "legs crossed": ("cross legged", "cross-legged", "criss cross", "indian style", "kneeling", "crosslegged",
                     "criss crossed", "cross legs", "legs folded"),
    "sitting": ("sits", "sitting down", "legs out straight", "legs in front"),
    "waving": ("waves", "one hand up", "one arm raised", "hand raised", "raising one hand"),
}
EXPRESSION_EXTRA = {
    "angry": ("mad face", "angry face", "frown", "furious"),
    "wide smile": ("big grin", "grin", "open smile", "laughing face", "showing teeth", "with teeth"),
    "smile": ("happy face", "smiles", "smiley", "pleased", "closed smile"),
    "sad": ("sad face", "frowning sad", "depressed", "tearful"),
    "scared": ("shocked face", "surprised face", "open mouth", "afraid face", "terrified", "startled",
               "o face"),
}

# relation phrases -> kind
RELATIONS = {
    "on top of": "on", "on": "on", "onto": "on", "sitting on": "on", "in": "in", "inside": "in",
    "at": "near", "near": "near", "next to": "near", "beside": "near", "besides": "near",
    "by": "near", "close to": "near", "nearby": "near", "against": "near", "touching": "near",
    "left of": "left_of", "to the left of": "left_of", "on the left of": "left_of",
    "on the left side of": "left_of", "to the left side of": "left_of", "left side of": "left_of",
    "right of": "right_of", "to the right of": "right_of", "on the right of": "right_of",
    "on the right side of": "right_of", "to the right side of": "right_of", "right side of": "right_of",
    "above": "above", "over": "above", "on top": "above",
    "below": "below", "under": "below", "underneath": "below", "beneath": "below",
    "in front of": "front", "infront of": "front", "before": "front",
    "behind": "behind", "in back of": "behind", "back of": "behind",
}
HAS_WORDS = ("holding", "holds", "hold", "carrying", "carries", "has", "have", "with", "wearing",
             "wears", "wear", "has on", "is wearing", "got", "holding up", "eating", "drinking")
PARTS = {"head": "head", "heads": "head", "hair": "head", "face": "eyes", "eyes": "eyes",
         "eye": "eyes", "nose": "eyes", "hand": "hand", "hands": "hand", "arm": "hand",
         "arms": "hand", "fingers": "hand", "paw": "hand", "feet": "feet", "foot": "feet",
         "toes": "feet", "leg": "feet", "legs": "feet", "lap": "hand"}
BODY_WORDS = {"hand", "hands", "arm", "arms", "leg", "legs", "foot", "feet", "knee", "knees",
              "eye", "eyes", "shoulder", "shoulders", "ear", "elbow", "wing", "side of his",
              "pigtail", "shoe"}
DIRECTIONS = {
    "left": "left", "right": "right", "top": "top", "bottom": "bottom", "upper": "top",
    "lower": "bottom", "middle": "middle", "center": "middle", "centre": "middle", "mid": "middle",
    "high": "top", "low": "bottom", "up": "up", "down": "down", "higher": "up",
    "horizon": "horizon", "horizon line": "horizon", "skyline": "horizon", "sky": "sky",
    "ground": "ground", "grass": "ground", "front": "bottom", "foreground": "bottom",
    "background": "horizon", "distance": "horizon", "leftmost": "left", "rightmost": "right",
    "lefthand": "left", "righthand": "right", "left hand side": "left", "right hand side": "right",
    "left-hand side": "left", "right-hand side": "right",
}
MODIFIERS = {
    "far": "edge", "very": "edge", "all the way": "edge", "edge": "edge", "corner": "edge",
    "touching": "edge", "against the": "edge", "at the very": "edge",
    "side": "side",
    "slightly": "small", "bit": "small", "little": "small", "tad": "small", "little bit": "small",
    "a bit": "small", "a little": "small", "a tad": "small", "somewhat": "small", "just": "small",
    "lot": "large", "much": "large", "way": "large", "a lot": "large", "way more": "large",
    "more": "more", "further": "more", "farther": "more",
    "cut off": "cutoff", "cutoff": "cutoff", "partly off": "cutoff", "partially off": "cutoff",
    "half off": "cutoff", "off the": "cutoff", "hidden": "cutoff", "out of frame": "cutoff",
    "out of the frame": "cutoff",
}
FACING_WORDS = ("facing", "faces", "face", "facing to", "looking", "looks", "look", "pointing",
                "points", "turned", "turned to", "turned towards", "towards", "toward", "heading",
                "headed", "going", "flying", "oriented", "direction", "hole facing", "opening facing",
                "pointed", "faced", "looking to", "looking at", "facing towards", "facing toward")
MOVE_WORDS = ("move", "moved", "shift", "shifted", "push", "drag", "nudge", "bring", "raise",
              "lower it", "slide it", "make it go")
REMOVE_WORDS = ("remove", "delete", "erase", "get rid of", "take away", "take out", "take off",
                "there is no", "there s no", "there are no", "no need for", "don t need",
                "do not need", "not a", "isn t a", "not there", "shouldn t be", "remove the")
FLIP_WORDS = ("flip", "flipped", "mirror", "mirrored", "turn around", "turned around",
              "other way", "opposite way", "opposite direction", "reverse", "reversed")
CENTERED_WORDS = ("centered", "centred", "centre is", "center is", "its center", "its centre",
                  "centered at", "centered on", "middle is")
UNIT_WORDS = ("in", "inch", "inches", "\"", "in.", "inchs", "inche")
FROM_WORDS = ("from", "off", "away from", "in from", "from the", "away from the")
EACH_OTHER = ("each other", "one another")
SEPARATORS = {",", ".", ";", "!", "?", ":", "and", "then", "also", "plus", "but", "while", "next",
              "now", "after that", "lastly", "finally", "ok", "okay"}
DETERMINERS = {"a": "new", "an": "new", "another": "new", "one": "new", "the": "known",
               "this": "known", "that": "known", "same": "known", "second": "new"}
CANVAS_NOUNS = ("picture", "image", "canvas", "scene", "screen", "page", "drawing", "board", "frame",
                "pic", "photo", "park")
SHORT_SLIPS = {"tre": "tree", "tress": "trees", "lft": "left", "letf": "left", "rgt": "right",
               "rite": "right", "rihgt": "right", "mdl": "middle", "sml": "small", "lg": "large",
               "snak": "snake", "bera": "bear", "dgo": "dog", "cta": "cat", "sunn": "sun"}
NUMBER_WORDS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
                "seven": 7, "eight": 8, "nine": 9, "ten": 10, "half": 0.5, "quarter": 0.25,
                "third": Fraction(1, 3)}


# --------------------------------------------------------------------------------- vocabulary
def normalize(text: str) -> str:
    """Lower case, curly quotes straightened, ``1"`` -> ``1 inch``, hyphens and ``'s`` split off."""
    text = text.lower().replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"')
    text = text.replace("\u201d", '"').replace("\u00bd", " 1/2").replace("\u00bc", " 1/4")
    text = text.replace("\u00be", " 3/4")
    text = re.sub(r"(\d)\s*(\"|''|”)", r"\1 inch ", text)
    text = re.sub(r"(?<=[a-z])-(?=[a-z])", " ", text)
    text = re.sub(r"(?<=\d)(in|inch|inches)\b", r" \1", text)
    return text


_TOKEN_RE = re.compile(r"\d+(?:\.\d+)?/\d+|\d*\.\d+|\d+|[a-z]+|'s|'|[,.;:!?]")


def tokenize(text: str) -> list[str]:
    """Tokens of a message: words, numbers (``1.5``, ``1/2``), ``'s`` and clause punctuation."""
    tokens = _TOKEN_RE.findall(normalize(text))
    out: list[str] = []
    for i, tok in enumerate(tokens):
        if tok == "'":
            continue
        if tok == "'s" and out and out[-1] == "it":        # "it's" = "it is": drop the 's
            continue
        out.append(tok)
    return out


def _key(phrase: str) -> tuple[str, ...]:
    return tuple(tokenize(phrase))


@lru_cache(maxsize=1)
def _phrases() -> tuple[dict[tuple[str, ...], tuple[str, object]], int]:
    """Every phrase the parser knows -> (kind, value); later tables win on clashes, so names come
    last but one and the attribute tables (which contain longer, more specific phrases) after."""
    table: dict[tuple[str, ...], tuple[str, object]] = {}

    def put(phrase, kind, value):
        key = _key(phrase)
        if key:
            table[key] = (kind, value)

    for word in SEPARATORS:
        put(word, "sep", word)
    for word, value in DETERMINERS.items():
        put(word, "det", value)
    for word, value in NUMBER_WORDS.items():
        put(word, "numword", value)
    for word in UNIT_WORDS:
        put(word, "unit", "inch")
    for word in FROM_WORDS:
        put(word, "from", None)
    for word, value in DIRECTIONS.items():
        put(word, "dir", value)
    for word, value in MODIFIERS.items():
        put(word, "mod", value)
    for word, value in PARTS.items():
        put(word, "part", value)
    for word, value in RELATIONS.items():
        put(word, "rel", value)
    for word in HAS_WORDS:
        put(word, "has", None)
    for word in MOVE_WORDS:
        put(word, "move", None)
    for word in FLIP_WORDS:
        put(word, "flip", None)
    for word in CENTERED_WORDS:
        put(word, "centered", None)
    for word in EACH_OTHER:
        put(word, "each_other", None)
    for word in FACING_WORDS:
        put(word, "facing", None)
    for word, value in SIZE_WORDS.items():
        put(word, "size", value)
    for word, value in SIZE_RELATIVE.items():
        put(word, "size_rel", value)
    for word, idx in PRONOUNS.items():
        put(word, "pronoun", idx)
    for word in IT_WORDS:
        put(word, "it", None)
    for word, idxs in GENERIC.items():
        put(word, "name", tuple(idxs))
    for art in ca.CLIPARTS:
        for label in (art.name, *art.synonyms):
            if label.lower() in _SKIP_NAMES:
                continue
            key = _key(label)
            found = ca.lookup(label)
            extra = GENERIC.get(" ".join(key), ())
            idxs = tuple(dict.fromkeys((*found, *extra)))
            table[key] = ("name", idxs)
            if len(key[-1]) > 3 and not key[-1].endswith("s"):          # plurals: "clouds"
                table[key[:-1] + (key[-1] + "s",)] = ("name", idxs)
    table[_key("kid")] = ("name", GENERIC["kid"])
    table[_key("child")] = ("name", GENERIC["child"])
    # "balloon" is the bunch of party balloons a child holds; the hot-air balloon is named in full
    table[_key("balloon")] = ("name", GENERIC["balloon"])
    table[_key("balloons")] = ("name", (52,))
    # names written as one word: "raincloud", "beachball", "hotairballoon"
    for key, (kind, value) in list(table.items()):
        if kind == "name" and len(key) > 1 and all(w.isalpha() for w in key):
            table.setdefault(("".join(key),), (kind, value))
    for pose, name in enumerate(ca.POSES):
        for label in (name, *ca.POSE_SYNONYMS[name], *POSE_EXTRA.get(name, ())):
            if label == "holding out":
                continue
            put(label, "pose", pose)
    for expression, name in enumerate(ca.EXPRESSIONS):
        for label in (name, *ca.EXPRESSION_SYNONYMS[name], *EXPRESSION_EXTRA.get(name, ())):
            put(label, "expr", expression)
    for word in REMOVE_WORDS:
        put(word, "remove", None)
    # phrases that must not be read word by word
    put("left of center", "dir", "centre_left")
    put("left of centre", "dir", "centre_left")
    put("left of the center", "dir", "centre_left")
    put("left of middle", "dir", "centre_left")
    put("left of the middle", "dir", "centre_left")
    put("right of center", "dir", "centre_right")
    put("right of centre", "dir", "centre_right")
    put("right of the center", "dir", "centre_right")
    put("right of middle", "dir", "centre_right")
    put("right of the middle", "dir", "centre_right")
    put("center left", "dir", "centre_left")
    for slight in ("just", "slightly", "a bit", "a little", "a little bit", "a tad"):
        for middle in ("center", "centre", "the center", "the centre", "middle", "the middle"):
            put(f"{slight} left of {middle}", "dir", "near_centre_left")
            put(f"{slight} right of {middle}", "dir", "near_centre_right")
    put("center right", "dir", "centre_right")
    put("middle of the sky", "dir", "mid_sky")
    put("mid sky", "dir", "mid_sky")
    put("middle of sky", "dir", "mid_sky")
    put("in the air", "dir", "sky")
    put("up in the sky", "dir", "sky")
    put("on the ground", "dir", "ground")
    # the back of the grass, just below the horizon line (for a sky piece: at the horizon)
    for phrase in ("just below the horizon", "below the horizon", "just under the horizon",
                   "under the horizon", "right below the horizon", "at the back of the grass",
                   "far back on the grass", "back on the grass", "in the back of the grass"):
        put(phrase, "dir", "back")
    put("far away", "dir", "horizon")
    put("in the distance", "dir", "horizon")
    put("is", "other", None)
    put("smiling", "expr", 2)
    put("smile", "expr", 2)
    put("big smile", "expr", 1)
    put("large smile", "expr", 1)
    put("wide smile", "expr", 1)
    put("huge smile", "expr", 1)
    put("smiling with teeth", "expr", 1)
    put("standing", "pose", 0)
    put("hand up", "pose", 6)
    put("arms up", "pose", 1)
    put("hands up", "pose", 1)
    put("slide", "name", (9,))
    # how people write a hat's owner: "witches hat", "a witch's hat", "chefs hat", "pirate's hat"
    for label, idx in (("witch", 32), ("chef", 28), ("pirate", 29), ("viking", 33), ("wizard", 26),
                       ("cook", 28), ("king", 27), ("queen", 27), ("princess", 27)):
        for owner in (label + "s", label + "es", label + "'s"):
            for hat in ("hat", "helmet", "crown"):
                if (label, hat) in (("viking", "helmet"),) or hat == "hat" or (label, hat) in (
                        ("king", "crown"), ("queen", "crown"), ("princess", "crown")):
                    put(f"{owner} {hat}", "name", (idx,))
    # "right next to the slide", "right above the sun": "right" says how close, not where
    for close in ("right", "just", "directly", "immediately"):
        for phrase, kind in (("next to", "near"), ("beside", "near"), ("by", "near"), ("above", "above"),
                             ("over", "above"), ("under", "below"), ("below", "below"),
                             ("underneath", "below"), ("behind", "behind"), ("in front of", "front")):
            put(f"{close} {phrase}", "rel", kind)
    # the canvas's own sides: "right side of the picture", "on the left of the image"
    for noun in CANVAS_NOUNS:
        for side in ("left", "right", "top", "bottom", "middle", "center", "centre"):
            value = DIRECTIONS[side]
            for lead in ("", "on ", "to ", "in ", "at "):
                for the in ("the ", ""):
                    for part in ("", " side", " part", " half", " edge", " corner"):
                        put(f"{lead}{the}{side}{part} of the {noun}", "dir", value)
                        put(f"{lead}{the}{side}{part} of {noun}", "dir", value)
    # short slips the spelling reader leaves alone (too short to guess in general)
    for slip, word in SHORT_SLIPS.items():
        if word in table or _key(word) in table:
            table[(slip,)] = table[_key(word)]
    return table, max(len(key) for key in table)


@lru_cache(maxsize=1)
def _phrase_lengths() -> dict[str, tuple[int, ...]]:
    """For each word a known phrase starts with, the lengths of those phrases, longest first
    (:func:`lex` tries only these)."""
    lengths: dict[str, set[int]] = {}
    for key in _phrases()[0]:
        lengths.setdefault(key[0], set()).add(len(key))
    return {word: tuple(sorted(ns, reverse=True)) for word, ns in lengths.items()}


@lru_cache(maxsize=1)
def _fuzzy_names() -> dict[str, tuple[int, ...]]:
    table, _ = _phrases()
    return {key[0]: value for key, (kind, value) in table.items()
            if kind == "name" and len(key) == 1 and len(key[0]) >= 5}


# Spelling slips in the other words (places, sizes, poses, expressions, facing, moves): a word the
# parser does not know is read as the one-word phrase it is one edit away from (RapidFuzz's OSA
# distance: a swap of two neighbours is one edit), two edits for words of 8 letters or more.
# Four-letter words only by a swap or a dropped letter ("lfet", "rigt"), and never words that
# are common English words one edit away from the vocabulary.
FUZZY_KINDS = ("dir", "size", "pose", "expr", "facing", "mod", "rel", "move", "remove", "flip",
               "size_rel", "has", "centered")
NOT_SLIPS = {"place", "placed", "places", "having", "light", "lights", "night", "might", "sight",
             "tight", "fight", "shirt", "tower", "power", "tall", "taller", "wall", "tree", "rest",
             "left", "lest", "felt", "lift", "meet", "them", "then", "than", "this", "that", "what",
             "when", "were", "where", "there", "their", "these", "those", "both", "down", "done",
             "some", "same", "like", "line", "more", "most", "size", "side", "sure", "okay", "good",
             "great", "nice", "ready", "thanks", "sorry", "think", "thing", "things", "wait",
             "want", "need", "looks", "look", "make", "made", "take", "have", "into", "onto",
             "over", "your", "yours", "with", "about", "also", "only", "just", "very", "much",
             "pole", "hole", "holes", "whole", "scene", "image", "picture", "color", "colour",
             "stand", "stands", "sitting", "setting", "seating", "later", "water", "lower",
             "upper", "under", "bigger", "shade", "shaded", "darker", "lighter", "white", "black"}


@lru_cache(maxsize=1)
def _fuzzy_words() -> dict[str, tuple[str, object]]:
    table, _ = _phrases()
    return {key[0]: entry for key, entry in table.items()
            if entry[0] in FUZZY_KINDS and len(key) == 1 and len(key[0]) >= 4 and key[0].isalpha()}


def _known_word(word: str) -> bool:
    return word in _words_in_phrases() or word in PIECE_PARTS or word in BODY_WORDS \
        or word in NOT_SLIPS or word in PARTS


@lru_cache(maxsize=1)
def _words_in_phrases() -> frozenset[str]:
    table, _ = _phrases()
    return frozenset(w for key in table for w in key)


@lru_cache(maxsize=4096)
def _slip(word: str) -> tuple[str, object] | None:
    """The vocabulary entry a misspelt ``word`` stands for (see above), or None."""
    if len(word) < 4 or not word.isalpha() or _known_word(word):
        return None
    words = _fuzzy_words()
    limit = 2 if len(word) >= 8 else 1
    found = process.extract(word, list(words), scorer=OSA.distance, score_cutoff=limit, limit=3)
    if not found:
        return None
    best = min(score for _, score, _ in found)
    closest = [choice for choice, score, _ in found if score == best]
    if len({words[c] for c in closest}) != 1:
        return None                                    # two readings as close: leave it
    choice = closest[0]
    if len(word) == 4 and not (sorted(word) == sorted(choice) or
                               any(choice[:i] + choice[i + 1:] == word for i in range(len(choice)))):
        return None
    return words[choice]


@lru_cache(maxsize=1)
def _multiword_names() -> dict[tuple[int, str, int], tuple[tuple[str, ...], ...]]:
    """Clip-art names of 2-3 words, by (length, word, position of that word): the names a
    phrase with one misspelt word may stand for (``hot air baloon``, ``basball glove``)."""
    table, _ = _phrases()
    index: dict[tuple[int, str, int], list[tuple[str, ...]]] = {}
    for key, (kind, _value) in table.items():
        if kind == "name" and len(key) in (2, 3) and all(w.isalpha() for w in key):
            for pos, word in enumerate(key):
                index.setdefault((len(key), word, pos), []).append(key)
    return {k: tuple(v) for k, v in index.items()}


def _fuzzy_phrase(words: list[str], i: int, longest: int) -> tuple[tuple[str, object], int] | None:
    """A clip-art name of 2-3 words at ``words[i]`` with one word misspelt (the others exact,
    the whole at least :data:`FUZZY_CUTOFF` alike), when no longer phrase matches exactly."""
    table = _phrases()[0]
    index = _multiword_names()
    for n in (3, 2):
        if n <= longest or i + n > len(words):
            continue
        window = tuple(words[i:i + n])
        if not all(w.isalpha() for w in window):
            continue
        keys = {key for pos, word in enumerate(window) for key in index.get((n, word, pos), ())}
        best = None
        for key in keys:
            wrong = [pos for pos in range(n) if key[pos] != window[pos]]
            if len(wrong) != 1 or len(window[wrong[0]]) < 3:
                continue
            slip = window[wrong[0]]
            if slip not in SHORT_SLIPS and (slip in _words_in_phrases() or slip in NOT_SLIPS):
                continue                                   # a real word, not a slip
            score = fuzz.ratio(" ".join(window), " ".join(key))
            if score >= FUZZY_CUTOFF and (best is None or score > best[0]):
                best = (score, key)
        if best is not None:
            return table[best[1]], n
    return None


@dataclass(frozen=True)
class Tok:
    kind: str
    value: object
    text: str


@lru_cache(maxsize=8192)
def lex(text: str) -> tuple[Tok, ...]:
    """Greedy longest-phrase tagging of a message (numbers joined: ``1 1/2`` -> 1.5)."""
    table, lengths = _phrases()[0], _phrase_lengths()
    words = tokenize(text)
    out: list[Tok] = []
    i = 0
    while i < len(words):
        word = words[i]
        number = _number_at(words, i)
        if number is not None:
            value, used = number
            out.append(Tok("num", value, " ".join(words[i:i + used])))
            i += used
            continue
        if word == "'s":
            out.append(Tok("poss", None, word))
            i += 1
            continue
        match = None
        for n in lengths.get(word, ()):               # the phrases starting with this word, longest first
            if n <= len(words) - i:
                key = tuple(words[i:i + n])
                if key in table:
                    match = (table[key], n)
                    break
        slipped = _fuzzy_phrase(words, i, match[1] if match else 0)
        if slipped is not None:                       # "hot air baloon", "ketchup botle"
            match = slipped
        if match is None:
            fuzzy = None
            if len(word) >= 5 and word.isalpha():
                found = process.extractOne(word, list(_fuzzy_names()), scorer=fuzz.ratio,
                                           score_cutoff=FUZZY_CUTOFF)
                if found:
                    fuzzy = _fuzzy_names()[found[0]]
            slip = None if fuzzy else _slip(word)
            if fuzzy:
                out.append(Tok("name", fuzzy, word))
            elif slip is not None:
                out.append(Tok(slip[0], slip[1], word))
            else:
                out.append(Tok("other", None, word))
            i += 1
            continue
        (kind, value), n = match
        text_ = " ".join(words[i:i + n])
        if kind == "mod" and text_ in ("a little", "little", "a tiny") and i + n < len(words) \
                and table.get((words[i + n],), ("", None))[0] == "name":
            if text_ != "little":                          # "a little dog": a small dog
                out.append(Tok("det", "new", words[i]))
            out.append(Tok("size", 2, words[i + n - 1]))
        else:
            out.append(Tok(kind, value, text_))
        i += n
    return _smiles(out)


_SMILE_WORDS = ("smile", "smiles", "smiling", "grin", "grinning")


def _smiles(toks: list[Tok]) -> tuple[Tok, ...]:
    """``a big open mouth smile``, ``smiling big``: a wide smile, not a size; ``sitting on the
    right``: a pose and a place (``sitting on`` a piece stays a relation)."""
    out: list[Tok] = []
    k = 0
    while k < len(toks):
        tok = toks[k]
        nxt = toks[k + 1] if k + 1 < len(toks) else None
        after = toks[k + 2] if k + 2 < len(toks) else None
        if tok.kind == "rel" and tok.text == "sitting on":
            j = k + 1
            while j < len(toks) and toks[j].kind in ("det", "size"):
                j += 1
            if j >= len(toks) or toks[j].kind not in ("name", "pronoun", "it"):
                out += [Tok("pose", ca.POSES.index("sitting"), "sitting"), Tok("rel", "on", "on")]
                k += 1
                continue
        if tok.kind == "size" and tok.value == 0 and nxt is not None and nxt.kind == "expr" \
                and nxt.text == "open mouth" and after is not None and after.text in _SMILE_WORDS:
            out.append(Tok("expr", 1, f"{tok.text} {nxt.text} {after.text}"))
            k += 3
            continue
        if tok.kind == "expr" and tok.text in _SMILE_WORDS and nxt is not None and nxt.kind == "size" \
                and nxt.value == 0 and (after is None or after.kind != "name"):
            out.append(Tok("expr", 1, f"{tok.text} {nxt.text}"))
            k += 2
            continue
        out.append(tok)
        k += 1
    return tuple(out)


def _number_at(words: list[str], i: int) -> tuple[float, int] | None:
    """A distance at ``words[i]``: ``1``, ``1.5``, ``1/2``, ``1 1/2``, ``one and a half``,
    ``half an``/``a half``, ``an inch`` ... with the number of words used (None if none)."""
    def simple(word: str):
        if re.fullmatch(r"\d+(?:\.\d+)?", word) or re.fullmatch(r"\d*\.\d+", word):
            return Fraction(word)
        if re.fullmatch(r"\d+/\d+", word):
            num, den = word.split("/")
            return Fraction(int(num), int(den)) if int(den) else None
        if word in NUMBER_WORDS:
            return Fraction(NUMBER_WORDS[word])
        return None

    word = words[i]
    if not (word[0].isdigit() or word[0] == "." or word in NUMBER_WORDS or word in ("a", "an")):
        return None                       # the common case, without the regular expressions
    nxt = words[i + 1] if i + 1 < len(words) else ""
    after = words[i + 2] if i + 2 < len(words) else ""
    if word in ("a", "an") and nxt in ("inch", "in"):
        return 1.0, 1
    if word in ("a", "an") and nxt in ("half", "quarter") and after in ("inch", "in", "an", "of"):
        return float(NUMBER_WORDS[nxt]), 2
    value = simple(word)
    if value is None:
        return None
    if word in NUMBER_WORDS and word not in ("half", "quarter") and not _unit_follows(words, i + 1):
        return None                       # "one" as a determiner, "two clouds"
    if word in ("half", "quarter", "third") and not _unit_follows(words, i + 1):
        return None                       # "half off", "a third of the way"
    used = 1
    if re.fullmatch(r"\d", word) and re.fullmatch(r"\d", nxt or "x") and int(word) < int(nxt) \
            and after in ("inch", "inches", "in"):
        return float(Fraction(int(word), int(nxt))), 2        # "1 2 inch": 1/2 with the slash lost
    if nxt and re.fullmatch(r"\d+/\d+", nxt) and re.fullmatch(r"\d+", word):
        value += simple(nxt)
        used = 2
    elif nxt == "and" and after in ("a", "one") and i + 3 < len(words) and words[i + 3] in ("half", "quarter"):
        value += Fraction(NUMBER_WORDS[words[i + 3]])
        used = 4
    elif nxt == "and" and after in ("half", "quarter"):
        value += Fraction(NUMBER_WORDS[after])
        used = 3
    j = i + used
    if j < len(words) and words[j] in ("an", "a") and value < 1:     # "half an inch"
        used += 1
    return float(value), used


def _unit_follows(words: list[str], j: int) -> bool:
    rest = words[j:j + 5]
    return any(w in ("inch", "inches", "in", "an", "a", "and", "1/2", "1/4", "3/4") for w in rest[:2]) \
        and any(w in ("inch", "inches", "in") for w in rest)


# ----------------------------------------------------------------------------- parsed messages
@dataclass
class Mention:
    """A clip art the message talks about, with everything the message says about it."""

    idxs: tuple[int, ...]                 # candidates, best first
    text: str
    pronoun: bool = False
    it: bool = False
    det: str | None = None                # "new" (a/an/another) | "known" (the) | None
    size: int | None = None
    size_rel: int = 0
    pose: int | None = None
    expression: int | None = None
    flip: int | None = None
    flip_toggle: bool = False
    face_to: "Mention | None" = None
    face_away: bool = False
    each_other: bool = False
    centered: bool = False
    dirs: list[tuple[str, set]] = field(default_factory=list)      # (direction, modifiers)
    distances: list[tuple[str, float]] = field(default_factory=list)   # (edge, inches)
    moves: list[tuple[str, float | None, str]] = field(default_factory=list)  # (dir, inches, degree)
    move: bool = False
    relation: tuple[str, "Mention | None", str | None] | None = None   # (kind, target, part)
    remove: bool = False
    spread: tuple[int, int] | None = None  # (k, n): k-th of n pieces given one place ("X, Y and Z at ...")
    target_only: bool = False             # only named as a relation's target
    existing_only: bool = False           # changes a piece only if it is already drawn
    resolved: int | None = None

    def has_changes(self) -> bool:
        return any((self.size is not None, self.size_rel, self.pose is not None,
                    self.expression is not None, self.flip is not None, self.flip_toggle,
                    self.face_to is not None, self.each_other, self.dirs, self.distances,
                    self.moves, self.relation is not None, self.remove))


_ADJECTIVE_KINDS = ("size", "expr", "pose", "det")


def _clauses(toks: tuple[Tok, ...]) -> list[list[Tok]]:
    clauses: list[list[Tok]] = [[]]
    for i, tok in enumerate(toks):
        if tok.kind == "sep":
            # "1.3 in from left and 2 in from top" stays one clause: "and" before a number
            nxt = toks[i + 1] if i + 1 < len(toks) else None
            prev = clauses[-1][-1] if clauses[-1] else None
            edge_pair = prev is not None and prev.kind == "dir" and nxt is not None and (
                nxt.kind == "dir" or nxt.kind == "mod" and nxt.value == "side")
            if tok.text == "and" and nxt is not None and (nxt.kind == "num" or edge_pair) and clauses[-1]:
                clauses[-1].append(Tok("other", None, "and"))
                continue
            if clauses[-1]:
                clauses.append([])
            continue
        clauses[-1].append(tok)
    return [c for c in clauses if c]


def parse(text: str) -> list[Mention]:
    """The mentions of a message with their attributes, in order (relation targets included,
    flagged ``target_only``). Fresh objects on every call (a copy of the memoised reading:
    :func:`interpret` sets ``resolved`` on them; nothing else changes a parsed mention)."""
    memo: dict[int, Mention] = {}
    return [_copy_mention(mention, memo) for mention in _parsed(text)]


def _copy_mention(mention: Mention, memo: dict[int, Mention]) -> Mention:
    """A copy of ``mention`` whose relation target and ``face_to`` are copies too (one copy per
    original, so that mentions shared within a message stay shared)."""
    done = memo.get(id(mention))
    if done is not None:
        return done
    twin = object.__new__(Mention)
    twin.__dict__.update(mention.__dict__)
    memo[id(mention)] = twin
    if twin.relation is not None and twin.relation[1] is not None:
        twin.relation = (twin.relation[0], _copy_mention(twin.relation[1], memo), twin.relation[2])
    if twin.face_to is not None:
        twin.face_to = _copy_mention(twin.face_to, memo)
    return twin


@lru_cache(maxsize=16384)
def _parsed(text: str) -> tuple[Mention, ...]:
    """:func:`parse`'s reading of ``text``, memoised (the rule Teller reads ~100 candidate
    messages back per piece, and a Drawer rereads the whole chat every turn); never handed out."""
    toks = lex(text)
    mentions: list[Mention] = []
    focus: Mention | None = None
    run: list[Mention] = []              # "a hamburger, a hotdog and ketchup at the bottom"
    holder: Mention | None = None        # "wearing shades and a crown": the wearer
    for clause in _clauses(toks):
        start = len(mentions)
        pair = [m for m in mentions if not m.target_only][-2:]
        if not any(_is_mention(t) for t in clause) and any(t.text == "both" for t in clause) \
                and len(pair) == 2:
            for mention in pair:             # "..., both sitting", "both big"
                _parse_clause(clause, mentions, mention)
            continue
        before = focus
        focus = _parse_clause(clause, mentions, focus)
        new = [m for m in mentions[start:] if not m.target_only]
        bare = len(new) == 1 and all(t.kind in ("det", "size", "name") for t in clause)
        if bare and holder is not None and new[0].relation is None and new[0].idxs \
                and all(attached_part(idx) in ("head", "eyes", "hand") for idx in new[0].idxs):
            new[0].relation = ("has", holder, None)              # "... and a crown"
            focus = before
            continue
        holder = next((m.relation[1] for m in reversed(new) if m.relation is not None
                       and m.relation[0] == "has" and _person_mention(m.relation[1])), None)
        if bare and new[0].relation is None:
            run.append(new[0])
            continue
        placed = next((m for m in new if m.dirs or m.distances), None)
        if placed is not None and placed.relation is None:
            group = [m for m in run if not m.dirs and not m.distances and m.relation is None] + [placed]
            for k, mention in enumerate(group):
                if mention is not placed:
                    mention.dirs = [(value, set(mods)) for value, mods in placed.dirs]
                    mention.distances = list(placed.distances)
                if len(group) > 1:
                    mention.spread = (k, len(group))
        run = []
    for mention in mentions:
        # "a girl holding a balloon on the right": the place is the girl's, the balloon is in
        # her hand ("a boy kicking a ball on the left": the boy's place too)
        if mention.relation is not None and mention.relation[0] in ("has", "hand", "feet") \
                and not mention.relation[1].target_only and (mention.dirs or mention.distances):
            holder = mention.relation[1]
            if not holder.dirs and not holder.distances:
                holder.dirs, mention.dirs = mention.dirs, []
                holder.distances, mention.distances = mention.distances, []
    return tuple(mentions)


def _mention_of(tok: Tok, det: str | None) -> Mention:
    if tok.kind == "pronoun":
        return Mention(idxs=(int(tok.value),), text=tok.text, pronoun=True, det="known")
    if tok.kind == "it":
        return Mention(idxs=(), text=tok.text, it=True, det="known")
    return Mention(idxs=tuple(tok.value), text=tok.text, det=det)


def _is_mention(tok: Tok) -> bool:
    return tok.kind in ("name", "pronoun", "it")


def _parse_clause(clause: list[Tok], mentions: list[Mention], focus: Mention | None) -> Mention | None:
    """Attach the clause's words to its mentions (in place); returns the new focus."""
    n = len(clause)
    consumed = [False] * n
    clause_mentions: list[tuple[int, Mention]] = []
    subject: Mention | None = focus if focus is not None and _person_mention(focus) else None
    current: Mention | None = None
    pending_rel: tuple[str, Mention, str | None] | None = None     # "next to the tree is a dog"
    pending_has: Mention | None = None                               # "he is holding a ..."
    pending_kick: Mention | None = None                              # "kicking a ball"
    facing: list[tuple[int, str, object]] = []                       # (position, kind, value)

    def relate(holder: Mention | None, relation: tuple[str, Mention, str | None]) -> None:
        nonlocal pending_rel
        if holder is None or holder is relation[1]:
            pending_rel = relation
        elif holder.relation is None:
            holder.relation = relation

    i = 0
    while i < n:
        tok = clause[i]
        if tok.kind == "rel":
            found = _relation_target(clause, i + 1)
            if found is not None:
                j, part, end = found
                if tok.value == "in" and part is None and current is not None and _person_mention(current) \
                        and clause[j].kind == "name" and tuple(clause[j].value) \
                        and all(attached_part(idx) in ("head", "eyes") for idx in clause[j].value):
                    worn = _mention_of(clause[j], "new")             # "a boy in a witch hat"
                    worn.relation = ("has", current, None)
                    mentions.append(worn)
                    for k in range(i, end):
                        consumed[k] = True
                    i = end
                    continue
                target = _mention_of(clause[j], "known")
                target.target_only = True
                mentions.append(target)
                kind = part if part is not None else str(tok.value)
                if tok.text == "sitting on" and current is not None and _person_mention(current) \
                        and current.pose is None:
                    current.pose = ca.POSES.index("sitting")      # "a boy sitting on the table"
                if kind == "on" and current is not None and current.idxs and _person_mention(target):
                    worn = {attached_part(idx) for idx in current.idxs}
                    if worn in ({"head"}, {"eyes"}):             # "a rainbow hat on mike"
                        kind = part = worn.pop()
                relate(current, (kind, target, part))
                for k in range(i, end):
                    consumed[k] = True
                i = end
                continue
            k = i + 1
            while k < n and clause[k].kind in ("det", "dir", "other") and k - i <= 3:
                k += 1
            if k < n and clause[k].kind == "part" and subject is not None:
                relate(current, (str(clause[k].value), subject, str(clause[k].value)))  # "in the left hand"
                for m in range(i, k + 1):
                    consumed[m] = True
                i = k + 1
                continue
        elif tok.kind == "from" and current is not None:
            found = _relation_target(clause, i + 1)
            if found is not None:                              # "1/2 inch from his foot"
                j, part, end = found
                target = _mention_of(clause[j], "known")
                target.target_only = True
                mentions.append(target)
                relate(current, (part if part is not None else "near", target, part))
                for k in range(i, end):
                    consumed[k] = True
                i = end
                continue
        elif tok.kind == "has":
            consumed[i] = True
            holder = current if current is not None and _person_mention(current) else subject
            pending_has = holder
            i += 1
            continue
        elif tok.kind == "pose" and tok.value == 2 and current is not None and _person_mention(current):
            pending_kick = current
        elif tok.kind == "pose" and tok.value == 3:           # "running to the left": facing left
            j = i + 1
            while j < n and clause[j].text in ("to", "the", "towards", "toward"):
                j += 1
            if j < n and j > i + 0 and clause[j].kind == "dir" and clause[j].value in ("left", "right"):
                consumed[j] = True
                facing.append((i, "dir", 0 if clause[j].value == "right" else 1))
        elif tok.kind == "facing":
            consumed[i] = True
            j = i + 1
            while j < n and clause[j].text in _FACING_FILLER:
                j += 1
            if j < n and clause[j].kind == "dir" and clause[j].value in ("left", "right"):
                consumed[j] = True
                facing.append((i, "dir", 0 if clause[j].value == "right" else 1))
                i = j + 1
                continue
            if j < n and clause[j].kind == "each_other":
                consumed[j] = True
                facing.append((i, "each_other", None))
                i = j + 1
                continue
            if j < n and _is_mention(clause[j]):
                away = any(t.text == "away" for t in clause[i:j])
                target = _mention_of(clause[j], "known")
                target.target_only = True
                mentions.append(target)
                end = j + 1 + _poss_len(clause, j)
                for k in range(j, end):
                    consumed[k] = True
                facing.append((i, "to", (target, away)))
                i = end
                continue
            i += 1
            continue
        elif _is_mention(tok) and not consumed[i]:
            k = i - 1
            while k >= 0 and clause[k].kind in ("size", "expr", "pose") and not consumed[k]:
                k -= 1
            det = str(clause[k].value) if k >= 0 and clause[k].kind == "det" else None
            mention = _mention_of(tok, det)
            mentions.append(mention)
            clause_mentions.append((i, mention))
            consumed[i] = True
            if pending_rel is not None:
                mention.relation, pending_rel = pending_rel, None
            if pending_has is not None and mention is not pending_has and not _person_mention(mention):
                mention.relation = ("has", pending_has, None)
                pending_has = None
            elif pending_kick is not None and any(idx in _BALLS for idx in mention.idxs):
                mention.relation = ("feet", pending_kick, "feet")
                pending_kick = None
            if _person_mention(mention) and (subject is None or subject is focus):
                subject = mention
            current = mention
            i += 1 + _poss_len(clause, i)
            continue
        i += 1

    # who owns each word: a clause's opening words its first mention, later words the mention
    # before them, sizes (and a person's pose/expression) right before a mention that mention
    owner: list[Mention | None] = [None] * n
    if not clause_mentions:
        owner = [focus] * n
    else:
        first_at, first = clause_mentions[0]
        for k in range(first_at):
            owner[k] = first
        for m, (at, mention) in enumerate(clause_mentions):
            end = clause_mentions[m + 1][0] if m + 1 < len(clause_mentions) else n
            for k in range(at + 1, end):
                owner[k] = mention
            k = at - 1
            while m > 0 and k >= 0 and clause[k].kind in _ADJECTIVE_KINDS and not consumed[k]:
                if clause[k].kind in ("size", "det") or _person_mention(mention):
                    owner[k] = mention
                k -= 1
    for at, kind, value in facing:
        mention = owner[at]
        if kind == "to" and mention is not None:
            mention.face_to, mention.face_away = value
        elif kind == "dir" and mention is not None:
            mention.flip = int(value)
        elif kind == "each_other":
            people = [m for _, m in clause_mentions if _person_mention(m)]
            if len(people) < 2:                               # "the kids are facing each other"
                for idx in ca.HUMAN_IDXS:
                    if not any(idx in m.idxs for m in people):
                        both = Mention(idxs=(idx,), text="each other", pronoun=True, det="known",
                                       existing_only=True)
                        mentions.append(both)
                        people.append(both)
            for person in people:
                person.each_other = True
    _attributes(clause, owner, consumed)
    # a later clause without a mention describes this clause's subject: "Mike kicking a ball,
    # big smile, facing right" (its first mention, not the ball)
    return clause_mentions[0][1] if clause_mentions else focus


_FACING_FILLER = {"the", "to", "towards", "toward", "at", "is", "a", "in", "direction", "of",
                  "looking", "facing", "directly", "away", "from", "his", "her", "its", "their",
                  "is facing", "pointing", "turned", "the other", "other"}
_BALLS = (43, 45, 46, 47, 48, 49)


def _poss_len(clause: list[Tok], j: int) -> int:
    return 1 if j + 1 < len(clause) and clause[j + 1].kind == "poss" else 0


def _person_mention(mention: Mention) -> bool:
    return bool(mention.idxs) and all(ca.is_human(idx) for idx in mention.idxs)


def _relation_target(clause: list[Tok], j: int) -> tuple[int, str | None, int] | None:
    """After a relation word: ``[the] [big] mention ['s] [left|right] [part]`` -> (the mention's
    position, the body part or None, the position after the phrase)."""
    n = len(clause)
    while j < n and clause[j].kind in ("det", "size", "other") and clause[j].text in (
            "the", "a", "an", "this", "that", "big", "small", "large", "medium", "little", "of"):
        j += 1
    if j >= n or not _is_mention(clause[j]):
        return None
    k = j + 1 + _poss_len(clause, j)
    if k + 1 < n and clause[k].kind == "dir" and clause[k].value in ("left", "right") \
            and clause[k + 1].kind == "part":
        k += 1
    part = str(clause[k].value) if k < n and clause[k].kind == "part" else None
    if k < n and clause[k].text == "face" and k > j + 0 and clause[k - 1].kind == "poss":
        part = "eyes"                                   # "on Mike's face" (not "face left")
    if part is None and clause[j].kind == "pronoun" and clause[j].text in ("his", "its"):
        return None                                     # "at his" without a body part
    if part is not None and not ca.is_human(_first(clause[j])):
        part = None                                     # "the tree's left side"
        return j, None, k
    return j, part, k + (1 if part is not None else 0)


def _first(tok: Tok) -> int:
    if tok.kind == "pronoun":
        return int(tok.value)
    return tuple(tok.value)[0] if tok.kind == "name" and tok.value else -1


def _attributes(clause: list[Tok], owner: list[Mention | None], consumed: list[bool]) -> None:
    n = len(clause)
    k = 0
    while k < n:
        tok = clause[k]
        mention = owner[k]
        if consumed[k] or mention is None:
            k += 1
            continue
        kind = tok.kind
        if kind == "size":
            if tok.text == "little" and not (k + 1 < n and (_is_mention(clause[k + 1]) or clause[k + 1].kind == "size")):
                k += 1
                continue          # "a little to the left"
            mention.size = int(tok.value)
        elif kind == "size_rel":
            mention.size_rel += int(tok.value)
        elif kind == "pose":
            mention.pose = int(tok.value)
        elif kind == "expr":
            if mention.expression is None or tok.value == 1:
                mention.expression = int(tok.value)
        elif kind == "flip":
            mention.flip_toggle = True
        elif kind == "remove":
            mention.remove = True
        elif kind == "move":
            mention.move = True
        elif kind == "centered":
            mention.centered = True
        elif kind == "num":
            distance = _distance_at(clause, k)
            if distance is not None:
                edge, inches, used = distance
                if edge in ("up", "down") or (edge in ("left", "right") and _moving(clause, k)):
                    mention.moves.append((edge, inches, "normal"))
                    k += used
                    continue
                mention.distances.append((edge, inches))
                k += used
                # "an inch from left and bottom", "1/2 inch from top and side"
                if k + 1 < n and clause[k].text == "and" and (clause[k + 1].kind == "dir" or clause[k + 1].text == "side"):
                    second = str(clause[k + 1].value) if clause[k + 1].kind == "dir" else "side"
                    if second == "side":
                        sides = [str(t.value) for t in clause if t.kind == "dir" and t.value in ("left", "right")]
                        sides += [v for v, _ in mention.dirs if v in ("left", "right")]
                        second = sides[0] if sides else ""
                    if second in ("left", "right", "top", "bottom") and second != edge:
                        mention.distances.append((second, inches))
                    k += 2
                continue
        elif kind == "dir":
            value = str(tok.value)
            if value in ("left", "right") and k + 1 < n and (clause[k + 1].kind == "part" or
                                                             clause[k + 1].text.split()[0] in BODY_WORDS):
                k += 1
                continue          # "left hand", "right leg up"
            if value in ("top", "bottom", "left", "right", "middle") and _part_of_piece(clause, k):
                k += 1
                continue          # "top of the trunk", "the tip top of it": a part of the piece
            mods = set()
            back = k - 1
            while back >= 0 and clause[back].kind in ("mod", "det", "rel", "other") and k - back <= 4:
                if clause[back].kind == "mod":
                    mods.add(str(clause[back].value))
                back -= 1
            fwd = k + 1
            while fwd < n and clause[fwd].kind in ("mod", "dir", "other", "det") and fwd - k <= 2:
                if clause[fwd].kind == "mod":
                    mods.add(str(clause[fwd].value))
                if clause[fwd].kind == "dir":
                    break
                fwd += 1
            mention.dirs.append((value, mods))
        elif kind == "mod" and tok.value == "cutoff":
            # "cut off on the left", "left side cut off"
            mention.dirs.append(("cutoff", set()))
        k += 1


PIECE_PARTS = {"trunk", "leaves", "hole", "tail", "handle", "roof", "seat", "branches", "top",
               "stem", "string", "wing", "wings", "propeller", "flame", "flames", "body", "face",
               "head", "hat", "basket", "door", "opening", "bottom", "legs", "ladder"}


def _part_of_piece(clause: list[Tok], k: int) -> bool:
    """``top of the trunk``, ``the tip top of it``: a direction word naming part of a piece (not
    ``top of the image``, ``left of the tree``, which relations and places read)."""
    if k + 1 >= len(clause) or clause[k + 1].text != "of":
        return False
    j = k + 2
    while j < len(clause) and clause[j].text in ("the", "his", "her", "its", "their"):
        j += 1
    if j >= len(clause):
        return False
    return clause[j].kind == "it" or clause[j].text in PIECE_PARTS


def _moving(clause: list[Tok], k: int) -> bool:
    return any(t.kind == "move" or (t.kind == "mod" and t.value == "more") for t in clause)


def _distance_at(clause: list[Tok], k: int) -> tuple[str, float, int] | None:
    """``N [inch] [from] [the] left|right|top|bottom [edge|side]`` or ``N inch(es) up/left``."""
    n = len(clause)
    value = float(clause[k].value)
    j = k + 1
    if j < n and clause[j].kind == "unit":
        j += 1
    elif j < n and clause[j].kind == "other" and clause[j].text in ("inch", "inches"):
        j += 1
    if j < n and clause[j].kind == "mod" and clause[j].text in ("off the",):
        j += 1
    has_from = False
    while j < n and clause[j].kind in ("from", "det", "other", "rel") and clause[j].text in (
            "from", "off", "away from", "in from", "from the", "away from the", "the", "to", "of", "in"):
        has_from = has_from or clause[j].kind == "from" or clause[j].text.startswith("from")
        j += 1
    if j < n and clause[j].kind == "rel" and clause[j].value in ("left_of", "right_of"):
        return str(clause[j].value)[:-3], value, j + 1 - k      # "2 inch from left of image"
    if j < n and clause[j].kind == "dir":
        edge = str(clause[j].value)
        if edge in ("left", "right", "top", "bottom"):
            used = j + 1 - k
            if j + 1 < n and clause[j + 1].kind == "mod":
                used += 1
            return edge, value, used
        if edge in ("up", "down"):
            return edge, value, j + 1 - k
    return None


# -------------------------------------------------------------------------------- interpretation
@dataclass(frozen=True)
class Change:
    """One piece a message changed: ``op`` is place, update or remove."""

    op: str
    idx: int


def interpret_dialog(messages: list[str], palette=None, canvas: dict[int, Piece] | None = None
                     ) -> dict[int, Piece]:
    """The canvas a Drawer following :func:`interpret` draws after ``messages`` (oldest first)."""
    canvas = dict(canvas or {})
    focus = None
    for message in messages:
        canvas, focus, _ = interpret(message, canvas, palette, focus)
    return canvas


HISTORY = 12                           # how many mentioned pieces pronouns may look back over


def _history(focus) -> list[int]:
    if focus is None:
        return []
    if isinstance(focus, int):
        return [focus]
    return [int(idx) for idx in focus]


def interpret(message: str, canvas: dict[int, Piece], palette=None, focus=None
              ) -> tuple[dict[int, Piece], tuple[int, ...], list[Change]]:
    """Apply one Teller message to ``canvas`` (``{idx: Piece}``, not changed). ``palette``: the
    idx the Drawer may use (None: the whole library). ``focus``: what the earlier messages talked
    about (the value this function returned for the previous message; an idx is accepted too):
    pronouns mean the last piece mentioned that they can mean. Returns the new canvas, the new
    focus (the pieces mentioned so far, the last one last) and what changed."""
    allowed = set(range(ca.N_CLIPARTS)) if palette is None else set(palette)
    canvas = dict(canvas)
    changes: list[Change] = []
    history = _history(focus)

    def record(change: Change) -> None:
        if change not in changes and Change("place", change.idx) not in changes:
            changes.append(change)

    mentions = parse(message)
    worn: list[tuple[Mention, int, Piece | None, Piece]] = []
    for mention in mentions:
        if mention.target_only:
            continue
        idx = _resolve(mention, canvas, allowed, history)
        mention.resolved = idx
        if idx is None:
            continue
        # what the mention is placed against, read before it joins the history ("next to it")
        for other in (mention.relation[1] if mention.relation else None, mention.face_to):
            if other is not None and other.resolved is None:
                other.resolved = _resolve(other, canvas, allowed, history, exclude=idx)
            if other is not None and other.resolved is not None and other.resolved != idx \
                    and other.resolved not in canvas and not mention.remove:
                # a piece named only as a landmark is drawn too, where it goes by default, or
                # where the message puts the pair ("a cat under the apple tree on the right")
                landmark = Mention(idxs=(other.resolved,), text=other.text)
                if other is (mention.relation[1] if mention.relation else None) \
                        and mention.relation[0] in _PAIR_KINDS and not other.dirs and not other.distances:
                    landmark.dirs = [d for d in mention.dirs if "small" not in d[1]]
                    landmark.distances, mention.distances = mention.distances, []
                    mention.dirs = [d for d in mention.dirs if "small" in d[1]]
                canvas[other.resolved] = _apply(landmark, other.resolved, None, canvas)
                record(Change("place", other.resolved))
        history = (history + [idx])[-HISTORY:]
        if mention.remove:
            if idx in canvas:
                del canvas[idx]
                changes.append(Change("remove", idx))
            continue
        old = canvas.get(idx)
        if old is None and mention.existing_only:
            continue
        if old is not None and not mention.has_changes():
            continue
        new = _apply(mention, idx, old, canvas)
        if new != old:
            canvas[idx] = new
            record(Change("place" if old is None else "update", idx))
        wearer = mention.relation[1].resolved if mention.relation is not None else None
        if mention.relation is not None and mention.relation[0] in _WORN_KINDS and wearer in canvas \
                and ca.is_human(wearer):
            worn.append((mention, idx, old, canvas[wearer]))
    for mention, idx, old, wearer in worn:
        # a worn or held thing stays on its person when the message moves or changes the person
        # after it ("jenny wears a cap, she is on the right")
        now = canvas.get(wearer.idx)
        if idx in canvas and now is not None and now != wearer:
            canvas[idx] = _apply(mention, idx, old, canvas)
            record(Change("place" if old is None else "update", idx))
    if not any(m.remove for m in mentions):
        # a landmark no piece was placed against ("holding a hot dog next to the table") is
        # still a piece the Teller named: draw it where it goes by default
        for mention in mentions:
            if mention.target_only and mention.resolved is None and not (mention.it or mention.pronoun):
                idx = _resolve(mention, canvas, allowed, history)
                mention.resolved = idx
                if idx is not None and idx not in canvas:
                    canvas[idx] = _apply(Mention(idxs=(idx,), text=mention.text), idx, None, canvas)
                    record(Change("place", idx))
    return canvas, tuple(history), changes


def _pronoun_means(mention: Mention, history: list[int], allowed: set[int]) -> int:
    """``he``/``she``: the last piece mentioned that the pronoun can mean (for ``he`` Mike or an
    animal, for ``she`` Jenny or an animal; only the person when the words are about a person:
    a pose, an expression, a body part), else the person it names."""
    person = mention.idxs[0]
    personal = mention.pose is not None or mention.expression is not None
    for idx in reversed(history):
        if idx == person:
            return idx
        if not personal and ca.get(idx).group == "animal" and idx in allowed:
            return idx
    return person


def _resolve(mention: Mention, canvas: dict[int, Piece], allowed: set[int], history,
             exclude: int | None = None) -> int | None:
    if not isinstance(history, list):
        history = _history(history)
    if mention.it:
        for idx in reversed(history):
            if idx in allowed and idx != exclude:
                return idx
        return None
    if mention.pronoun and mention.text in PRONOUNS:
        idx = _pronoun_means(mention, [i for i in history if i != exclude], allowed)
        return idx if idx in allowed else None
    options = [idx for idx in mention.idxs if idx in allowed]
    if not options:
        return None
    if len(options) == 1 or mention.pronoun:
        return options[0]
    introduced = mention.relation is not None and mention.relation[0] == "has"   # "she has glasses"
    if mention.target_only or mention.det == "known" or mention.remove or mention.move \
            or mention.det is None and mention.text in GENERIC and not introduced:
        # "the tree", "kid is on the left": the one already drawn, if one is
        on = [idx for idx in options if idx in canvas and idx != exclude]
        if on:
            return on[0]
        if mention.det is not None or mention.target_only or mention.remove or mention.move:
            return options[0]
    free = [idx for idx in options if idx not in canvas]
    return free[0] if free else options[0]


def _apply(mention: Mention, idx: int, old: Piece | None, canvas: dict[int, Piece]) -> Piece:
    """The piece ``idx`` after ``mention`` (``old``: the piece on the canvas, None if new)."""
    art = ca.get(idx)
    other = None
    if mention.relation is not None and mention.relation[1].resolved not in (None, idx):
        other = canvas.get(mention.relation[1].resolved)
    depth = old.depth if old is not None else DEFAULT_DEPTH
    if mention.size is not None:
        depth = mention.size
    elif old is None and other is not None and mention.relation[0] in ("head", "eyes", "hand", "feet", "has"):
        depth = other.depth                  # worn and held things take their person's size
    depth = min(2, max(0, depth + mention.size_rel))
    subtype = old.subtype if old is not None else 0
    if art.is_human and (mention.pose is not None or mention.expression is not None):
        pose = ca.pose_of(subtype) if mention.pose is None else mention.pose
        expression = ca.expression_of(subtype) if mention.expression is None else mention.expression
        subtype = ca.subtype_of(pose, expression)
    if not art.is_human:
        subtype = 0
    if old is not None:
        flip = old.flip
    else:
        flip = other.flip if other is not None and ca.is_human(other.idx) else 0
    if mention.flip_toggle and mention.flip is None:
        flip = 1 - flip if old is not None else 1
    if mention.flip is not None:
        flip = mention.flip
    width, height = ca.piece_size(idx, subtype, depth)

    x = None if old is None else float(old.x)
    y = None if old is None else float(old.y)
    if other is not None:
        x, y = _relate(mention.relation[0], idx, depth, flip, width, height, other)
        if mention.relation[0] in _BESIDE_KINDS:
            x, mention = _nudge(mention, x)         # "under the tree, a bit to the left"
    if old is not None and (mention.moves or _comparative(mention) or mention.move and not _absolute(mention)):
        x, y = _move(mention, x, y, width, height)
    else:
        x, y = _place_words(mention, art, x, y, width, height, depth)
        if mention.spread is not None and old is None and x is not None:
            k, count = mention.spread                # side by side, in the order named
            x += (k - (count - 1) / 2) * SPREAD_PX
    if y is None:
        y = _default_y(art, height, depth)
    if x is None:
        x = _free_x(canvas, idx, y)
    floor = _ground_floor(idx, depth)
    if floor is not None and not (other is not None and not ca.is_human(other.idx)
                                  and mention.relation[0] in ("on", "in")):
        # people and animals stand on the grass, large objects at least on the grass line
        # (unless on something: "sitting on the table", "a cat in the sandbox")
        y = max(y, floor - height / 2)
    if mention.face_to is not None and mention.face_to.resolved is not None:
        seen = canvas.get(mention.face_to.resolved)
        if seen is not None and seen.x != x:
            flip = (0 if seen.x > x else 1) ^ int(mention.face_away)
    if mention.each_other and art.is_human:
        seen = canvas.get(ca.JENNY if idx == ca.MIKE else ca.MIKE)
        if seen is not None and seen.x != x:
            flip = 0 if seen.x > x else 1
    # a piece the Teller had cut off by the edge stays cut off when it is moved or changed
    was_cut = old is not None and not _inside(old)
    x, y = _clamp(idx, depth, x, y, cut_off=_cut_off(mention) or was_cut, subtype=subtype)
    return Piece(idx=idx, x=x, y=y, depth=depth, flip=flip, subtype=subtype)


_WORN_KINDS = ("has", "head", "eyes", "hand", "feet")
_PAIR_KINDS = ("left_of", "right_of", "near", "above", "below", "front", "behind", "on", "in")
_BIRDS = (23, 24)                      # the duck and the owl may perch or fly
_BESIDE_KINDS = ("left_of", "right_of", "near", "above", "below", "front", "behind")


def _nudge(mention: Mention, x: float) -> tuple[float, Mention]:
    """``under the tree, a bit to the left``: after a place relative to another piece, a slight
    left/right (``a bit``, ``slightly``, ``a little``) shifts the piece by :data:`NUDGE_PX` from
    that place instead of naming a place on the canvas. Returns the x and the mention without
    those words."""
    rest = []
    for value, mods in mention.dirs:
        if value in ("left", "right") and "small" in mods and not mods & {"edge", "side", "more", "cutoff"}:
            x += -NUDGE_PX if value == "left" else NUDGE_PX
        else:
            rest.append((value, mods))
    if len(rest) == len(mention.dirs):
        return x, mention
    return x, replace(mention, dirs=rest)


def _back_bottom(idx: int, depth: int) -> float:
    """The bottom of a ground piece ``just below the horizon``: as high as it may stand (people
    and animals: their size's band; large objects: the grass line), else 12 px below the line."""
    floor = _ground_floor(idx, depth)
    return float(floor) if floor is not None else ca.HORIZON_Y + 12.0


def _ground_floor(idx: int, depth: int) -> float | None:
    """The highest a piece's bottom may be: people and (not flying) animals at their size's band
    of the grass, large objects (trees, slide, tent...) on the grass line; None: anywhere."""
    art = ca.get(idx)
    if art.is_human or art.group == "animal" and idx not in _BIRDS:
        return GROUND_MIN_BOTTOM[depth]
    if art.group == "large":
        return ca.HORIZON_Y + 4
    return None


def _free_x(canvas: dict[int, Piece], idx: int, y: float) -> float:
    """The middle, or the spot nearest to it that no piece at about that height holds."""
    for x in (W / 2, W / 2 - 110, W / 2 + 110, W / 2 - 190, W / 2 + 190):
        if all(abs(p.x - x) >= 60 or abs(p.y - y) >= 60 for i, p in canvas.items() if i != idx):
            return x
    return W / 2


def _inside(piece: Piece) -> bool:
    left, top, right, bottom = piece.box
    return left >= -0.5 and top >= -0.5 and right <= W + 0.5 and bottom <= H + 0.5


def _cut_off(mention: Mention) -> bool:
    """Whether the Teller asked for the piece to be cut off by the edge."""
    return any(value == "cutoff" or "cutoff" in mods for value, mods in mention.dirs)


def _comparative(mention: Mention) -> bool:
    """``more to the left``, ``further right``, ``up``, ``higher``, ``lower it``."""
    return any("more" in mods for _, mods in mention.dirs) or any(d in ("up", "down") for d, _ in mention.dirs)


def _absolute(mention: Mention) -> bool:
    """``move the tree to the left edge / the right side / the top left corner``: a place."""
    return any(mods & {"edge", "side"} for _, mods in mention.dirs) or bool(mention.distances) or \
        any(v in ("middle", "centre_left", "centre_right", "near_centre_left", "near_centre_right",
                  "horizon", "sky", "ground", "back") for v, _ in mention.dirs)


def _move(mention: Mention, x: float, y: float, width: float, height: float) -> tuple[float, float]:
    """A piece already drawn moved by direction words (a bit 15 px, 30 px, a lot 80 px) or by
    ``N inches``; distances from an edge still place it absolutely."""
    for value, mods in mention.dirs:
        degree = "small" if "small" in mods else "large" if mods & {"large", "edge"} else "normal"
        step = MOVE_PX[degree]
        if value == "left":
            x -= step
        elif value == "right":
            x += step
        elif value in ("up", "top"):
            y -= step
        elif value in ("down", "bottom"):
            y += step
    for value, amount, _ in mention.moves:
        step = amount * INCH_PX
        x += {"left": -step, "right": step}.get(value, 0.0)
        y += {"up": -step, "top": -step, "down": step, "bottom": step}.get(value, 0.0)
    return _distances(mention, x, y, width, height)


def _place_words(mention: Mention, art: ca.ClipArt, x, y, width: float, height: float, depth: int):
    """Absolute places: direction words, then distances (more precise) on top."""
    words = [value for value, _ in mention.dirs]
    mods_of: dict[str, set] = {}
    for value, mods in mention.dirs:
        mods_of.setdefault(value, set()).update(mods)
    sides = [v for v in ("left", "right") if v in words]
    ends = [v for v in ("top", "bottom") if v in words]
    sky = art.role == "sky"
    cutoff = "cutoff" in words or any("cutoff" in mods for mods in mods_of.values())
    corner = bool(sides and ends) and any("edge" in mods for mods in mods_of.values())
    if len(sides) == 1:
        mods = mods_of[sides[0]]
        if cutoff:
            x = width * 0.25
        elif "edge" in mods or corner:
            x = width / 2 + EDGE_GAP
        elif "small" in mods:
            x = CENTRE_SIDE_X
        else:
            x = max(width / 2 + EDGE_GAP + 8, SIDE_X)
        if sides[0] == "right":
            x = W - x
    elif "centre_left" in words:
        x = CENTRE_SIDE_X
    elif "centre_right" in words:
        x = W - CENTRE_SIDE_X
    elif "near_centre_left" in words:
        x = NEAR_CENTRE_X
    elif "near_centre_right" in words:
        x = W - NEAR_CENTRE_X
    elif "middle" in words:
        x = W / 2
    if len(ends) == 1:
        mods = mods_of[ends[0]]
        if cutoff and not sides:
            y = height * 0.25
        elif "edge" in mods or corner:
            y = height / 2 + EDGE_GAP
        else:
            y = height / 2 + 12
        if ends[0] == "bottom":
            y = H - y
    elif "mid_sky" in words:
        y = ca.HORIZON_Y / 2
    elif "middle" in words and sides:                   # "middle left": halfway down the side
        y = ca.HORIZON_Y / 2 if sky else H / 2
    elif "horizon" in words and sky or "back" in words and sky:   # a sky piece just above the grass
        y = ca.HORIZON_Y - height / 2
    elif "back" in words:                               # "just below the horizon": at the back
        y = _back_bottom(art.idx, depth) - height / 2   # of the grass
    elif "sky" in words:
        y = _default_y(art, height, depth) if sky else min(ca.HORIZON_Y - height / 2, 90.0)
    elif "ground" in words and (sky or y is None):
        y = GROUND_BOTTOM[depth] - height / 2
    return _distances(mention, x, y, width, height)


def _distances(mention: Mention, x, y, width: float, height: float):
    """``N in from the left`` puts the piece's near edge there; ``centered N in ...`` its centre."""
    for edge, amount in mention.distances:
        px = _on_canvas_inches(amount, W if edge in ("left", "right") else H) * INCH_PX
        half_w = 0.0 if mention.centered else width / 2
        half_h = 0.0 if mention.centered else height / 2
        if edge == "left":
            x = px + half_w
        elif edge == "right":
            x = W - px - half_w
        elif edge == "top":
            y = px + half_h
        elif edge == "bottom":
            y = H - px - half_h
    return x, y


def _on_canvas_inches(amount: float, extent: float) -> float:
    """A distance from an edge that would leave the canvas is read as a slip of the decimal
    point when that lands on it ("75 inches" on a 5.2-inch canvas: 0.75), else kept (and the piece
    is then held on the canvas)."""
    if amount * INCH_PX > extent and amount >= 10:
        for divisor in (10, 100):
            if amount / divisor * INCH_PX <= extent:
                return amount / divisor
    return amount


def _default_y(art: ca.ClipArt, height: float, depth: int) -> float:
    if art.role == "sky":
        return max(height / 2 + 15, 60.0)
    return GROUND_BOTTOM[depth] - height / 2


def _relate(kind: str, idx: int, depth: int, flip: int, width: float, height: float,
            other: Piece) -> tuple[float, float]:
    """Where a piece goes relative to ``other`` (a piece on the Drawer's canvas)."""
    role = ca.get(idx).role
    if ca.is_human(other.idx) and kind in ("head", "eyes", "hand", "feet", "on", "in", "has"):
        if kind in ("on", "in", "has"):
            kind = "head" if role == "hat" else "eyes" if role == "eyewear" else "hand"
        if kind == "head" and role == "eyewear":
            kind = "eyes"
        if kind == "eyes" and role == "hat":
            kind = "head"
        if kind == "feet":
            fx, _ = ca.anchor_point(other.idx, other.subtype, "foot_front", other.x, other.y,
                                    other.depth, other.flip)
            fx += width / 2 if ca.faces_right(other.flip) else -width / 2
            return fx, other.box[3] - height / 2
        anchor = {"head": "hat", "eyes": "eyes", "hand": "hand_front"}[kind]
        point = ca.anchor_point(other.idx, other.subtype, anchor, other.x, other.y, other.depth, other.flip)
        own = "wear" if kind in ("head", "eyes") else "hold"
        return ca.centre_for(idx, 0, own, point, depth, flip)
    left, top, right, bottom = other.box
    if kind in ("left_of", "right_of", "near", "has", "hand", "feet"):
        side = -1 if kind == "left_of" else 1
        if kind != "right_of" and kind != "left_of" and right + width + 5 > W:
            side = -1
        x = other.x + side * ((right - left) / 2 + width / 2 + 5)
        y = bottom - height / 2 if role != "sky" else other.y
        return x, y
    if kind == "above":
        return other.x, top - height / 2 - 2
    if kind == "below":
        return other.x, bottom + height / 2 + 2
    if kind == "front":
        return other.x, bottom + 15 - height / 2
    if kind == "behind":
        return other.x, bottom - 20 - height / 2
    if kind in ("on", "in", "head", "eyes"):                      # "on the table"
        return other.x, top + 0.25 * (bottom - top) - height / 2
    return other.x, other.y


def _clamp(idx: int, depth: int, x: float, y: float, *, cut_off: bool = False, subtype: int = 0
           ) -> tuple[int, int]:
    """Round like the dataset and keep the piece on the canvas: all of it (as far as it fits),
    or, when the Teller asked for it to be cut off by the edge, at least a quarter of it."""
    width, height = ca.piece_size(idx, subtype, depth)
    if cut_off:
        reach_x = min(REACH - 1, width / 4)
        reach_y = min(REACH - 1, height / 4)
        x = min(max(x, -reach_x), W + reach_x)
        y = min(max(y, -reach_y), H + reach_y)
        return int(round(x)), int(round(y))
    half_w, half_h = min(width, W) / 2, min(height, H) / 2
    x = min(max(x, half_w), W - half_w)
    y = min(max(y, half_h), H - half_h)
    xi, yi = int(round(x)), int(round(y))
    xi = min(max(xi, math.ceil(half_w)), W - math.ceil(half_w))
    yi = min(max(yi, math.ceil(half_h)), H - math.ceil(half_h))
    return xi, yi


# ----------------------------------------------------------------------------------- descriptions
def facing_words(flip: int) -> str:
    return "facing right" if ca.faces_right(flip) else "facing left"


def person_words(piece: Piece) -> str:
    return f"{POSE_PHRASES[piece.pose]}, {EXPRESSION_PHRASES[piece.expression]}"


def name_of(idx: int) -> str:
    return ca.get(idx).name


# where the rule Teller can say a piece is, in words (what :func:`interpret` reads back)
X_PHRASES = ("on the far left", "on the left", "left of center", "just left of center", "in the middle",
             "just right of center", "right of center", "on the right", "on the far right")
SKY_Y_PHRASES = ("at the very top", "at the top", "in the sky", "in the middle of the sky",
                 "just above the horizon")
GROUND_Y_PHRASES = ("just below the horizon", "", "near the bottom", "at the very bottom")
BESIDE_PHRASES = ("left of {}", "right of {}", "next to {}")           # at the same height
OVER_PHRASES = ("above {}", "under {}", "in front of {}", "behind {}")  # at the same x
NUDGE_PHRASES = ("", "a bit to the left", "a bit to the right")


def the_name(idx: int) -> str:
    """``Mike``, ``Jenny``, ``the oak tree``: a piece named as a landmark."""
    return name_of(idx) if ca.is_human(idx) else f"the {name_of(idx)}"


def y_phrases(piece: Piece) -> tuple[str, ...]:
    """The height words the rule Teller may use for ``piece`` ("" = its default height: sky
    pieces near the top, ground pieces standing on the grass at their size's band)."""
    art = ca.get(piece.idx)
    if art.role == "sky":
        return SKY_Y_PHRASES
    if art.is_human or art.group in ("animal", "large"):
        return GROUND_Y_PHRASES
    return tuple("on the grass" if p == "" else p for p in GROUND_Y_PHRASES)


def join_place(*parts: str) -> str:
    return ", ".join(p for p in parts if p)


@dataclass(frozen=True)
class Place:
    """A place the rule Teller may say: its words, how many extra phrases it has, and for a place
    relative to another piece the relation (``left_of``, ``right_of``, ``near``, ``above``,
    ``below``, ``front``, ``behind``) and that piece's idx."""

    words: str
    extra: int = 0
    relation: str | None = None
    landmark: int | None = None


_PHRASE_KINDS = {"left of {}": "left_of", "right of {}": "right_of", "next to {}": "near",
                 "above {}": "above", "under {}": "below", "in front of {}": "front", "behind {}": "behind"}


def place_phrases(piece: Piece, landmarks: list[Piece]) -> list[Place]:
    """Every place the rule Teller considers for ``piece``: a side and a height of the canvas
    (``on the left, near the bottom``), or a place next to, above, under, in front of or behind
    a piece already drawn (``right of the oak tree``, ``under the sun, a bit to the
    left``). No numbers, no units."""
    heights = y_phrases(piece)
    out = [Place(join_place(x, y), int(bool(y))) for x in X_PHRASES for y in heights]
    for other in landmarks:
        name = the_name(other.idx)
        for phrase in BESIDE_PHRASES:
            kind = _PHRASE_KINDS[phrase]
            out += [Place(join_place(phrase.format(name), y), 1 + int(bool(y)), kind, other.idx)
                    for y in heights]
        for phrase in OVER_PHRASES:
            if _sensible(phrase, piece.idx, other.idx):
                kind = _PHRASE_KINDS[phrase]
                out += [Place(join_place(phrase.format(name), nudge), 1 + int(bool(nudge)), kind, other.idx)
                        for nudge in NUDGE_PHRASES]
    return out


def relation_holds(kind: str, piece: Piece, other: Piece) -> bool:
    """Whether ``piece`` is where a relative place says it is against ``other``: left of / right
    of it, next to it (not overlapping it sideways), above / under its middle, in front of (its
    bottom lower) / behind it (its bottom higher)."""
    if kind == "left_of":
        return piece.x < other.x
    if kind == "right_of":
        return piece.x > other.x
    if kind == "near":
        return abs(piece.x - other.x) >= (piece.size[0] + other.size[0]) / 2 - 1
    if kind == "above":
        return piece.y < other.y
    if kind == "below":
        return piece.y > other.y
    if kind == "front":
        return piece.box[3] > other.box[3]
    if kind == "behind":
        return piece.box[3] < other.box[3]
    raise ValueError(f"unknown relation {kind!r}")


def _sensible(phrase: str, idx: int, other: int) -> bool:
    """Whether a person would say it: things above something are in the air (sky pieces, toys,
    the duck and the owl: not people, animals on the ground or trees); under a sky piece or a
    large object (not under Mike or a dog); in front of / behind only on the grass."""
    sky, other_sky = ca.get(idx).role == "sky", ca.get(other).role == "sky"
    if phrase.startswith("above"):
        return _ground_floor(idx, 0) is None
    if phrase.startswith("under"):
        return not sky and (other_sky or ca.get(other).group == "large")
    return not sky and not other_sky


def describe(piece: Piece, place: str) -> str:
    """The rule Teller's description of a piece at a place said in words: size, name, place,
    Mike's or Jenny's pose and expression, facing; e.g. ``medium Mike on the left, near the
    bottom, kicking, big smile, facing left`` or ``small dog right of the oak tree, facing
    right``."""
    text = f"{SIZE_NAMES[piece.depth]} {name_of(piece.idx)} {place}"
    if piece.is_human:
        text += f", {person_words(piece)}"
    return f"{text}, {facing_words(piece.flip)}"


def attached_place(person: Piece, part: str) -> str:
    """``on Mike's head``, ``on Jenny's face``, ``in Mike's hand``, ``at Jenny's feet``."""
    return {"head": "on {}'s head", "eyes": "on {}'s face", "hand": "in {}'s hand",
            "feet": "at {}'s feet"}[part].format(name_of(person.idx))


def describe_attached(piece: Piece, person: Piece, part: str) -> str:
    """``small crown on Mike's head, facing right`` / ``... in Jenny's hand`` / ``on Mike's face``."""
    return f"{SIZE_NAMES[piece.depth]} {name_of(piece.idx)} {attached_place(person, part)}, " \
           f"{facing_words(piece.flip)}"


def missed(description: str) -> str:
    """The rule Teller's correction for a piece the Drawer did not draw."""
    text = f"you missed the {description}"
    return text if len(text) <= 140 else description


def describe_fix(goal: Piece, drawn: Piece, place: str) -> str:
    """The rule Teller's correction for a piece drawn unlike it meant: only what is wrong, e.g.
    ``the dog should be left of the oak tree, small, facing left`` or ``Mike should be sitting,
    sad`` (the place first, so that a relation reads as the piece's)."""
    parts = []
    if math.dist((goal.x, goal.y), (drawn.x, drawn.y)) > FIX_DISTANCE_PX:
        parts.append(place)
    if goal.depth != drawn.depth:
        parts.append(SIZE_NAMES[goal.depth])
    if goal.is_human and goal.pose != drawn.pose:
        parts.append(POSE_PHRASES[goal.pose])
    if goal.is_human and goal.expression != drawn.expression:
        parts.append(EXPRESSION_PHRASES[goal.expression])
    if goal.flip != drawn.flip:
        parts.append(facing_words(goal.flip))
    if not parts:
        parts.append(place)
    text = f"{the_name(goal.idx)} should be {', '.join(parts)}"
    return text[0].upper() + text[1:] if ca.is_human(goal.idx) else text


def describe_removal(idx: int) -> str:
    return f"there is no {name_of(idx)}, please remove it"


def relate_point(part: str, piece: Piece, person: Piece) -> tuple[int, int]:
    """Where :func:`interpret` puts ``piece`` (its depth and flip) described as attached to
    ``person`` by ``part``."""
    width, height = ca.piece_size(piece.idx, piece.subtype, piece.depth)
    x, y = _relate(part, piece.idx, piece.depth, piece.flip, width, height, person)
    return _clamp(piece.idx, piece.depth, x, y, subtype=piece.subtype)


def clamp(idx: int, depth: int, x: float, y: float, *, subtype: int = 0, cut_off: bool = False
          ) -> tuple[int, int]:
    return _clamp(idx, depth, x, y, subtype=subtype, cut_off=cut_off)


def attached_part(idx: int) -> str | None:
    """How a piece can be described as attached to a person (None: it cannot)."""
    role = ca.get(idx).role
    return {"hat": "head", "eyewear": "eyes", "held": "hand"}.get(role)


def summary(changes: list[Change], canvas: dict[int, Piece]) -> str:
    """The Drawer's short reply about what it did (at most 140 characters)."""
    if not changes:
        return ""
    verbs = {"place": "added", "update": "changed", "remove": "removed"}
    parts: list[str] = []
    for op in ("place", "update", "remove"):
        names = [name_of(c.idx) if ca.is_human(c.idx) else f"the {name_of(c.idx)}"
                 for c in changes if c.op == op]
        if names:
            parts.append(f"{verbs[op]} {', '.join(dict.fromkeys(names))}")
    text = "ok, " + "; ".join(parts)
    return text if len(text) <= 140 else text[:137] + "..."
