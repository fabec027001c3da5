"""ALICE: an answerer grounded in a CLEVR scene graph, for GuessWhich and visual-dialog chat.

GuessWhich (Chattopadhyay et al. 2017, ``seeds/001_*``) calls its answerer bot ALICE. Ours reads
free-form English questions about CLEVR scenes, turns them into small programs over the scene graph
(CLEVR-Dialog's primitives, ``seeds/002_*``: Filter, Count, Exist, Relate, Unique, seek an
attribute, plus comparisons of counts and sizes and universal questions) and answers from the
graph, so with perfect perception it is exact. Coreference ("it", "that one", "the earlier cube",
"what about the blue one?", "how about to its left?", "they" = the last plural set asked about) is
resolved from the dialog history, replayed on every call (agents are stateless).

Questions as people type them: spelling slips are corrected with SymSpell (symspellpy) over the
parser's own vocabulary, contractions may lack their apostrophe ("whats"), texting shorthand is
spelled out ("r", "u"), relative clauses ("the cube that is small") and comparatives ("more
spheres than cubes?", "bigger than", "further left than") are understood.

When it cannot parse a question it says "I can't tell."; questions about things outside the scene
world (people, weather, dogs...) get "That's outside what I can see."; a definite description that
fits several objects gets "There are two spheres; which one do you mean?" (never an answer about
one of them picked silently); one that fits none gets "I don't see ...". Like VisDial's people,
it prefers saying so to guessing.

Imperfect versions (to compare two ALICEs as the GuessWhich paper does):

* ``error_rate``: with this probability per round (a ``random.Random`` seeded by
  (seed, scene, round), so replays are identical) a factual answer is replaced by a wrong one of
  the same type (yes<->no, count +-1, another color, ...). Refusals are never corrupted.
* ``confusions``: weaker perception, e.g. ``{"color": {"cyan": "blue"}}``: ALICE sees the scene
  with those attribute values replaced, and answers consistently about what it sees.

Public API
==========
``parse_question(text) -> tuple``            the program (a "frame"); cached, scene-independent
``execute(frame, scene, discourse) -> Answer`` the exact answer in ``scene`` given the dialog so far
``Discourse.start(scene, caption)``, ``discourse.after(frame, answer)`` the dialog's memory
``replay(scene, caption, questions) -> Discourse``
``Alice(name, error_rate=0.0, confusions=None, seed=0)`` with ``respond(scene, question, history,
caption, round_index) -> Answer`` and ``act(view) -> action | None`` (the answerer seat)
``ALICE_VERSIONS``: the named versions; ``make_alice(name)``.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from symspellpy import SymSpell, Verbosity

from clevr import captions as cg
from clevr.captions import (CATEGORY_OF, COLORS, MATERIALS, NP_ORDER, REL_PHRASE,
                                  SHAPES, SIZES, VALUES)

CANT_TELL = "I can't tell."
OUTSIDE = "That's outside what I can see."
SOCIAL = "Ask me anything about the objects in the picture."
# A message that is only a greeting or thanks: answered kindly, not refused as out of scope.
_SOCIAL = re.compile(r"^(?:(?:hi|hello|hey|hiya|thanks|thank you|thx|ty|ok|okay|k|cool|great|nice|bye|goodbye|"
                     r"good|good job|well done|lol|hmm+|yes|no|sure|alright|alice|there|so much|a lot|again)"
                     r"[\s,.!?:)(-]*)+$")
OPP = cg.OPPOSITE

# --------------------------------------------------------------------------------------------
# Lexicon
# --------------------------------------------------------------------------------------------
_WORD_MAP = {
    "grey": "gray", "colour": "color", "colours": "colors", "coloured": "colored",
    "ball": "sphere", "balls": "spheres", "orb": "sphere", "orbs": "spheres",
    "block": "cube", "blocks": "cubes", "box": "cube", "boxes": "cubes", "cuboid": "cube",
    "cuboids": "cubes", "cylindrical": "cylinder", "spherical": "sphere", "cubic": "cube",
    "big": "large", "huge": "large", "bigger": "large", "larger": "large",
    "tiny": "small", "little": "small", "smaller": "small", "biggest": "large", "largest": "large",
    "smallest": "small", "tiniest": "small",
    "shiny": "metal", "metallic": "metal", "metalic": "metal", "reflective": "metal", "glossy": "metal",
    "matte": "rubber", "matt": "rubber", "rubbery": "rubber", "dull": "rubber", "plastic": "rubber",
    "item": "thing", "items": "things", "stuff": "things",
    "leftmost": "leftmost", "rightmost": "rightmost", "frontmost": "frontmost", "foremost": "frontmost",
    "rearmost": "rearmost", "backmost": "rearmost", "hindmost": "rearmost", "farthest": "furthest",
    "back": "back", "rear": "back",
}
SHAPE_WORDS = {s: (s, False) for s in SHAPES} | {s + "s": (s, True) for s in SHAPES}
GENERIC_WORDS = {"thing": False, "things": True, "object": False, "objects": True, "one": False,
                 "ones": True, "shapes": True}
ATTR_NAMES = {"color": "color", "colors": "color", "shape": "shape", "shapes": "shape", "size": "size", "sizes": "size",
              "material": "material", "materials": "material", "colored": "color"}
EXTREME_WORDS = {"leftmost": "left", "rightmost": "right", "frontmost": "front", "rearmost": "behind"}
QUANTIFIED = {"anything": False, "something": False, "everything": True, "nothing": False,
              "anyone": False}
DEFINITE_DETS = {"the", "that", "this", "those", "these"}
ANAPHORIC_DETS = {"that", "this", "those", "these"}
ANAPHORIC_MODS = {"earlier", "previous", "same", "aforementioned", "mentioned", "former", "first",
                  "last", "above"}
COPULAS = {"is", "are", "was", "were"}
YESNO_START = {"is", "are", "was", "were", "does", "do", "did", "can", "could", "has", "have"}
IGNORABLE = {
    "the", "a", "an", "is", "are", "was", "were", "there", "in", "on", "image", "picture", "scene",
    "photo", "view", "pic", "shot", "frame", "do", "you", "see", "can", "could", "does", "have", "has",
    "contain", "contains", "show", "shows", "of", "total", "all", "altogether", "here", "visible",
    "present", "exist", "exists", "please", "any", "some", "be", "appear", "appears", "look", "looks",
    "seem", "seems", "located", "sitting", "standing", "placed", "lying", "that", "which", "currently",
    "actually", "really", "overall", "at", "i", "me", "tell", "know", "count", "number", "to", "also",
    "too", "made", "from", "with", "kind", "type", "sort", "like", "exactly", "now", "in", "shown",
    "not", "either", "just", "it", "its", "about", "how", "many", "much", "what", "there's", "around",
    "altogether", "whole", "entire", "each", "every", "so", "well", "ok", "okay", "then", "still",
    "anymore", "again", "did", "would", "should", "be", "being", "been", "am", "totally", "colored",
    "them", "they", "their", "color", "we", "us", "get", "got", "both",
}
# Words that are certainly about something outside the CLEVR world.
OUTSIDE_WORDS = {
    "person", "people", "man", "men", "woman", "women", "boy", "girl", "child", "kid", "kids", "dog",
    "dogs", "cat", "cats", "animal", "animals", "car", "cars", "tree", "trees", "sky", "weather",
    "sunny", "rain", "raining", "cloud", "clouds", "time", "day", "night", "food", "text", "words",
    "letters", "wall", "walls", "window", "building", "water", "grass", "house", "table", "room",
    "indoors", "outdoors", "outside", "inside", "background", "floor", "ground", "light", "lights",
    "shadow", "shadows", "camera", "photographer", "photographed", "taken", "painting", "sun",
    "bird", "birds", "horse", "dogs", "who", "why", "when", "emotion", "happy", "sad", "weight",
    "heavy", "price", "cost", "name", "names", "old", "age", "smell", "taste", "sound", "temperature",
    "hot", "cold", "moving", "flying", "spinning", "alive", "eat", "eating", "float", "floating",
    "glass", "wood", "wooden", "stone", "paper", "gold", "silver", "orange", "pink", "black", "white",
    "triangle", "triangles", "pyramid", "pyramids", "cone", "cones", "star", "stars", "torus",
    "square", "circle", "circles", "rectangle", "heart",
}
_CONTENT_LEXICON = sorted(set(
    list(COLORS) + list(SHAPES) + [s + "s" for s in SHAPES] + list(SIZES) + list(MATERIALS)
    + list(ATTR_NAMES) + list(EXTREME_WORDS) + ["left", "right", "front", "behind", "things", "objects",
                                                "thing", "object", "metallic", "shiny", "spheres",
                                                "sphere", "cylinder", "cylinders"]
    + [k for k in _WORD_MAP if len(k) >= 4]
))
_KNOWN = (set(_WORD_MAP) | set(SHAPE_WORDS) | set(GENERIC_WORDS) | set(ATTR_NAMES) | set(EXTREME_WORDS)
          | set(QUANTIFIED) | set(CATEGORY_OF) | IGNORABLE | ANAPHORIC_MODS | DEFINITE_DETS | COPULAS
          | YESNO_START | set(cg.NUMBER_WORDS) | {
              "left", "right", "front", "behind", "back", "side", "hand", "other", "else", "another",
              "than", "more", "fewer", "less", "least", "most", "only", "single", "same", "share",
              "shares", "sharing", "as", "or", "and", "if", "what", "which", "where", "how", "many",
              "describe", "tell", "furthest", "nearest", "closest", "far", "besides", "except",
              "apart", "excluding", "aside", "among", "of", "them", "those", "these", "they", "it",
              "its", "their", "one", "ones", "no", "yes", "multiple", "several", "between",
              "position", "positioned", "towards", "toward", "next", "away", "up", "but", "does",
              "anything", "nothing", "something", "everything", "both", "none", "any", "all", "non",
              "different", "differ"})


@dataclass(frozen=True)
class Ref:
    """A noun phrase (or a set description for count/exist). ``attrs`` holds
    ``(category, (values...))`` pairs; an object must have one of the values in every category."""

    attrs: tuple = ()
    plural: bool = False
    definite: bool = False
    anaphoric: bool = False
    pronoun: str | None = None        # "it" | "they"
    other: bool = False
    extreme: str | None = None
    rel: tuple | None = None          # (direction, Ref | None)
    same: tuple | None = None         # (category, Ref)
    group: bool = False               # "of them" / "among them"
    quant: tuple | None = None        # ("eq" | "gt" | "ge" | "lt" | "le", n)
    excluding: "Ref | None" = None    # "other than the cube"
    one: bool = False                 # head noun was "one" ("the blue one")
    everything: bool = False          # "all" / "every"
    fallback: tuple = ()              # attrs to add if the reference alone fits none or several
    immediate: bool = False           # "the thing immediately/directly to its left": the nearest one

    def attr_dict(self) -> dict:
        return {c: set(v) for c, v in self.attrs}

    @property
    def is_reference(self) -> bool:
        """Refers to particular objects (pronoun or definite description)."""
        return self.pronoun is not None or self.definite


def _with_attrs(ref: Ref, attrs: dict) -> Ref:
    return replace(ref, attrs=tuple((c, tuple(sorted(attrs[c]))) for c in NP_ORDER if attrs.get(c)))


IT = Ref(pronoun="it", definite=True)
THEY = Ref(pronoun="they", definite=True, plural=True)


class _NoParse(Exception):
    def __init__(self, word: str | None = None):
        super().__init__(word)
        self.word = word


# --------------------------------------------------------------------------------------------
# Normalisation
# --------------------------------------------------------------------------------------------
_CONTRACTIONS = [
    (r"\bwhat's\b", "what is"), (r"\bwhere's\b", "where is"), (r"\bhow's\b", "how is"),
    (r"\bthere's\b", "there is"), (r"\bit's\b", "it is"), (r"\bthat's\b", "that is"),
    (r"\bwhich's\b", "which is"), (r"\bcan't\b", "can not"), (r"\bcannot\b", "can not"),
    (r"\bwon't\b", "will not"), (r"n't\b", " not"), (r"\blet's\b", "let us"), (r"'re\b", " are"),
    (r"'ve\b", " have"), (r"'ll\b", " will"), (r"'d\b", " would"), (r"'m\b", " am"),

]
# The same contractions typed without the apostrophe ("whats", "isnt"); never "its", "well", "were".
_BARE_CONTRACTIONS = [
    (r"\b(what|where|how|there|that|who|which|here)s\b", r"\1 is"), (r"\bwont\b", "will not"),
    (r"\bcant\b", "can not"), (r"\b(is|are|was|were|do|does|did|could|has|have|had|would|should)nt\b", r"\1 not"),
]
# Texting shorthand, expanded before spelling correction (one- and two-letter words cannot be
# corrected by edit distance: "r" is as close to "a" as to "are").
SHORTHAND = {"r": "are", "u": "you", "ur": "your", "n": "and", "pls": "please", "plz": "please",
             "thx": "thanks", "k": "ok", "obj": "object", "objs": "objects", "w": "with", "b4": "before",
             "wht": "what", "hw": "how", "nd": "and", "bc": "because", "cuz": "because", "y": "why",
             "wat": "what", "wut": "what", "wats": "what is", "wuts": "what is", "smth": "something",
             "sth": "something", "tho": "though", "abt": "about", "btw": "by the way"}
_PHRASES = [
    # comparatives of position become relations: "further left than X" = "left of X"
    (r"\b(?:further|farther|more) (?:to (?:the )?)?(left|right)(?: side)? than\b", r"\1 of"),
    (r"\b(?:closer|nearer)(?: to (?:the )?(?:camera|viewer|us|you|me))? than\b", "in front of"),
    (r"\b(?:further|farther) (?:away|back)(?: from (?:the )?(?:camera|viewer|us|you|me))? than\b", "behind"),
    (r"\b(?:further|farther|more) (?:to the )?(?:front|forward) than\b", "in front of"),
    (r"\bmade out of\b", "made of"), (r"\bwhich side (?:is|are) (.+?) on\b", r"where is \1"),
    (r"\b(is|are) (.+?) on the (?:left|right) or (?:on )?(?:the )?(?:left|right)(?: side)?$", r"where is \2"),
    (r"\b(?:behind|in back of) (?:everything|all the others|all the other things|all others)\b", "rearmost"),
    (r"\bin front of (?:everything|all the others|all the other things|all others)\b", "frontmost"),
    (r"\b(?:in|at) the (?:back|rear)\b(?! of)", "at back"),
    (r"\b(left|right|front|back|rear|behind) most\b", r"\1most"),
    (r"\bmost (left|right)\b", r"\1most"), (r"\bbackmost\b", "rearmost"), (r"\bbehindmost\b", "rearmost"),
    (r"\brearmost\b", "rearmost"), (r"\bfarthest\b", "furthest"), (r"\bfurther\b", "furthest"),
    (r"\b(?:the )?(?:(?:furthest|far|most|extreme) (?:to )?(?:the )?|far )left\b", "leftmost"),
    (r"\b(?:the )?(?:(?:furthest|far|most|extreme) (?:to )?(?:the )?|far )right\b", "rightmost"),
    (r"\b(?:closest|nearest) to (?:the )?(?:camera|viewer|us|you|me)\b", "frontmost"),
    (r"\b(?:furthest|most far) (?:away )?from (?:the )?(?:camera|viewer|us|you|me)\b", "rearmost"),
    (r"\bfurthest (?:away|back)\b", "rearmost"), (r"\bclosest\b(?! to)", "frontmost"),
    (r"\bnearest\b(?! to)", "frontmost"), (r"\bfurthest\b(?! to)", "rearmost"),
    (r"\b(?:on|at|to|in) (?:the )?(?:very |extreme )?leftmost(?: side| edge)?\b", "leftmost"),
    (r"\b(?:on|at|to|in) (?:the )?(?:very |extreme )?rightmost(?: side| edge)?\b", "rightmost"),
    (r"\bin back of\b", "behind"), (r"\bat the back of\b", "behind"), (r"\bin the back of\b", "behind"),
    (r"\bbehind of\b", "behind"), (r"\bfront of\b", "front of"), (r"\bin the front of\b", "in front of"),
    (r"\bon top of\b", "above"), (r"\b(?:in|at) the front\b", "in front"), (r"\bhow large\b", "how big"), (r"\bhow small\b", "how big"),
    (r"\bwhat sort of\b", "what kind of"), (r"\bwhat type of\b", "what kind of"),
    (r"\bwhich kind of\b", "what kind of"), (r"\bwhich type of\b", "what kind of"),
]
_FILLER = re.compile(
    r"^(?:(?:ok(?:ay)?|so|and so|alright|well|hmm+|um+|uh+|erm*|hi|hello|hey|thanks|thank you|great|cool|"
    r"nice|good|please|now|next|alice|yes|no|lol|oh|ah|also|then|one more|another one)[ ,]+)+"
)
_ASK_PREFIX = re.compile(
    r"^(?:(?:can|could|would|will) you (?:please )?(?=tell|say|let|describe)|please )?"
    r"(?:(?:tell me|say|let me know|do you know|i (?:want|would like|d like) to know|i wonder|"
    r"can i ask|may i ask)\s+(?:if |whether )?(?=(?:if|whether|what|which|how|where|is|are|do|does|"
    r"can|could|there)\b))?"
)


# Spelling: SymSpell (symspellpy) over the parser's own vocabulary. Scene words (colors, shapes,
# sizes, materials, directions, attribute names) weigh most, so a slip between a scene word and a
# function word goes to the scene word; out-of-world words are in the vocabulary too, so "persn"
# is still refused as outside the scene, not read as something else.
_SPELL_COUNTS = (
    (list(CATEGORY_OF) + [x + "s" for x in SHAPES] + ["color", "shape", "size", "material", "left", "right",
                                                      "front", "behind", "things", "objects"], 2000),
    (_CONTENT_LEXICON, 1000),
    (sorted(set(_WORD_MAP) | set(SHAPE_WORDS) | set(GENERIC_WORDS) | set(EXTREME_WORDS)), 500),
    (sorted(_KNOWN | {"everything", "anything", "something", "nothing", "number", "common", "numerous",
                      "outnumber", "greater", "fewer", "equal", "than", "each", "other", "immediately",
                      "directly", "nearest", "closest", "bigger", "larger", "smaller", "larger",
                      "biggest", "largest", "smallest", "who", "having", "contains", "please", "further",
                      "farther", "closer", "nearer", "amount", "majority", "frequent",
                      "thanks", "because"}), 100),
    (sorted(OUTSIDE_WORDS), 50),
)


# Short function words are not correction targets ("hat" must not become "that", nor "toy" "to",
# "cup" "up"): an unknown noun stays unknown and is refused as outside the scene. These few short
# words are worth reaching ("teh" -> "the", "aer" -> "are").
_SHORT_TARGETS = {"the", "how", "are"}
_NOT_TARGETS = {"that", "this", "was", "were", "two", "one", "six", "ten", "them", "then", "they", "than"}


def _make_speller() -> SymSpell:
    speller = SymSpell(max_dictionary_edit_distance=2, prefix_length=7)
    seen: set[str] = set()
    for words, count in _SPELL_COUNTS:   # a word keeps the count of its first (highest) tier
        for w in words:
            if count < 1000 and ((len(w) <= 3 and w not in _SHORT_TARGETS) or w in _NOT_TARGETS):
                continue
            if w.isalpha() and len(w) >= 2 and w not in seen:
                seen.add(w)
                speller.create_dictionary_entry(w, count)
    return speller


_SPELLER = _make_speller()


@lru_cache(maxsize=16384)
def _fuzzy(word: str) -> str:
    """``word`` with a spelling slip corrected against the vocabulary (one edit for words of 3-5
    letters, two for longer ones; Damerau-Levenshtein, so a swap of two letters is one edit; the
    first letter kept; the closest word, then the most weighted), or
    split when two known words were run together ("howmany"); unchanged when nothing is close."""
    if word in _KNOWN or word in OUTSIDE_WORDS or word.isdigit() or len(word) < 3 or not word.isalpha():
        return word
    max_d = 1 if len(word) <= 5 else 2
    # people rarely slip on the first letter: keeping it stops "hat" becoming "what", "cup" "up"
    hits = [h for h in _SPELLER.lookup(word, Verbosity.ALL, max_edit_distance=max_d) if h.term[0] == word[0]]
    if hits:
        return min(hits, key=lambda h: (h.distance, -h.count, h.term)).term
    if len(word) >= 6:
        seg = _SPELLER.word_segmentation(word, max_edit_distance=0)
        parts = seg.corrected_string.split()
        if len(parts) > 1 and all(w in _KNOWN or w in _CONTENT_LEXICON for w in parts):
            return " ".join(parts)
    return word


def tokenize(text: str, correct: bool = True) -> list[str]:
    """Lower-case words with contractions expanded (with or without the apostrophe), texting
    shorthand spelled out, spelling slips corrected against the parser's vocabulary (SymSpell),
    synonyms mapped to the lexicon, and a few multi-word phrases joined."""
    t = text.lower().replace("\u2019", "'").replace("\u2018", "'")
    t = re.sub(r"(\w)-(\w)", r"\1 \2", t)
    for pat, rep in _CONTRACTIONS:
        t = re.sub(pat, rep, t)
    t = re.sub(r"(\w)'s\b", r"\1 's", t)
    t = re.sub(r"[^a-z0-9,' ]+", " ", t)
    words = [SHORTHAND.get(w, w) for w in re.findall(r"[a-z]+|\d+|,|'s", t)]
    t = " ".join(words)
    for pat, rep in _BARE_CONTRACTIONS:
        t = re.sub(pat, rep, t)
    if correct:
        t = " ".join(_fuzzy(w) if w not in (",", "'s") else w for w in t.split())
    t = " ".join(_WORD_MAP.get(w, w) for w in t.split())
    for pat, rep in _PHRASES:
        t = re.sub(pat, rep, t)
    t = _FILLER.sub("", t.strip(" ,"))
    t = _ASK_PREFIX.sub("", t)
    return [w for w in t.split() if w]


# --------------------------------------------------------------------------------------------
# Parser: tokens -> frame
# --------------------------------------------------------------------------------------------
class _P:
    def __init__(self, toks: list[str]):
        self.t = toks
        self.i = 0
        self.immediate = False    # set by _parse_rel: the last relation said "immediately"/"directly"

    def peek(self, k: int = 0) -> str | None:
        j = self.i + k
        return self.t[j] if 0 <= j < len(self.t) else None

    def at(self, *words) -> bool:
        return all(self.peek(k) == w for k, w in enumerate(words))

    def eat(self, *words) -> bool:
        if self.at(*words):
            self.i += len(words)
            return True
        return False

    def eat_one(self, options) -> str | None:
        w = self.peek()
        if w is not None and w in options:
            self.i += 1
            return w
        return None

    def done(self) -> bool:
        return self.i >= len(self.t)

    def rest(self) -> list[str]:
        return self.t[self.i:]


def _attr_word(w: str | None) -> tuple[str, str] | None:
    if w in CATEGORY_OF and CATEGORY_OF[w] != "shape":
        return CATEGORY_OF[w], w
    return None


def _number(p: _P) -> int | None:
    w = p.peek()
    if w is None:
        return None
    n = cg.parse_number(w)
    if n is not None:
        p.i += 1
    return n


def _relative_clause(p: _P, attrs: dict, kw: dict, leave_last: bool = False) -> bool:
    """A relative clause of attributes after the head noun: "(that|which) (is|are) [not] [a] small
    [and] red", "that is a cube", "which is made of metal". Relations and "the same X as" in a
    relative clause are read by _parse_rel / _parse_same. A negated clause excludes the objects
    that have the attributes. Returns False (nothing consumed) when there is no such clause."""
    if p.peek() not in ("that", "which", "who") or p.peek(1) not in ("is", "are"):
        return False
    start = p.i
    p.i += 2
    neg = p.eat("not")
    got: dict[str, set] = {}
    singles: list[tuple[int, str, str]] = []   # (position, category, value) of one-word attributes
    while not p.done():
        w = p.peek()
        if _attr_word(w):
            c, v = _attr_word(w)
            got.setdefault(c, set()).add(v)
            singles.append((p.i, c, v))
            p.i += 1
        elif w in SHAPE_WORDS:
            got.setdefault("shape", set()).add(SHAPE_WORDS[w][0])
            p.i += 1
        elif p.at("made", "of") and _attr_word(p.peek(2)) and _attr_word(p.peek(2))[0] == "material":
            got.setdefault("material", set()).add(p.peek(2))
            p.i += 3
        elif w in ("a", "an", "and", "colored", "in", "color", "size", "sized") and got or w in ("a", "an"):
            p.i += 1
        else:
            break
    if leave_last and p.done() and len(singles) >= 2 and singles[-1][0] == p.i - 1:
        # "is the sphere that is small yellow?": "yellow" is what is asked
        pos, c, v = singles[-1]
        got[c].discard(v)
        if not got[c]:
            del got[c]
        p.i = pos
    if not got:
        p.i = start
        return False
    if neg:
        kw["excluding"] = _with_attrs(Ref(plural=True), got)
    else:
        for c, v in got.items():
            attrs.setdefault(c, set()).update(v)
    return True


def _parse_np(p: _P, *, allow_rel: bool = True, allow_pronoun: bool = True, greedy: bool = True,
              leave_last: bool = False, allow_same: bool = True) -> Ref | None:
    """[det] [other|earlier...] [extreme] [adjectives] [noun] [made of M] [relative clause] [relation].
    ``greedy=False`` leaves "made of M" and relative clauses of attributes to the predicate (for
    "is the big thing made of metal?")."""
    start = p.i
    if allow_pronoun:
        if p.eat("it") or p.eat("that", "one") or p.eat("this", "one") or p.eat("the", "same", "one"):
            return IT
        if p.eat_one({"they", "them"}):
            return THEY
        if p.peek() in ("that", "this", "those", "these"):
            j = 1
            while _attr_word(p.peek(j)) or p.peek(j) in EXTREME_WORDS or p.peek(j) in ANAPHORIC_MODS \
                    or p.peek(j) in ("other", "or"):
                j += 1
            if p.peek(j) not in SHAPE_WORDS and p.peek(j) not in GENERIC_WORDS:
                word = p.peek()
                p.i += 1
                return IT if word in ("that", "this") else THEY
    attrs: dict[str, set] = {}
    kw: dict[str, Any] = {}
    det = None
    if (p.at("both") and (p.peek(1) in SHAPE_WORDS or p.peek(1) in GENERIC_WORDS or _attr_word(p.peek(1))
                          or p.peek(1) == "the")):
        p.eat("both", "the") or p.eat("both")
        det = "the"
        kw["plural"] = True
        kw["definite"] = True
    elif p.eat("all", "the") or p.eat("all", "of", "the") or p.eat("every") or \
            (p.at("all") and (p.peek(1) in SHAPE_WORDS or p.peek(1) in GENERIC_WORDS or _attr_word(p.peek(1)))
             and p.eat("all")):
        det = "the"
        kw["everything"] = True
        kw["plural"] = True
    else:
        det = p.eat_one({"the", "a", "an", "any", "some", "that", "this", "those", "these", "another"})
    if det in DEFINITE_DETS:
        kw["definite"] = True
    if det in ANAPHORIC_DETS:
        kw["anaphoric"] = True
    if det in ("those", "these"):
        kw["plural"] = True
    if det == "another":
        kw["other"] = True
    head = False
    q = p.eat_one(QUANTIFIED)
    if q:
        head = True
        if q == "everything":
            kw["everything"] = True
    else:
        n = _number(p) if det is None else None
        if n is not None:
            kw["quant"] = ("eq", n)
        elif det in ("the", "those", "these") and cg.parse_number(p.peek() or "") and \
                (p.peek(1) in SHAPE_WORDS or p.peek(1) in GENERIC_WORDS or _attr_word(p.peek(1))):
            p.i += 1                    # "the two spheres": the spheres
            kw["plural"] = True
        while not p.done():
            w = p.peek()
            if w in ("other", "else"):
                kw["other"] = True
            elif w in ANAPHORIC_MODS and det in DEFINITE_DETS:
                kw["anaphoric"] = True
            elif w in EXTREME_WORDS:
                kw["extreme"] = EXTREME_WORDS[w]
            elif _attr_word(w):
                c, v = _attr_word(w)
                attrs.setdefault(c, set()).add(v)
            elif w == "or" and attrs and (_attr_word(p.peek(1)) or p.peek(1) in SHAPE_WORDS):
                pass
            else:
                break
            p.i += 1
        w = p.peek()
        if w in SHAPE_WORDS:
            shape, plural = SHAPE_WORDS[w]
            attrs.setdefault("shape", set()).add(shape)
            p.i += 1
            while p.at("or") and p.peek(1) in SHAPE_WORDS:
                attrs["shape"].add(SHAPE_WORDS[p.peek(1)][0])
                plural = plural or SHAPE_WORDS[p.peek(1)][1]
                p.i += 2
            kw["plural"] = kw.get("plural", False) or plural
            head = True
        elif w in GENERIC_WORDS:
            kw["plural"] = kw.get("plural", False) or GENERIC_WORDS[w]
            kw["one"] = w in ("one", "ones")
            p.i += 1
            head = True
        elif w in OUTSIDE_WORDS and (det or attrs):
            raise _NoParse(w)
        elif w is not None and w not in _KNOWN and (det or attrs) and not w.isdigit():
            raise _NoParse(w)
    if p.i == start:
        return None
    if not head and not attrs and not kw.get("extreme") and not kw.get("other"):
        p.i = start
        return None
    # post-modifiers
    while True:
        if p.peek() in EXTREME_WORDS and head:  # "the object furthest to the right"
            kw["extreme"] = EXTREME_WORDS[p.peek()]
            p.i += 1
            continue
        if greedy and p.at("made", "of") and _attr_word(p.peek(2)) and _attr_word(p.peek(2))[0] == "material":
            attrs.setdefault("material", set()).add(p.peek(2))
            p.i += 3
            continue
        if greedy and head and _relative_clause(p, attrs, kw, leave_last):
            continue
        if allow_rel and "rel" not in kw:
            save = p.i
            rel = _parse_rel(p)
            if rel is not None:
                kw["rel"] = rel
                kw["immediate"] = p.immediate
                continue
            p.i = save
        if allow_same and "same" not in kw:
            same = _parse_same(p)
            if same is not None:
                kw["same"] = (same[0], IT) if same[1] is _SAME_BARE else same
                continue
        break
    return _with_attrs(Ref(**kw), attrs)


_REL_LEAD = {"that", "which", "is", "are", "located", "sitting", "placed", "standing", "lying",
             "positioned", "directly", "immediately", "just"}
_IMMEDIATE = {"directly", "immediately", "just"}


def _parse_rel(p: _P) -> tuple | None:
    """"to the left of X", "left of X", "to its right", "behind X", "in front of X", "on the left"."""
    start = p.i
    p.immediate = False
    while p.peek() in _REL_LEAD:
        p.immediate = p.immediate or p.peek() in _IMMEDIATE
        p.i += 1
    p.eat_one({"to", "on", "at", "towards", "toward"})
    poss = None
    if p.peek() in ("the", "its", "their") and p.peek(1) in ("left", "right", "front"):
        poss = p.peek()
        p.i += 1
    w = p.peek()
    if w in ("left", "right"):
        p.i += 1
        p.eat("hand", "side") or p.eat("side")
        if poss in ("its", "their"):
            return (w, IT if poss == "its" else THEY)
        if p.eat_one({"of", "from"}):
            ref = _parse_np(p, allow_rel=False)
            if ref is None:
                raise _NoParse(p.peek())
            return (w, ref)
        return (w, None)
    if p.eat("in", "front", "of") or p.eat("front", "of") or (poss == "the" and p.eat("front", "of")):
        ref = _parse_np(p, allow_rel=False)
        if ref is None:
            raise _NoParse(p.peek())
        return ("front", ref)
    if poss == "its" and p.eat("front"):
        return ("front", IT)
    if p.eat("in", "front") or (poss == "the" and p.eat("front")):
        return ("front", None)
    if p.eat("behind"):
        ref = _parse_np(p, allow_rel=False)
        return ("behind", ref)
    if p.eat("back"):  # "at the back"
        return ("behind", None)
    p.i = start
    return None


_SAME_BARE = Ref(pronoun="it", definite=True, anaphoric=True)   # "the same color" with no "as X"


def _parse_same(p: _P) -> tuple | None:
    """"(has) the same color as X", "shares its size", "same shape as it"."""
    start = p.i
    for _ in range(2):
        p.eat_one({"with", "of", "that", "which", "have", "has", "having", "are", "is"})
    if p.eat_one({"share", "shares", "sharing"}):
        p.eat("the")
        p.eat("same")
        if p.peek() in ("its", "their"):
            ref = IT if p.peek() == "its" else THEY
            p.i += 1
            cat = ATTR_NAMES.get(p.peek() or "")
            if cat:
                p.i += 1
                return (cat, ref)
            p.i = start
            return None
        cat = ATTR_NAMES.get(p.peek() or "")
        if not cat:
            p.i = start
            return None
        p.i += 1
        p.eat_one({"as", "with", "of"})
        ref = _parse_np(p, allow_rel=False)
        if ref is None:
            raise _NoParse(p.peek())
        return (cat, ref)
    p.eat("the")
    if p.eat("same"):
        cat = ATTR_NAMES.get(p.peek() or "")
        if not cat:
            p.i = start
            return None
        p.i += 1
        if p.eat_one({"as", "of"}):
            ref = _parse_np(p, allow_rel=False)
            if ref is None:
                raise _NoParse(p.peek())
            return (cat, ref)
        return (cat, _SAME_BARE)
    if p.peek() in ("its", "their") and ATTR_NAMES.get(p.peek(1) or ""):  # "have its color"
        if p.t[start:p.i] and p.t[start] in ("have", "has", "having"):
            ref = IT if p.peek() == "its" else THEY
            cat = ATTR_NAMES[p.peek(1)]
            p.i += 2
            return (cat, ref)
    p.i = start
    return None


_QUANT_PATTERNS = [
    (("more", "than"), "gt"), (("at", "least"), "ge"), (("fewer", "than"), "lt"),
    (("less", "than"), "lt"), (("at", "most"), "le"), (("exactly",), "eq"), (("only",), "eq"),
    (("just",), "eq"),
]
_EXCEPT_LEADS = [("other", "than"), ("besides",), ("apart", "from"), ("except", "for"), ("except",),
                 ("excluding",), ("aside", "from"), ("but", "not"), ("beside",)]


def _scan_set(p: _P, base: Ref | None = None) -> Ref:
    """Read the rest of a count/exist question as a set description: every attribute word outside a
    sub-phrase narrows it; relations, "same X as", "other", "among them" and quantities add
    constraints. Unknown words make it fail."""
    attrs: dict[str, set] = base.attr_dict() if base else {}
    kw: dict[str, Any] = {}
    if base is not None:
        kw = {k: getattr(base, k) for k in ("plural", "other", "rel", "same", "group", "quant",
                                             "excluding", "extreme", "everything")}
    while not p.done():
        w = p.peek()
        if w in ("not", "non") and (_attr_word(p.peek(1)) or p.peek(1) in SHAPE_WORDS
                                    or p.peek(1) in ("a", "an") and (_attr_word(p.peek(2)) or p.peek(2) in SHAPE_WORDS)):
            p.i += 1
            p.eat_one({"a", "an"})
            neg: dict[str, set] = {}
            while _attr_word(p.peek()) or p.peek() in SHAPE_WORDS:
                c, v = _attr_word(p.peek()) or ("shape", SHAPE_WORDS[p.peek()][0])
                neg.setdefault(c, set()).add(v)
                p.i += 1
            kw["excluding"] = _with_attrs(Ref(plural=True), neg)
            continue
        if w == "no" and not kw.get("quant") and (p.peek(1) in SHAPE_WORDS or p.peek(1) in GENERIC_WORDS
                                                   or _attr_word(p.peek(1))):
            kw["quant"] = ("eq", 0)     # "are there no cylinders?"
            p.i += 1
            continue
        if p.eat("of", "them") or p.eat("among", "them") or p.eat("of", "those") or \
                p.eat("among", "those") or p.eat("of", "these") or p.eat("among", "these"):
            kw["group"] = True
            continue
        matched = False
        for lead in _EXCEPT_LEADS:
            if p.at(*lead):
                save = p.i
                p.i += len(lead)
                ref = _parse_np(p, allow_rel=False)
                if ref is None:
                    p.i = save
                    continue
                kw["excluding"] = ref
                matched = True
                break
        if matched:
            continue
        for lead, op in _QUANT_PATTERNS:
            if p.at(*lead):
                save = p.i
                p.i += len(lead)
                n = _number(p)
                if n is None and p.eat_one({"a", "an"}):
                    n = 1
                if n is None:
                    p.i = save
                    continue
                kw["quant"] = (op, n)
                matched = True
                break
        if matched:
            continue
        if p.eat("a", "single") or p.eat("one", "single"):
            kw["quant"] = ("eq", 1)
            continue
        if w in ("multiple", "several"):
            kw["quant"] = ("ge", 2)
            p.i += 1
            continue
        if "rel" not in kw or kw.get("rel") is None:
            save = p.i
            rel = _parse_rel(p)
            if rel is not None:
                kw["rel"] = rel
                continue
            p.i = save
        if not kw.get("same"):
            same = _parse_same(p)
            if same is not None:
                kw["same"] = (same[0], IT) if same[1] is _SAME_BARE else same
                continue
        if w in ("other", "else", "another", "more"):
            kw["other"] = True
        elif w in EXTREME_WORDS:
            kw["extreme"] = EXTREME_WORDS[w]
        elif _attr_word(w):
            c, v = _attr_word(w)
            attrs.setdefault(c, set()).add(v)
        elif w in SHAPE_WORDS:
            attrs.setdefault("shape", set()).add(SHAPE_WORDS[w][0])
            kw["plural"] = kw.get("plural", False) or SHAPE_WORDS[w][1]
        elif w in GENERIC_WORDS or w in QUANTIFIED or w in ("or", "and", ","):
            if w in GENERIC_WORDS:
                kw["plural"] = kw.get("plural", False) or GENERIC_WORDS[w]
        elif cg.parse_number(w) is not None and "quant" not in kw:
            kw["quant"] = ("eq", cg.parse_number(w))
        elif w in IGNORABLE or w in ("none", "no"):
            pass
        else:
            raise _NoParse(w)
        p.i += 1
    return _with_attrs(Ref(**{k: v for k, v in kw.items() if v is not None}), attrs)


def _ignorable_rest(p: _P) -> bool:
    return all(w in IGNORABLE or w == "," for w in p.rest())


def _check_rest(p: _P) -> None:
    for w in p.rest():
        if w not in IGNORABLE and w != ",":
            raise _NoParse(w)


def _scan_predicate(p: _P, subject: Ref) -> tuple:
    """The predicate of a yes/no question about ``subject``: attributes ("red", "a metal cube",
    "red or blue"), a relation, "the same color as X", or "the leftmost object"."""
    attrs: dict[str, set] = {}
    has_or = False
    rel = same = ext = None
    imm = False
    if p.at("different") and ATTR_NAMES.get(p.peek(1) or "") and (subject.plural or subject.pronoun == "they"):
        cat = ATTR_NAMES[p.peek(1)]
        p.i += 2
        _check_rest(p)
        return ("same_all", subject, cat, "differ")     # "are the two spheres different colors?"
    while not p.done():
        w = p.peek()
        if rel is None:
            save = p.i
            r = _parse_rel(p)
            if r is not None and r[1] is not None:
                rel = r
                imm = p.immediate
                continue
            if r is not None and r[1] is None:  # "is it on the left" -> position
                rel = r
                continue
            p.i = save
        if same is None:
            s = _parse_same(p)
            if s is not None:
                same = s
                continue
        if w in EXTREME_WORDS:
            ext = EXTREME_WORDS[w]
        elif _attr_word(w):
            c, v = _attr_word(w)
            attrs.setdefault(c, set()).add(v)
        elif w in SHAPE_WORDS:
            attrs.setdefault("shape", set()).add(SHAPE_WORDS[w][0])
        elif w == "or":
            has_or = True
        elif w in GENERIC_WORDS or w in IGNORABLE or w in ("and", ","):
            pass
        else:
            raise _NoParse(w)
        p.i += 1
    if rel is not None and attrs:  # "is the thing left of the cube red?"
        subject = replace(subject, rel=rel, immediate=imm)
        rel = None
    if rel is not None:
        if rel[1] is None:
            return ("verify_side", subject, rel[0])
        return ("verify_rel", subject, rel[0], rel[1])
    if same is not None:
        if same[1] is _SAME_BARE and (subject.plural or subject.pronoun == "they"):
            return ("same_all", subject, same[0])     # "are the spheres the same color?"
        return ("verify_same", subject, same[0], IT if same[1] is _SAME_BARE else same[1])
    if ext is not None and not attrs:
        return ("verify_extreme", subject, ext)
    if not attrs:
        raise _NoParse(None)
    if has_or:
        cats = [c for c in NP_ORDER if len(attrs.get(c, ())) > 1]
        if len(cats) == 1:
            return ("choice", subject, cats[0], tuple(v for v in VALUES[cats[0]] if v in attrs[cats[0]]))
    if any(len(v) > 1 for v in attrs.values()):
        raise _NoParse(None)
    return ("verify", subject, tuple((c, next(iter(attrs[c]))) for c in NP_ORDER if c in attrs))


def _as_set(ref: Ref) -> Ref:
    """An indefinite NP used as a set description."""
    return replace(ref, definite=False, anaphoric=False)


def _parse_yesno(p: _P) -> tuple:
    first = p.peek()
    # Existence: "is there", "are there any", "do you see", "does the image have", "can you see"
    if p.eat_one(COPULAS) and p.eat("there"):
        return ("exist", _scan_set(p))
    p.i = 0
    if p.eat_one({"do", "does", "can", "could", "did"}):
        if p.eat("you", "see") or p.eat("you", "notice") or p.eat("you", "spot") or \
                (p.eat_one({"the", "this"}) and p.eat_one({"image", "picture", "scene", "photo"})
                 and p.eat_one({"have", "contain", "show", "include"})) or p.eat("it", "contain") or \
                p.eat("there", "exist") or p.eat("there", "appear", "to", "be") or p.eat("there", "seem", "to", "be"):
            return ("exist", _scan_set(p))
        p.i = 1
        # "does it have the same color as X", "does the cube share its color with ..."
        subject = _parse_np(p, allow_rel=False, allow_same=False)
        if subject is None:
            raise _NoParse(p.peek())
        p.eat_one({"have", "has", "look", "appear", "seem"})
        p.eat("to", "be")
        return _scan_predicate(p, subject)
    p.i = 0
    if p.eat_one({"has", "have"}):
        return ("exist", _scan_set(p))
    if first not in COPULAS:
        raise _NoParse(first)
    p.i = 1
    p.eat("not")
    if p.eat("everything"):
        return _scan_predicate(p, Ref(everything=True, plural=True, definite=True))
    if p.peek() in QUANTIFIED or p.peek() in ("any", "some"):
        return ("exist", _scan_set(p))
    save = p.i
    subject = _parse_np(p, allow_rel=False, leave_last=True, allow_same=False)
    if subject is None:
        raise _NoParse(p.peek())
    if p.done() or all(w in IGNORABLE for w in p.rest()):
        # the whole question went into the subject ("is the big thing made of metal?",
        # "is the cube that is small red?" is read greedily): leave the attributes to the predicate
        p.i = save
        subject = _parse_np(p, allow_rel=False, greedy=False, allow_same=False)
    if not subject.is_reference:
        # "is a cube left of the sphere?", "are any cubes red?" -> existence
        p2 = _P(p.t)
        p2.i = p.i
        return ("exist", _scan_set(p2, _as_set(subject)))
    p.eat("not")
    return _scan_predicate(p, subject)


def _parse_seek_tail(p: _P, cat: str) -> tuple:
    """After "what color": "is the cube", "is it", "are the spheres", "does it have", "are there"."""
    if p.done():
        return ("seek", cat, ("focus",))
    p.eat_one({"is", "are", "was", "were", "does", "do", "did"})
    if p.done() or _ignorable_rest(p) and not any(w in ("it", "its", "them", "they") for w in p.rest()):
        if p.done() or p.at("there") or p.at("you", "see") or "image" in p.rest() or "picture" in p.rest() \
                or "scene" in p.rest():
            _check_rest(p)
            return ("values", cat, Ref())
        _check_rest(p)
        return ("seek", cat, IT)
    p.eat("of")
    save = p.i
    ref = _parse_np(p)
    if ref is None:
        raise _NoParse(p.peek())
    if not ref.is_reference:
        p.i = save
        return ("values", cat, _scan_set(p))
    p.eat("made", "of") or p.eat("made", "from") or p.eat("made") or p.eat_one({"have", "has"})
    _check_rest(p)
    return ("seek", cat, ref)


def _parse_what(p: _P) -> tuple:
    """Questions starting with what / which."""
    p.eat_one({"what", "which"})
    if p.eat("kind", "of") or p.eat("type", "of"):
        w = p.peek()
        if w in ("thing", "object", "shape", "things", "objects") or w is None:
            if w is not None:
                p.i += 1
            return _parse_seek_tail(p, "shape")
        cat = ATTR_NAMES.get(w or "")
        if cat:
            p.i += 1
            return _parse_seek_tail(p, cat)
        raise _NoParse(w)
    cat = ATTR_NAMES.get(p.peek() or "")
    if cat and p.peek() != "colored":
        p.i += 1
        return _parse_seek_tail(p, cat)
    if p.eat("else"):
        p.eat_one({"is", "are"})
        _check_rest(p)
        return ("scene",)
    if p.eat("do", "you", "see") or p.eat("can", "you", "see"):
        _check_rest(p)
        return ("scene",)
    # "which one is red", "which object is the leftmost", "what thing is behind it"
    plural = False
    if p.peek() in ("one", "ones", "thing", "things", "object", "objects", "shape") or \
            p.peek() in SHAPE_WORDS:
        noun = p.peek()
        plural = noun in ("ones", "things", "objects") or (noun in SHAPE_WORDS and SHAPE_WORDS[noun][1])
        p.i += 1
        base_attrs = {"shape": {SHAPE_WORDS[noun][0]}} if noun in SHAPE_WORDS else {}
        p.eat_one({"is", "are"})
        save = p.i
        rel = _parse_rel(p)
        if rel is not None:
            _check_rest(p)
            return ("describe", _with_attrs(Ref(definite=not plural, plural=plural, rel=rel, immediate=p.immediate), base_attrs))
        p.i = save
        p.eat("the")
        if p.peek() in EXTREME_WORDS:
            d = EXTREME_WORDS[p.peek()]
            p.i += 1
            _check_rest(p)
            return ("describe", _with_attrs(Ref(definite=True, extreme=d), base_attrs))
        ref = _scan_set(p)
        attrs = ref.attr_dict()
        for c, v in base_attrs.items():
            attrs.setdefault(c, set()).update(v)
        return ("describe", _with_attrs(replace(ref, definite=not plural, plural=plural), attrs))
    if not p.eat_one({"is", "are", "was", "were"}):
        if p.eat_one({"does", "do"}):
            ref = _parse_np(p)
            if ref is None:
                raise _NoParse(p.peek())
            if p.eat("look", "like") or p.eat("look"):
                _check_rest(p)
                return ("describe", ref)
        raise _NoParse(p.peek())
    if p.eat("there") or p.eat("in", "the", "image") or p.eat("in", "the", "picture") or \
            p.eat("in", "the", "scene"):
        _check_rest(p)
        return ("scene",)
    # "what is the color of X" / "what is its color" / "what is X's color"
    save = p.i
    if p.eat("the") and ATTR_NAMES.get(p.peek() or "") and p.peek(1) in ("of", None):
        cat = ATTR_NAMES[p.peek()]
        p.i += 1
        if p.done():
            return ("seek", cat, IT)
        p.eat("of")
        ref = _parse_np(p)
        if ref is None:
            raise _NoParse(p.peek())
        _check_rest(p)
        return ("seek", cat, ref)
    p.i = save
    if p.peek() in ("its", "their") and ATTR_NAMES.get(p.peek(1) or ""):
        ref = IT if p.peek() == "its" else THEY
        cat = ATTR_NAMES[p.peek(1)]
        p.i += 2
        _check_rest(p)
        return ("seek", cat, ref)
    # "what is on its left", "what is behind the cube", "what is to the left"
    rel = _parse_rel(p)
    if rel is not None:
        _check_rest(p)
        return ("describe", Ref(definite=True, rel=rel, immediate=p.immediate))
    p.i = save
    ref = _parse_np(p)
    if ref is None:
        raise _NoParse(p.peek())
    if p.at("'s") and ATTR_NAMES.get(p.peek(1) or ""):
        cat = ATTR_NAMES[p.peek(1)]
        p.i += 2
        _check_rest(p)
        return ("seek", cat, ref)
    if p.eat("made", "of") or p.eat("made", "from") or p.eat("made"):
        _check_rest(p)
        return ("seek", "material", ref)
    _check_rest(p)
    return ("describe", ref)


def _parse_ellipsis(p: _P) -> tuple:
    """The part after "what about" / "how about" / "and", or a bare phrase ("its color?")."""
    if p.peek() in ("its", "their") and ATTR_NAMES.get(p.peek(1) or ""):
        ref = IT if p.peek() == "its" else THEY
        cat = ATTR_NAMES[p.peek(1)]
        p.i += 2
        _check_rest(p)
        return ("seek", cat, ref)
    p.eat("the")
    cat = ATTR_NAMES.get(p.peek() or "")
    if cat:
        p.i += 1
        if p.eat("of"):
            ref = _parse_np(p)
            if ref is None:
                raise _NoParse(p.peek())
            _check_rest(p)
            return ("seek", cat, ref)
        _check_rest(p)
        return ("seek", cat, ("focus",))
    p.i = 0
    save = p.i
    rel = _parse_rel(p)
    if rel is not None and _ignorable_rest(p):
        return ("ellipsis", None, rel)
    p.i = save
    ref = _parse_np(p)
    if ref is None:
        raise _NoParse(p.peek())
    _check_rest(p)
    return ("ellipsis", ref, None)


_SET_LEAD = r"(?:are there |is there |there are |there is |do you see |can you see |does the image have |does it have |do we have |have we got )?"
_SET_TAIL = r"(?: are there| there are| in the image| in the picture| in the scene| in total| visible)?"
_COMPARISONS = [
    # ("count" | "diff" | "which_more" | "size" | "which_size", op, regex); groups: the sides (and op words)
    ("diff", None, re.compile(r"how many more (.+?) than (?:there are )?(.+?)" + _SET_TAIL + "$")),
    ("diff", "rev", re.compile(r"how many (?:fewer|less) (.+?) than (?:there are )?(.+?)" + _SET_TAIL + "$")),
    ("count", None, re.compile(_SET_LEAD + r"(more|fewer|less) (.+?) than (?:there are |the number of )?(.+?)" + _SET_TAIL + "$")),
    ("count", "eq", re.compile(_SET_LEAD + r"(?:as many|the same number of|the same amount of|an equal number of|"
                               r"equal numbers of|equally many) (.+?) (?:as|and) (?:there are )?(.+?)" + _SET_TAIL + "$")),
    ("count", None, re.compile(r"(?:is |are )?the (?:number|count|amount) of (.+?) (greater|large|higher|more|small|"
                               r"less|lower|fewer|equal to|the same as) (?:than )?(?:the (?:number|count|amount) of |"
                               r"that of )?(.+?)$")),
    ("count", "gt", re.compile(r"(?:do|does) (?:the )?(.+?) outnumber (?:the )?(.+?)$")),
    ("which_more", None, re.compile(_SET_LEAD + r"more (.+?) or (?:more )?(.+?)" + _SET_TAIL + "$")),
    ("which_more", None, re.compile(r"(?:which|what) (?:ones |one |kind |things )?(?:is|are|do you see|is there|are there)?"
                                    r" ?(?:more common|more numerous|more frequent|there more of|more of|more|the most "
                                    r"common|the majority)(?: in the image| there)? (.+?) or (.+?)$")),
    ("size", None, re.compile(r"(?:is|are) (.+?) (large|small) than (.+?)$")),
    ("which_size", None, re.compile(r"(?:which|what) (?:one |thing |object )?is (large|small) (.+?) or (.+?)$")),
]
_OPS = {"more": "gt", "greater": "gt", "large": "gt", "higher": "gt", "fewer": "lt", "less": "lt", "small": "lt",
        "lower": "lt", "equal to": "eq", "the same as": "eq"}


def _cmp_set(words: str) -> Ref:
    toks = words.split()
    if not toks or cg.parse_number(toks[0]) is not None and len(toks) == 1:
        raise _NoParse(toks[0] if toks else None)
    ref = _scan_set(_P(toks))
    if not ref.attrs and not ref.rel and not ref.same and not ref.group and not any(
            w in GENERIC_WORDS or w in QUANTIFIED for w in toks):
        raise _NoParse(toks[0])
    return replace(ref, plural=True)


def _cmp_np(words: str) -> Ref:
    p = _P(words.split())
    ref = _parse_np(p)
    if ref is None:
        raise _NoParse(p.peek())
    _check_rest(p)
    return ref if ref.is_reference or ref.plural else replace(ref, definite=True)


def _share_head(a: Ref, b: Ref) -> tuple[Ref, Ref]:
    """"more red or blue cubes": a side without a shape takes the other side's."""
    shapes_a = [v for c, v in a.attrs if c == "shape"]
    shapes_b = [v for c, v in b.attrs if c == "shape"]
    if not shapes_a and shapes_b:
        a = _with_attrs(a, {**a.attr_dict(), "shape": set(shapes_b[0])})
    elif shapes_a and not shapes_b:
        b = _with_attrs(b, {**b.attr_dict(), "shape": set(shapes_a[0])})
    return a, b


def _parse_comparison(toks: list[str]) -> tuple | None:
    """Comparisons: of counts ("are there more spheres than cubes?", "as many cubes as spheres?",
    "is the number of red things greater than the number of blue things?", "are there more cubes
    or spheres?") and of two objects' sizes ("is the cube bigger than the sphere?", "which is
    smaller, the cube or the sphere?"). None when the question is not a comparison."""
    text = " ".join(w for w in toks if w != ",")
    if not {"than", "or", "as", "outnumber", "and", "equal"} & set(toks):
        return None
    for kind, op, rx in _COMPARISONS:
        m = rx.fullmatch(text)
        if not m:
            continue
        g = m.groups()
        try:
            if kind == "count":
                if op is None:
                    if g[0] in _OPS:            # "more X than Y"
                        op, a, b = _OPS[g[0]], g[1], g[2]
                    else:                        # "the number of X greater than Y"
                        a, op, b = g[0], _OPS[g[1]], g[2]
                else:
                    a, b = g
                if cg.parse_number(b.split()[0]) is not None and len(b.split()) <= 2:
                    return None                  # "more cubes than 2": a quantity, not a comparison
                ra, rb = _share_head(_cmp_set(a), _cmp_set(b))
                return ("compare_count", op, ra, rb)
            if kind == "which_more":
                ra, rb = _share_head(_cmp_set(g[0]), _cmp_set(g[1]))
                return ("which_more", ra, rb)
            if kind == "diff":
                ra, rb = _share_head(_cmp_set(g[0]), _cmp_set(g[1]))
                return ("count_diff", rb, ra) if op == "rev" else ("count_diff", ra, rb)
            if kind == "size":
                return ("compare_size", _OPS[g[1]], _cmp_np(g[0]), _cmp_np(g[2]))
            if kind == "which_size":
                return ("which_size", g[0], _cmp_np(g[1]), _cmp_np(g[2]))
        except _NoParse:
            continue
    return None


def _parse_tokens(toks: list[str]) -> tuple:
    if not toks:
        raise _NoParse(None)
    p = _P(toks)
    # "if there is a thing to its right, what color is it?" (CLEVR-Dialog seek-attr-rel)
    if p.eat("if", "there", "is") or p.eat("if", "there", "are"):
        np = _parse_np(p)
        if np is None or not p.eat(","):
            raise _NoParse(p.peek())
        inner = _parse_tokens(p.rest())
        return _bind_it(inner, replace(np, definite=True))
    if p.eat("if", "present", ",") or p.eat("if", "present"):
        return _parse_tokens(p.rest())
    comparison = _parse_comparison(toks)
    if comparison is not None:
        return comparison
    if p.eat_one({"whether", "if"}):  # "tell me whether it is red" (prefix already removed)
        return _parse_tokens(p.rest())
    if p.eat("there", "is") or p.eat("there", "are"):
        return ("exist", _scan_set(p))
    if p.eat("how", "many") or p.eat("how", "much") or p.eat("count") or p.eat("what", "is", "the", "number", "of") or \
            p.eat("the", "number", "of") or p.eat("number", "of") or p.eat("what", "is", "the", "count", "of"):
        ref = _scan_set(p)
        return ("count", ref)
    p.i = 0
    if p.eat("how", "big") or p.eat("what", "size"):
        if p.done():
            return ("seek", "size", IT)
        return _parse_seek_tail(p, "size")
    p.i = 0
    if p.at("and") and not p.at("and", "what", "about") and not p.at("and", "how", "about") and len(toks) > 1:
        try:   # "and how many red things?" is a whole question; "and the material?" an ellipsis
            return _parse_tokens(toks[1:])
        except _NoParse:
            pass
    if p.eat("what", "about") or p.eat("how", "about") or p.eat("and", "what", "about") or \
            p.eat("and", "how", "about") or p.eat("what", "of") or p.eat("and"):
        return _parse_ellipsis(_P(p.rest()))
    if p.peek() in ("what", "which"):
        return _parse_what(p)
    if p.eat("where"):
        p.eat_one({"is", "are"})
        ref = _parse_np(p)
        if ref is None:
            raise _NoParse(p.peek())
        _check_rest(p)
        return ("where", ref)
    if p.eat("describe") or p.eat("tell", "me", "about") or p.eat("tell", "me", "more", "about"):
        if p.done() or p.at("the", "image") or p.at("the", "scene") or p.at("the", "picture") or \
                p.at("what", "you", "see"):
            return ("scene",)
        ref = _parse_np(p)
        if ref is None:
            raise _NoParse(p.peek())
        _check_rest(p)
        return ("describe", ref)
    if p.peek() in YESNO_START:
        return _parse_yesno(p)
    if p.peek() in ("any", "anything", "something"):
        return ("exist", _scan_set(p))
    if p.peek() == "how":
        raise _NoParse(p.peek(1))
    if len(toks) > 2 and toks[-2:] in (["are", "there"], ["is", "there"]):   # "brown things are there?"
        return ("exist", _scan_set(_P(toks[:-2])))
    # declarative word order: "the cube is red?", "it is left of the sphere?"
    subject = _parse_np(p, allow_rel=False)
    if subject is not None and subject.is_reference and p.eat_one(COPULAS):
        # "the metal cylinder is what color?", "the cube is made of what?"
        if p.at("what") and ATTR_NAMES.get(p.peek(1) or ""):
            cat = ATTR_NAMES[p.peek(1)]
            p.i += 2
            _check_rest(p)
            return ("seek", cat, subject)
        if p.eat("made", "of", "what") or p.eat("made", "from", "what"):
            _check_rest(p)
            return ("seek", "material", subject)
        if p.at("what", "kind", "of") and ATTR_NAMES.get(p.peek(3) or ""):
            cat = ATTR_NAMES[p.peek(3)]
            p.i += 4
            _check_rest(p)
            return ("seek", cat, subject)
        return _scan_predicate(p, subject)
    p.i = 0
    # bare phrase: "the leftmost object?", "color?", "red?", "to its left?"
    return _parse_ellipsis(p)


def _bind_it(frame: tuple, np: Ref) -> tuple:
    def sub(x):
        if x == IT:
            return np
        if isinstance(x, tuple):
            return tuple(sub(y) for y in x)
        return x
    return sub(frame)


@lru_cache(maxsize=8192)
def parse_question(text: str) -> tuple:
    """The program for a question, independent of any scene. Failures are
    ``("fail", "outside" | "cant_parse", word)``; frames are hashable tuples."""
    if not isinstance(text, str) or not text.strip():
        return ("fail", "cant_parse", None)
    if _SOCIAL.match(text.strip().lower()):
        return ("fail", "social", None)
    frame = _parse_text(tokenize(text))
    if frame[:2] == ("fail", "cant_parse"):
        # a "correction" may have made an unknown word into a known one that does not fit
        # ("is there a hat?" -> "... a what"): without corrections, is it about something else?
        plain = _parse_text(tokenize(text, correct=False))
        if plain[:2] == ("fail", "outside"):
            return plain
    return frame


def _parse_text(toks: list[str]) -> tuple:
    outside = [w for w in toks if w in OUTSIDE_WORDS]
    try:
        frame = _parse_tokens(toks)
    except _NoParse as e:
        word = e.word
        if word in OUTSIDE_WORDS or outside:
            return ("fail", "outside", word or outside[0])
        if word is not None and word not in _KNOWN and not word.isdigit():
            return ("fail", "outside", word)
        return ("fail", "cant_parse", word)
    except RecursionError:  # pragma: no cover - absurd inputs
        return ("fail", "cant_parse", None)
    if outside:
        return ("fail", "outside", outside[0])
    return frame


# --------------------------------------------------------------------------------------------
# Discourse memory and execution
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Answer:
    """What ALICE says, with a canonical ``key`` (what a questioner can compare) and the objects
    it talked about (``mentions``: tuples of ids, most salient last)."""

    text: str
    kind: str            # yesno | count | attr | values | describe | nothing | where | scene | refuse
    value: Any = None
    key: tuple = ()
    mentions: tuple = ()
    category: str | None = None
    frame: tuple | None = field(default=None, compare=False)
    group: tuple | None = None   # (ids, words): the set a plural question was about ("they" next)

    @property
    def factual(self) -> bool:
        return self.kind != "refuse"


@dataclass(frozen=True)
class Discourse:
    """The dialog's memory: mentioned objects (tuples of ids, oldest first) and the last frame."""

    mentions: tuple = ()
    frame: tuple | None = None
    groups: tuple = ()     # (ids, words) of each plural set talked about, oldest first

    @classmethod
    def start(cls, scene: dict | None, caption: str | None) -> "Discourse":
        if not caption or not scene or not isinstance(scene.get("objects"), list):
            return cls()
        spec = cg.parse_caption(caption)
        if spec is None:
            return cls()
        grounded = cg.ground_caption(spec, scene)
        mentions = tuple(tuple(m) for m in grounded["mentions"] if m)
        return cls(mentions=mentions, groups=tuple((m, "things") for m in mentions if len(m) >= 2))

    def after(self, frame: tuple, answer: Answer) -> "Discourse":
        if frame[0] == "fail":
            new_frame = self.frame
        else:
            new_frame = answer.frame if answer.frame is not None else frame
        groups = self.groups + ((answer.group,) if answer.group is not None else ())
        return Discourse(mentions=self.mentions + tuple(answer.mentions), frame=new_frame, groups=groups)

    def plural(self) -> tuple | None:
        """What "they" / "them" / "those" refer to: the last plural set asked about (any size, even
        none or one: "how many yellow things?" "one" "are they metal?"), else the last group of
        two or more objects mentioned."""
        if self.groups:
            return self.groups[-1]
        g = self.group()
        return (g, "things") if g is not None else None

    def focus(self) -> int | None:
        for m in reversed(self.mentions):
            if len(m) == 1:
                return m[0]
        return None

    def group(self) -> tuple | None:
        for m in reversed(self.mentions):
            if len(m) >= 2:
                return m
        return None

    def mentioned(self) -> set:
        return {i for m in self.mentions for i in m}

    def recency(self, i: int) -> tuple:
        """How salient object ``i`` is: mentioned alone beats mentioned in a group, then later
        beats earlier; ``(-1, -1)`` when never mentioned."""
        best = (-1, -1)
        for k, m in enumerate(self.mentions):
            if i in m:
                best = max(best, (1 if len(m) == 1 else 0, k))
        return best


class _Refuse(Exception):
    def __init__(self, reason: str, text: str, extra: Any = None):
        super().__init__(text)
        self.reason, self.text, self.extra = reason, text, extra


def _np_words(ref: Ref, plural: bool = False) -> str:
    attrs = {c: "/".join(v) if len(v) > 1 else v[0] for c, v in ref.attrs}
    words = cg.np_text(attrs, plural=plural, noun="thing")
    if ref.extreme:
        words = f"{cg.EXTREME_WORD[ref.extreme]} {words}"
    return words


def _side_set(scene: dict, d: str) -> list[int]:
    """Objects on the ``d`` side of the scene (projection beyond the scene's centre)."""
    n = len(scene["objects"])
    proj = [cg._projection(scene, i, d) for i in range(n)]
    centre = sum(proj) / n if n else 0.0
    margin = 0.25 if scene.get("directions") else 10.0
    return [i for i in range(n) if proj[i] > centre + margin]


def _eval_set(ref: Ref, scene: dict, disc: Discourse) -> list[int]:
    """The objects a set description denotes (for count / exist / plural references)."""
    objs = scene["objects"]
    if ref.group:
        ids = sorted(_they(disc))
    else:
        ids = list(range(len(objs)))
    attrs = ref.attr_dict()
    ids = [i for i in ids if cg.matches(objs[i], attrs)]
    if ref.rel is not None:
        d, sub = ref.rel
        if sub is None:
            allowed = set(_side_set(scene, d))
            ids = [i for i in ids if i in allowed]
        else:
            anchors = _resolve_many(sub, scene, disc)
            allowed = set()
            for a in anchors:
                allowed |= set(cg.related(scene, a, d))
            ids = [i for i in ids if i in allowed and i not in anchors]
    if ref.same is not None:
        cat, sub = ref.same
        anchors = _resolve_many(sub, scene, disc)
        values = {objs[a][cat] for a in anchors}
        ids = [i for i in ids if objs[i][cat] in values and i not in anchors]
    if ref.excluding is not None:
        gone = set(_resolve_many(ref.excluding, scene, disc))
        ids = [i for i in ids if i not in gone]
    if ref.other:
        gone = disc.mentioned()
        ids = [i for i in ids if i not in gone]
    if ref.extreme is not None and ids:
        ids = [cg.extreme(scene, ref.extreme, ids)]
    return ids


def _they(disc: Discourse) -> tuple:
    """The objects "they" refers to; a refusal when the dialog has no plural antecedent or its
    set was empty ("how many yellow things?" "0" "what shape are they?")."""
    g = disc.plural()
    if g is None:
        raise _Refuse("no_antecedent", "I can't tell which ones you mean.")
    ids, words = g
    if not ids:
        raise _Refuse("missing", f"There aren't any {words}.")
    return tuple(ids)


def _resolve_many(ref: Ref, scene: dict, disc: Discourse) -> list[int]:
    """A reference that may be plural ("them", "the cubes") or singular, as a list of ids."""
    if ref.pronoun == "they":
        return list(_they(disc))
    if ref.plural and not ref.pronoun:
        ids = _eval_set(_as_set(ref), scene, disc)
        if not ids:
            raise _Refuse("missing", f"I don't see any {_np_words(ref, plural=True)}.")
        return ids
    return [_resolve_one(ref, scene, disc)]


def _resolve_one(ref: Ref, scene: dict, disc: Discourse) -> int:
    """The one object a singular reference picks out, using the dialog to disambiguate."""
    if ref.fallback:
        try:
            return _resolve_one(replace(ref, fallback=()), scene, disc)
        except _Refuse as first:
            if first.reason not in ("missing", "ambiguous"):
                raise
            attrs = ref.attr_dict()
            for c, v in ref.fallback:
                attrs[c] = set(v)
            try:
                return _resolve_one(_with_attrs(replace(ref, fallback=()), attrs), scene, disc)
            except _Refuse:
                raise first from None
    if ref.pronoun == "it":
        f = disc.focus()
        if f is None:
            g = disc.plural()
            if g is not None and len(g[0]) > 1:   # "how many spheres?" "2" "what color is it?"
                raise _Refuse("ambiguous", f"There are {cg.number_word(len(g[0]))} of them; which one do you mean?",
                              len(g[0]))
            raise _Refuse("no_antecedent", "I can't tell what you are referring to.")
        return f
    if ref.pronoun == "they":
        g = _they(disc)
        if len(g) == 1:
            return g[0]
        raise _Refuse("ambiguous", f"There are {cg.number_word(len(g))} of them; which one do you mean?", len(g))
    base = replace(ref, extreme=None, rel=None, other=False)
    ids = _eval_set(_as_set(base), scene, disc)
    if ref.rel is not None:
        d, sub = ref.rel
        if sub is None:
            ids = [cg.extreme(scene, d, ids)] if ids else []
        else:
            anchor = _resolve_one(sub, scene, disc)
            cands = [i for i in cg.related(scene, anchor, d) if i in set(ids)]
            if ref.other:
                cands = [i for i in cands if i not in disc.mentioned()] or cands
            nearest = cg.nearest(scene, anchor, cands)
            if nearest is None:
                side = REL_PHRASE[d]
                raise _Refuse("missing", f"There is nothing {side} it." if base.attrs == ()
                              else f"I don't see any {_np_words(base, plural=True)} {side} it.", "nothing")
            if len(cands) > 1 and not ref.immediate and ref.extreme is None:
                anchor_words = "it" if sub.pronoun == "it" else f"the {_np_words(sub)}"
                raise _Refuse("ambiguous", f"There are {cg.number_word(len(cands))} "
                              f"{_np_words(base, plural=True)} {REL_PHRASE[d]} {anchor_words}; which one do you mean?",
                              len(cands))
            ids = [nearest]
    if ref.other:
        mentioned = disc.mentioned()
        ids = [i for i in ids if i not in mentioned] or ids
    if ref.extreme is not None:
        ids = [cg.extreme(scene, ref.extreme, ids)] if ids else []
    if not ids:
        raise _Refuse("missing", f"I don't see any {_np_words(ref)}.")
    if len(ids) == 1:
        return ids[0]
    ranked = sorted(ids, key=disc.recency, reverse=True)
    if disc.recency(ranked[0]) >= (0, 0) and disc.recency(ranked[0]) > disc.recency(ranked[1]):
        return ranked[0]
    raise _Refuse("ambiguous", f"There are {cg.number_word(len(ids))} {_np_words(replace(ref, extreme=None), plural=True)}; "
                  "which one do you mean?", len(ids))


def _join(words: list[str]) -> str:
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


def _describe_many(scene: dict, ids: list[int], limit: int = 4) -> str:
    objs = scene["objects"]
    parts = [cg.describe(objs[i]) for i in ids[:limit]]
    if len(ids) > limit:
        parts.append(f"{len(ids) - limit} more")
    return _join(parts)


def _where_words(scene: dict, i: int) -> tuple[str, ...]:
    words = []
    for d in ("left", "right"):
        if i in _side_set(scene, d):
            words.append(d)
    for d in ("front", "behind"):
        if i in _side_set(scene, d):
            words.append(d)
    return tuple(words)


_WHERE_TEXT = {"left": "on the left", "right": "on the right", "front": "in the front",
               "behind": "at the back"}


def _quant_ok(n: int, quant: tuple | None) -> bool:
    if quant is None:
        return n > 0
    op, k = quant
    return {"eq": n == k, "gt": n > k, "ge": n >= k, "lt": n < k, "le": n <= k}[op]


def _yes(value: bool, mentions=(), extra: str = "") -> Answer:
    text = ("yes" if value else "no") + extra
    return Answer(text, "yesno", value, ("yesno", value), mentions)


def _frame_from_ellipsis(frame: tuple, disc: Discourse) -> tuple:
    """Fill in "what about X" / "how about to its left" / "color?" from the previous question."""
    if frame[0] == "seek" and frame[2] == ("focus",):
        prev = disc.frame
        if prev is not None and prev[0] in ("seek", "verify", "choice", "describe", "where") \
                and isinstance(prev[2 if prev[0] == "seek" else 1], Ref):
            ref = prev[2] if prev[0] == "seek" else prev[1]
            plural = ref.pronoun == "they" or (ref.plural and ref.pronoun is None)
            return ("seek", frame[1], ref if plural else IT)
        return ("seek", frame[1], IT)
    if frame[0] != "ellipsis":
        return frame
    _, ref, rel = frame
    prev = disc.frame
    if prev is None:
        if rel is not None:
            return ("describe", Ref(definite=True, rel=rel))
        if ref.is_reference or ref.extreme:
            return ("describe", ref)
        return ("exist", _as_set(ref))
    kind = prev[0]
    if rel is not None:
        if kind in ("count", "exist"):
            return (kind, replace(prev[1], rel=rel))
        if kind == "describe":
            return ("describe", replace(prev[1], rel=rel))
        if kind == "verify_rel":
            return ("verify_rel", prev[1], rel[0], rel[1] if rel[1] is not None else prev[3])
        return ("describe", Ref(definite=True, rel=rel))
    # an NP: "the blue one" inherits the previous referent's shape
    old = None
    if kind == "seek":
        old = prev[2]
    elif kind in ("verify", "verify_rel", "verify_same", "verify_extreme", "choice", "describe", "where"):
        old = prev[1]
    if ref.one and old is not None and not any(c == "shape" for c, _ in ref.attrs):
        shapes = [v for c, v in old.attrs if c == "shape"]
        if shapes:  # "the small one" after "the large cube": the small cube, if that is needed
            ref = replace(ref, fallback=(("shape", shapes[0]),))
    bare_attrs = not ref.is_reference and not ref.extreme and ref.rel is None and ref.attrs and \
        not ref.one and not any(c == "shape" for c, _ in ref.attrs)
    if kind == "seek":
        return ("seek", prev[1], ref if ref.is_reference or ref.extreme else replace(ref, definite=True))
    if kind == "verify":
        if bare_attrs:  # "is it blue?" -> "red?"
            return ("verify", prev[1], tuple((c, v[0]) for c, v in ref.attrs))
        return ("verify", ref if ref.is_reference else replace(ref, definite=True), prev[2])
    if kind == "choice":
        return ("choice", ref if ref.is_reference else replace(ref, definite=True), prev[2], prev[3])
    if kind in ("count", "exist"):
        merged = prev[1].attr_dict()
        for c, v in ref.attrs:
            merged[c] = set(v)
        return (kind, _with_attrs(replace(prev[1], quant=None), merged))
    if kind == "values":
        return ("values", prev[1], _as_set(ref))
    if kind in ("verify_rel", "verify_same"):
        return (kind, ref if ref.is_reference else replace(ref, definite=True), prev[2], prev[3])
    if kind == "verify_extreme":
        return (kind, ref if ref.is_reference else replace(ref, definite=True), prev[2])
    if kind == "where":
        return ("where", ref if ref.is_reference else replace(ref, definite=True))
    return ("describe", ref if ref.is_reference or ref.extreme else replace(ref, definite=True))


def execute(frame: tuple, scene: dict, disc: Discourse) -> Answer:
    """The exact answer to ``frame`` in ``scene``, given the dialog memory ``disc``."""
    if frame[0] == "fail":
        if frame[1] == "outside":
            return Answer(OUTSIDE, "refuse", "outside", ("refuse", "outside"))
        if frame[1] == "social":
            return Answer(SOCIAL, "refuse", "social", ("refuse", "social"))
        return Answer(CANT_TELL, "refuse", "cant_parse", ("refuse", "cant_parse"))
    if not scene or not isinstance(scene.get("objects"), list):
        return Answer(CANT_TELL, "refuse", "no_scene", ("refuse", "no_scene"))
    resolved = _frame_from_ellipsis(frame, disc)
    try:
        return replace(_execute(resolved, scene, disc), frame=resolved)
    except _Refuse as r:
        if r.reason == "missing":
            return Answer(r.text, "refuse", "missing", ("refuse", "missing"), frame=resolved)
        if r.reason == "ambiguous":
            return Answer(r.text, "refuse", "ambiguous", ("refuse", "ambiguous", r.extra), frame=resolved)
        return Answer(r.text, "refuse", r.reason, ("refuse", r.reason), frame=resolved)


def _execute(frame: tuple, scene: dict, disc: Discourse) -> Answer:
    objs = scene["objects"]
    kind = frame[0]
    if kind == "count":
        ref = frame[1]
        if ref == Ref() and disc.frame is not None and disc.frame[0] == "exist":
            ref = replace(disc.frame[1], quant=None)  # "is there a cube?" "yes" "how many are there?"
        ids = _eval_set(ref, scene, disc)
        mentions = ((tuple(ids),) if ids else ()) + _anchor_mention(ref, scene, disc)
        return Answer(str(len(ids)), "count", len(ids), ("count", len(ids)), mentions,
                      group=(tuple(ids), _np_words(ref, plural=True)))
    if kind == "exist":
        ref = frame[1]
        ids = _eval_set(ref, scene, disc)
        ok = _quant_ok(len(ids), ref.quant)
        extra = ""
        if ref.quant is not None and not ok and ids:
            extra = f", there {'is' if len(ids) == 1 else 'are'} {len(ids)}"
        answer = _yes(ok, ((tuple(ids),) if ids else ()) + _anchor_mention(ref, scene, disc), extra)
        return replace(answer, group=(tuple(ids), _np_words(ref, plural=True)))
    if kind == "seek":
        cat, ref = frame[1], frame[2]
        ids = _resolve_many(ref, scene, disc)
        if len(ids) == 1:
            v = objs[ids[0]][cat]
            return Answer(v, "attr", v, ("attr", cat, v), ((ids[0],),), category=cat)
        values = tuple(v for v in VALUES[cat] if any(objs[i][cat] == v for i in ids))
        text = f"they are all {values[0]}" if len(values) == 1 else _join(list(values))
        return Answer(text, "values", values, ("values", cat, values), (tuple(ids),), category=cat,
                      group=(tuple(ids), "things"))
    if kind == "values":
        cat, ref = frame[1], frame[2]
        ids = _eval_set(ref, scene, disc)
        if not ids:
            raise _Refuse("missing", f"I don't see any {_np_words(ref, plural=True)}.")
        values = tuple(v for v in VALUES[cat] if any(objs[i][cat] == v for i in ids))
        text = f"only {values[0]}" if len(values) == 1 else _join(list(values))
        return Answer(text, "values", values, ("values", cat, values), (tuple(ids),) if ref.attrs else (),
                      category=cat, group=(tuple(ids), _np_words(ref, plural=True)) if ref.attrs else None)
    if kind in ("verify", "choice", "verify_rel", "verify_same", "verify_extreme", "verify_side"):
        subject = frame[1]
        ids = _resolve_many(subject, scene, disc)
        if kind == "choice":
            cat, options = frame[2], frame[3]
            if len(ids) != 1:
                raise _Refuse("ambiguous", f"I can't tell which one you mean; there are {len(ids)}.", len(ids))
            v = objs[ids[0]][cat]
            text = v if v in options else f"neither, it is {v}"
            return Answer(text, "attr", v, ("attr", cat, v), ((ids[0],),), category=cat)
        if kind == "verify":
            attrs = dict(frame[2])
            truth = [cg.matches(objs[i], attrs) for i in ids]
        elif kind == "verify_rel":
            d, other = frame[2], frame[3]
            if other.pronoun is None and not other.is_reference:
                targets = _eval_set(_as_set(other), scene, disc)
                truth = [any(t in cg.related(scene, i, OPP[d]) for t in targets) for i in ids]
                other_ids = []
            else:
                other_ids = _resolve_many(other, scene, disc)
                truth = [all(i in cg.related(scene, o, d) for o in other_ids) for i in ids]
            mentions = ((tuple(other_ids),) if other_ids else ()) + ((tuple(ids),))
            return _truth_answer(truth, mentions)
        elif kind == "verify_same":
            cat, other = frame[2], frame[3]
            other_ids = _resolve_many(other, scene, disc)
            vals = {objs[o][cat] for o in other_ids}
            truth = [objs[i][cat] in vals for i in ids]
        elif kind == "verify_side":
            side = set(_side_set(scene, frame[2]))
            truth = [i in side for i in ids]
        else:
            e = cg.extreme(scene, frame[2])
            truth = [i == e for i in ids]
        answer = _truth_answer(truth, (tuple(ids),))
        if len(ids) > 1:
            answer = replace(answer, group=(tuple(ids), "things"))
        return answer
    if kind == "same_all":
        subject, cat = frame[1], frame[2]
        ids = _resolve_many(subject, scene, disc)
        values = [v for v in VALUES[cat] if any(objs[i][cat] == v for i in ids)]
        if len(frame) > 3 and len(ids) > 1:     # "are they different colors?"
            ok = len(values) > 1
            text = f"yes, they are {_join(values)}" if ok else f"no, they are all {values[0]}"
            return Answer(text, "yesno", ok, ("yesno", ok), (tuple(ids),), group=(tuple(ids), "things"))
        ok = len(values) == 1
        text = (f"yes, they are all {values[0]}" if ok else f"no, they are {_join(values)}") if len(ids) > 1 \
            else f"there is only one, it is {values[0]}"
        return Answer(text, "yesno", ok, ("yesno", ok), (tuple(ids),), group=(tuple(ids), "things"))
    if kind == "count_diff":
        a, b = (_eval_set(r, scene, disc) for r in frame[1:3])
        n = len(a) - len(b)
        if n >= 0:
            return Answer(str(n), "count", n, ("count", n), tuple(tuple(x) for x in (a, b) if x),
                          group=(tuple(a), _np_words(frame[1], plural=True)))
        counts = f"{len(a)} {_np_words(frame[1], plural=len(a) != 1)} and {len(b)} {_np_words(frame[2], plural=len(b) != 1)}"
        return Answer(f"none, {counts}", "count", 0, ("count", 0), tuple(tuple(x) for x in (a, b) if x),
                      group=(tuple(a), _np_words(frame[1], plural=True)))
    if kind in ("compare_count", "which_more"):
        refs = frame[2:4] if kind == "compare_count" else frame[1:3]
        a, b = (_eval_set(r, scene, disc) for r in refs)
        words = [_np_words(r, plural=True) for r in refs]
        counts = f"{len(a)} {_np_words(refs[0], plural=len(a) != 1)} and {len(b)} {_np_words(refs[1], plural=len(b) != 1)}"
        mentions = tuple(tuple(x) for x in (a, b) if x)
        if kind == "compare_count":
            op = frame[1]
            ok = {"gt": len(a) > len(b), "lt": len(a) < len(b), "eq": len(a) == len(b)}[op]
            return Answer(f"{'yes' if ok else 'no'}, {counts}", "yesno", ok, ("yesno", ok), mentions,
                          group=(tuple(a), words[0]))
        if len(a) == len(b):
            return Answer(f"the same number, {len(a)} of each", "compare", "same", ("compare", "same"), mentions)
        win, ids = (0, a) if len(a) > len(b) else (1, b)
        return Answer(f"{words[win]}, {counts}", "compare", words[win], ("compare", win), mentions,
                      group=(tuple(ids), words[win]))
    if kind in ("compare_size", "which_size"):
        if kind == "compare_size":
            op, ra, rb = frame[1:]
        else:
            op, ra, rb = ("gt" if frame[1] == "large" else "lt"), frame[2], frame[3]
        i, j = _resolve_one(ra, scene, disc), _resolve_one(rb, scene, disc)
        if i == j:
            raise _Refuse("same_object", "That is the same object.")
        si, sj = objs[i]["size"], objs[j]["size"]
        mentions = ((j,), (i,))
        if si == sj:
            text = f"{'no, ' if kind == 'compare_size' else ''}they are the same size, both {si}"
            return Answer(text, "yesno" if kind == "compare_size" else "compare", False if kind == "compare_size"
                          else "same", ("yesno", False) if kind == "compare_size" else ("compare", "same"), mentions)
        bigger = i if si == "large" else j
        winner = bigger if op == "gt" else (j if bigger == i else i)
        if kind == "compare_size":
            ok = winner == i
            text = ("yes" if ok else "no") + f", it is {si}"
            return Answer(text, "yesno", ok, ("yesno", ok), mentions)
        text = cg.describe(objs[winner])
        return Answer(text, "describe", (winner,), ("describe", (tuple(cg.attrs_of(objs[winner]).items()),)),
                      ((winner,),))
    if kind == "describe":
        ref = frame[1]
        if ref.plural and not ref.pronoun:
            ids = _eval_set(_as_set(ref), scene, disc)
            if not ids:
                return Answer("nothing", "nothing", None, ("nothing",))
            key = ("describe", tuple(sorted(tuple(cg.attrs_of(objs[i]).items()) for i in ids)))
            return Answer(_describe_many(scene, ids), "describe", tuple(ids), key, (tuple(ids),),
                          group=(tuple(ids), _np_words(ref, plural=True)))
        if ref.pronoun == "they":
            ids = _resolve_many(ref, scene, disc)
            key = ("describe", tuple(sorted(tuple(cg.attrs_of(objs[i]).items()) for i in ids)))
            return Answer(_describe_many(scene, ids), "describe", tuple(ids), key, (tuple(ids),))
        try:
            i = _resolve_one(ref if ref.is_reference or ref.extreme or ref.rel else replace(ref, definite=True),
                             scene, disc)
        except _Refuse as r:
            if r.extra == "nothing":
                return Answer("nothing", "nothing", None, ("nothing",))
            if r.reason == "ambiguous" and ref.rel is not None and ref.rel[1] is not None and not ref.extreme:
                # "what is right of the cyan cube?" with four there: name them all
                ids = _eval_set(_as_set(replace(ref, definite=False)), scene, disc)
                key = ("describe", tuple(sorted(tuple(cg.attrs_of(objs[k]).items()) for k in ids)))
                return Answer(_describe_many(scene, ids), "describe", tuple(ids), key, (tuple(ids),),
                              group=(tuple(ids), "things"))
            raise
        key = ("describe", (tuple(cg.attrs_of(objs[i]).items()),))
        return Answer(cg.describe(objs[i]), "describe", (i,), key, ((i,),))
    if kind == "where":
        i = _resolve_one(frame[1] if frame[1].is_reference else replace(frame[1], definite=True), scene, disc)
        words = _where_words(scene, i)
        text = ("it is " + " and ".join(_WHERE_TEXT[w] for w in words)) if words else "it is near the middle"
        return Answer(text, "where", words, ("where", words), ((i,),))
    if kind == "scene":
        counts = [(s, sum(1 for o in objs if o["shape"] == s)) for s in SHAPES]
        parts = [f"{n} {cg.PLURAL[s] if n != 1 else s}" for s, n in counts if n]
        text = f"I see {len(objs)} objects: {_join(parts)}"
        return Answer(text, "scene", tuple(counts), ("scene", tuple(counts)))
    raise _Refuse("cant_parse", CANT_TELL)  # pragma: no cover




def _anchor_mention(ref: Ref, scene: dict, disc: Discourse) -> tuple:
    """A count/exist question about things related to one object ("to its left", "the same color
    as the cube") keeps that object in focus: it is mentioned again after the counted ones."""
    for sub in ((ref.rel or (None, None))[1], (ref.same or (None, None))[1]):
        if isinstance(sub, Ref) and not sub.plural and sub.pronoun != "they":
            try:
                return ((_resolve_one(sub, scene, disc),),)
            except _Refuse:
                return ()
    return ()


def _truth_answer(truth: list[bool], mentions) -> Answer:
    if len(truth) == 1 or all(truth) or not any(truth):
        return _yes(all(truth), mentions)
    k = sum(truth)
    return Answer(f"no, only {k} of the {len(truth)}", "yesno", False, ("yesno", False), mentions)


def replay(scene: dict, caption: str | None, questions) -> Discourse:
    """The dialog memory after asking ``questions`` (in order) about ``scene``."""
    disc = Discourse.start(scene, caption)
    for q in questions:
        frame = parse_question(q)
        disc = disc.after(frame, execute(frame, scene, disc))
    return disc


# --------------------------------------------------------------------------------------------
# ALICE versions
# --------------------------------------------------------------------------------------------
def perceive(scene: dict, confusions: dict | None) -> dict:
    """``scene`` as a weaker perception sees it: attribute values replaced per ``confusions``."""
    if not confusions or not isinstance(scene.get("objects"), list):
        return scene
    objects = []
    for o in scene["objects"]:
        o2 = dict(o)
        for cat, mapping in confusions.items():
            if o2.get(cat) in mapping:
                o2[cat] = mapping[o2[cat]]
        objects.append(o2)
    return {**scene, "objects": objects}


def corrupt(answer: Answer, rng: random.Random, scene: dict) -> Answer:
    """A wrong answer of the same type as ``answer`` (the noisy ALICE's mistakes)."""
    k = answer.kind
    if k == "yesno":
        v = not answer.value
        return replace(answer, text="yes" if v else "no", value=v, key=("yesno", v))
    if k == "count":
        n = answer.value
        m = n + 1 if n == 0 or rng.random() < 0.5 else n - 1
        return replace(answer, text=str(m), value=m, key=("count", m))
    if k == "attr":
        cat = answer.category
        v = rng.choice([x for x in VALUES[cat] if x != answer.value])
        return replace(answer, text=v, value=v, key=("attr", cat, v))
    if k == "values":
        cat = answer.category
        vals = list(answer.value)
        pos = rng.randrange(len(vals))
        vals[pos] = rng.choice([x for x in VALUES[cat] if x not in vals] or [vals[pos]])
        vals = tuple(v for v in VALUES[cat] if v in vals)
        text = f"only {vals[0]}" if len(vals) == 1 else _join(list(vals))
        return replace(answer, text=text, value=vals, key=("values", cat, vals))
    if k == "describe" and len(answer.value) == 1:
        obj = dict(scene["objects"][answer.value[0]])
        cat = rng.choice(NP_ORDER)
        obj[cat] = rng.choice([x for x in VALUES[cat] if x != obj[cat]])
        key = ("describe", (tuple(cg.attrs_of(obj).items()),))
        return replace(answer, text=cg.describe(obj), key=key)
    if k == "where" and answer.value:
        swap = {"left": "right", "right": "left", "front": "behind", "behind": "front"}
        words = tuple(swap[w] for w in answer.value)
        text = "it is " + " and ".join(_WHERE_TEXT[w] for w in words)
        return replace(answer, text=text, value=words, key=("where", words))
    if k == "nothing":
        return replace(answer, text="I see nothing there", key=("nothing",))
    return answer


def scene_key(scene: dict) -> str:
    rows = sorted((o.get("shape"), o.get("color"), o.get("size"), o.get("material"),
                   round(o.get("3d_coords", [0, 0])[0], 2), round(o.get("3d_coords", [0, 0])[1], 2))
                  for o in scene.get("objects") or [])
    return repr(rows)


@dataclass
class Alice:
    """An answerer bot. ``respond`` answers one question; ``act`` plays the answerer seat."""

    name: str = "alice_exact"
    error_rate: float = 0.0
    confusions: dict | None = None
    seed: int = 0
    description: str = ""

    def respond(self, scene: dict, question: str, history=(), caption: str | None = None,
                round_index: int | None = None) -> Answer:
        """Answer ``question`` about ``scene`` after ``history`` (a list of (question, answer)
        pairs or of questions). ``round_index`` (1-based) seeds the error draw."""
        seen = perceive(scene, self.confusions)
        questions = [h[0] if isinstance(h, (list, tuple)) else h for h in history]
        disc = replay(seen, caption, questions)
        answer = execute(parse_question(question), seen, disc)
        if self.error_rate > 0 and answer.factual:
            r = round_index if round_index is not None else len(questions) + 1
            rng = random.Random(f"alice:{self.name}:{self.seed}:{scene_key(scene)}:{r}")
            if rng.random() < self.error_rate:
                answer = corrupt(answer, rng, seen)
        return answer

    def act(self, view: dict) -> dict | None:
        """The answerer seat: answer the pending question of a GuessWhich or visdial view."""
        if not view.get("your_turn") or view.get("expects") != "answer":
            return None
        question = view.get("pending_question")
        image = view.get("image") or {}
        scene = image.get("scene") or {}
        history = [(d["question"], d.get("answer")) for d in view.get("dialog", []) if d.get("answer") is not None]
        answer = self.respond(scene, question or "", history, view.get("caption"), view.get("round"))
        text = answer.text[:200]
        return {"type": "answer", "text": text[:1].upper() + text[1:] if answer.kind == "refuse" else text}


ALICE_VERSIONS: dict[str, dict] = {
    "alice_exact": {"error_rate": 0.0, "confusions": None,
                    "description": "Exact ALICE: perfect perception of the scene graph, never wrong."},
    "alice_noisy": {"error_rate": 0.2, "confusions": None,
                    "description": "ALICE that gives a wrong answer of the right type in 20% of rounds."},
    "alice_weak": {"error_rate": 0.0,
                   "confusions": {"color": {"cyan": "blue", "purple": "blue", "brown": "red"}},
                   "description": "ALICE with weaker colour vision (sees cyan and purple as blue, brown as red)."},
}


def make_alice(name: str = "alice_exact", **overrides) -> Alice:
    params = {**ALICE_VERSIONS.get(name, {}), **overrides}
    return Alice(name=name, **params)
