"""Generated training data for the neural color agents (never downloaded).

Each example is one round of the color game as a listener sees it, plus what a speaker said::

    {"colors": [[h, s, l], [h, s, l], [h, s, l]],   # the listener's order
     "target": 0..2, "condition": "far" | "split" | "close", "text": "the darker blue",
     "phenomenon": "comparative"}

The contexts come from the game's own sampler (``balanced_conditions`` and ``sample_triples`` of
:mod:`games.colors.content`: CIEDE2000 conditions, balanced far / split / close, default
settings). The descriptions are built from the game's own lexicon (:mod:`games.colors.agents`:
the XKCD color-survey names in CIELAB with CIEDE2000 semantics) by a small "human-like speaker" that mixes the phenomena people show in the Colors in Context corpus
(Monroe et al. 2017, sec. 2-3): discriminative names, modified names ("dark teal", "pale pink"),
hedges ("kind of green", "blue-ish"), comparatives and superlatives ("the darker one",
"brightest", "the lighter blue"), negations ("not the green or the purple"), and surface noise
(typos, capitals, short forms, punctuation).

Two disjoint families of *surface* templates exist. ``style="train"`` uses only the training ones;
``style="people"`` (the held-out "people's kind of language" test set) uses phrasings, hedges,
comparative constructions, negation forms, short forms and typo kinds that never occur in training,
so a model that only memorised its training strings does worse there. Everything is seeded:
the same ``(n, seed, style)`` gives the same list, byte for byte.

Public API: :func:`make_examples`, :func:`make_contexts`, :data:`GENERATOR_VERSION`.
"""
from __future__ import annotations

import random
from functools import cache

import numpy as np

from games.colors import agents as rule
from games.colors import content
from games.colors.content import delta_e, hsl_to_lab

GENERATOR_VERSION = "colors_neural_data_v1"
COMMON_NAMES = 160        # the most used XKCD names the generated speaker picks from
NAME_TEMPERATURE = 0.08   # softmax temperature over literal-listener utility when picking a name
BASIC = ("red", "orange", "yellow", "green", "blue", "purple", "pink", "brown", "grey", "teal",
         "magenta", "cyan", "lime", "violet", "olive", "maroon", "turquoise", "lavender", "tan",
         "navy", "beige", "mauve", "salmon", "peach", "lilac", "aqua", "indigo", "gold", "khaki")
EXTREME_MARGIN = 8.0      # L* or C* gap to the next color for "the darker/brighter one"

# Phenomena and their weights (a phenomenon that does not fit the context is skipped).
PHENOMENA = (("name", 0.32), ("modified", 0.2), ("hedge", 0.14), ("comparative", 0.16),
             ("negation", 0.1), ("name_pair", 0.08))

# Surface templates: TRAIN and PEOPLE share no template (the held-out set's phrasings are new).
WRAP = {
    "train": ("{}", "{}", "the {}", "the {} one", "{} color", "its {}", "{}!", "the {} color",
              "{} one"),
    "people": ("i think it's the {}", "the one that looks {}", "go for {}", "{} please",
               "pick the {} one", "hmm {}", "ok {} this time", "{} :)", "click {}"),
}
HEDGE = {
    "train": ("kind of {}", "{}ish", "{}-ish", "sort of {}", "{} ish"),
    "people": ("{}y", "somewhat {}", "almost {}", "a bit {}", "{}-y looking", "kinda {}"),
}
COMPARATIVE = {  # {adj}: darker / lighter / brighter / duller, {sup}: darkest ..., {name}
    "train": ("the {adj} one", "{sup}", "the {sup} one", "the {adj} {name}", "{adj} {name}",
              "the {sup} {name}"),
    "people": ("the one that's {adj}", "{name} but {adj}", "the {adj} of the {name}s",
               "{sup} of them", "more {base} one"),
}
NEGATION = {  # {a}, {b}: names of the two distractors; {t}: the target's name
    "train": ("not the {a} or the {b}", "not {a} or {b}", "{t} not {a}", "{t}, not the {a} one"),
    "people": ("not {a} and not {b}", "{t}, definitely not {a}", "the {t} one not the {a} one",
               "no {a}, no {b}"),
}
PAIR = {  # a modifier before a name and a second name: "greenish blue", "blue green"
    "train": ("{a} {b}", "{a}ish {b}", "{a}-{b}"),
    "people": ("{b} with some {a}", "{b} leaning {a}"),
}
ADJECTIVES = {  # direction -> (comparative, superlative, base); L* or C*
    ("L", -1): ("darker", "darkest", "dark"), ("L", 1): ("lighter", "lightest", "light"),
    ("C", 1): ("brighter", "brightest", "bright"), ("C", -1): ("duller", "dullest", "dull"),
}
PEOPLE_ADJECTIVES = {("L", -1): ("deeper", "deepest", "deep"), ("C", -1): ("paler", "palest", "pale")}
SHORT = {"train": {"purple": "purp", "yellow": "yel"},
         "people": {"blue": "blu", "green": "grn", "purple": "prpl", "orange": "orng", "pink": "pnk"}}


# modifier -> the rule semantics' modifier used to check that it fits (agents.MODIFIERS)
MODIFIER_MEANING = {"dark": "dark", "deep": "deep", "light": "light", "pale": "pale", "dull": "dull",
                    "greyish": "greyish", "muted": "muted", "bright": "bright", "vivid": "vivid",
                    "darkish": "dark", "lightish": "light", "pastel": "pale", "dusty": "muted",
                    "grayish": "greyish", "neon": "vivid"}
MODIFIER_WORDS = tuple(MODIFIER_MEANING)
CHUNK = 256                # contexts per vectorised CIEDE2000 call


@cache
def name_table() -> tuple[tuple[str, ...], np.ndarray, np.ndarray, np.ndarray]:
    """The common speakable lexicon names, their CIELAB, the basic names' indices among them, and
    the CIELAB of every (basic name, modifier) pair (rule semantics of "dark teal")."""
    lex = rule.lexicon()
    order = [i for i in range(len(lex.names) - 1, -1, -1) if lex.speakable[i]]
    keep = list(order[:COMMON_NAMES])
    keep += [lex.names.index(name) for name in BASIC if lex.names.index(name) not in keep]
    names = tuple(lex.names[i] for i in keep)
    basic = np.array([names.index(name) for name in BASIC])
    name_lab = lex.lab[keep]
    modified = np.array([[rule.modify(name_lab[b], MODIFIER_MEANING[m]) for m in MODIFIER_WORDS]
                         for b in basic])
    return names, name_lab, basic, modified


def context_labs(contexts: list[dict]) -> np.ndarray:
    if not contexts:
        return np.zeros((0, 3, 3))
    return hsl_to_lab([c["colors"] for c in contexts])


def distance_tables(contexts: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    """CIEDE2000 from every common name (n, N, 3) and every modified basic name (n, B, M, 3) to
    each context color, in vectorised chunks."""
    _, name_lab, _, modified = name_table()
    lab = context_labs(contexts)
    names, mods = [], []
    for start in range(0, len(contexts), CHUNK):
        block = lab[start:start + CHUNK]
        names.append(delta_e(name_lab[None, :, None, :], block[:, None, :, :]))
        mods.append(delta_e(modified[None, :, :, None, :], block[:, None, None, :, :]))
    if not names:
        return np.zeros((0, len(name_lab), 3)), np.zeros((0,) + modified.shape[:2] + (3,))
    return np.concatenate(names), np.concatenate(mods)


def make_contexts(n: int, seed: int) -> list[dict]:
    """``n`` contexts from the game's own sampler (:mod:`games.colors.content`: balanced
    conditions, CIEDE2000 rejection sampling with the game's default settings), each in a seeded
    random order; ``target`` is the target's position in that order."""
    params = content.settings({"rounds": max(n, 1)})
    rng = np.random.default_rng(seed)
    conditions = content.balanced_conditions(n, rng)
    pools = {name: iter(content.sample_triples(name, conditions.count(name), rng, params))
             for name in content.CONDITIONS if name in conditions}
    out = []
    for condition in conditions:
        triple = next(pools[condition]).tolist()   # target first
        slots = rng.permutation(3).tolist()        # slots[i]: where color i is shown
        colors: list = [None, None, None]
        for index, slot in enumerate(slots):
            colors[slot] = triple[index]
        out.append({"colors": colors, "target": slots[0], "condition": condition})
    return out


def chroma(lab: np.ndarray) -> np.ndarray:
    return np.hypot(lab[..., 1], lab[..., 2])


class Describer:
    """A seeded human-like speaker over the common lexicon names (one instance per data set)."""

    def __init__(self, style: str, rng: random.Random):
        if style not in WRAP:
            raise ValueError(f"style must be one of {tuple(WRAP)}, not {style!r}")
        self.style, self.rng = style, rng
        self.names, self.name_lab, self.basic, _ = name_table()
        self.dist = self.mod_dist = None   # this example's distance tables (set by describe)

    # ---- names
    def utility(self, target: int) -> np.ndarray:
        """Literal-listener probability of ``target`` for every common name (rule semantics)."""
        return rule.literal_probs(self.dist)[:, target]

    def pick(self, scores: np.ndarray) -> str:
        weights = np.exp((scores - scores.max()) / NAME_TEMPERATURE)
        return self.names[self.rng.choices(range(len(scores)), weights=weights.tolist())[0]]

    def discriminative_name(self, target: int) -> str:
        return self.pick(self.utility(target))

    def nearest_basic(self, target: int) -> int:
        """Index (among ``BASIC``) of the basic name closest to the color ``target``."""
        return int(np.argmin(self.dist[self.basic, target]))

    # ---- phenomena (each returns the core phrase or None when it does not fit)
    def name(self, lab, target):
        return self.discriminative_name(target)

    def modified(self, lab, target):
        b = self.nearest_basic(target)
        name_lab = self.name_lab[self.basic[b]]
        d_light = lab[target][0] - name_lab[0]
        ratio = chroma(lab[target]) / max(chroma(name_lab), 1e-6)
        if chroma(name_lab) < 10:  # a grey has no chroma to compare against
            ratio = 1.0
        options = []
        if d_light < -8:
            options += ["dark", "deep"] if self.style == "train" else ["darkish", "deep"]
        if d_light > 8:
            options += ["light", "pale"] if self.style == "train" else ["lightish", "pastel"]
        if ratio < 0.6:
            options += ["dull", "greyish", "muted"] if self.style == "train" else ["dusty", "grayish"]
        if ratio > 1.3:
            options += ["bright", "vivid"] if self.style == "train" else ["neon", "bright"]
        if not options:
            return None
        modifier = self.rng.choice(options)
        # the modified basic name must still single out the target for the rule listener
        costs = self.mod_dist[b, MODIFIER_WORDS.index(modifier)]
        if int(np.argmin(costs)) != target:
            return None
        return f"{modifier} {BASIC[b]}"

    def hedge(self, lab, target):
        name = self.discriminative_name(target)
        if " " in name:
            return None
        return self.rng.choice(HEDGE[self.style]).format(name)

    def comparative(self, lab, target):
        values = {"L": lab[:, 0], "C": chroma(lab)}
        fits = []
        for (attribute, direction), forms in ADJECTIVES.items():
            v = values[attribute] * direction
            others = np.delete(v, target)
            if v[target] - others.max() >= EXTREME_MARGIN:
                if self.style == "people" and (attribute, direction) in PEOPLE_ADJECTIVES:
                    forms = self.rng.choice([forms, PEOPLE_ADJECTIVES[(attribute, direction)]])
                fits.append(forms)
        if not fits:
            return None
        adj, sup, base = self.rng.choice(fits)
        name = BASIC[self.nearest_basic(target)]
        return self.rng.choice(COMPARATIVE[self.style]).format(adj=adj, sup=sup, base=base, name=name)

    def negation(self, lab, target):
        others = [i for i in range(3) if i != target]
        names = [self.discriminative_name(i) for i in others]
        t_name = self.discriminative_name(target)
        if len({t_name, *names}) < 3:
            return None
        a, b = names if self.rng.random() < 0.5 else names[::-1]
        return self.rng.choice(NEGATION[self.style]).format(a=a, b=b, t=t_name)

    def name_pair(self, lab, target):
        first = self.nearest_basic(target)
        basic_dist = self.dist[self.basic]                       # (B, 3)
        # the second name that, added to the first, best singles out the target (summed costs)
        costs = basic_dist[first][None, :] + basic_dist          # (B, 3)
        margin = np.delete(costs, target, axis=1).min(axis=1) - costs[:, target]
        margin[first] = -np.inf
        second = int(np.argmax(margin))
        if margin[second] <= 0:
            return None
        return self.rng.choice(PAIR[self.style]).format(a=BASIC[second], b=BASIC[first])

    # ---- surface
    def surface(self, phrase: str, phenomenon: str) -> str:
        rng = self.rng
        if phenomenon in ("name", "modified", "hedge", "name_pair") and rng.random() < 0.6:
            phrase = rng.choice(WRAP[self.style]).format(phrase)
        words = phrase.split(" ")
        short = SHORT[self.style]
        if rng.random() < 0.08:
            words = [short.get(w, w) for w in words]
        if rng.random() < 0.12:
            words = [self.typo(w) if len(w) >= 5 and rng.random() < 0.5 else w for w in words]
        text = " ".join(words)
        roll = rng.random()
        if roll < 0.15:
            text = text.capitalize()
        elif roll < 0.18 and self.style == "people":
            text = text.upper()
        if self.style == "people" and rng.random() < 0.1:
            text += rng.choice(["?", "...", " lol"])
        return text

    def typo(self, word: str) -> str:
        i = self.rng.randrange(1, len(word) - 1)
        if self.style == "train":            # a dropped letter
            return word[:i] + word[i + 1:]
        if self.rng.random() < 0.5:          # held out: swapped neighbours or a doubled letter
            return word[:i] + word[i + 1] + word[i] + word[i + 2:]
        return word[:i] + word[i] + word[i:]

    def describe(self, context: dict, lab: np.ndarray, dist: np.ndarray,
                 mod_dist: np.ndarray) -> tuple[str, str]:
        target = context["target"]
        self.dist, self.mod_dist = dist, mod_dist
        kinds, weights = zip(*PHENOMENA)
        for _ in range(8):
            kind = self.rng.choices(kinds, weights=weights)[0]
            phrase = getattr(self, kind)(lab, target)
            if phrase:
                return self.surface(phrase, kind), kind
        return self.surface(self.name(lab, target), "name"), "name"



def make_examples(n: int, seed: int, style: str = "train") -> list[dict]:
    """``n`` (context, target, utterance) examples, reproducible from ``seed`` and ``style``."""
    describer = Describer(style, random.Random(f"{GENERATOR_VERSION}:{style}:{seed}"))
    contexts = make_contexts(n, seed)
    labs, (dist, mod_dist) = context_labs(contexts), distance_tables(contexts)
    examples = []
    for context, lab, d, m in zip(contexts, labs, dist, mod_dist):
        text, kind = describer.describe(context, lab, d, m)
        examples.append({**context, "text": text, "phenomenon": kind})
    return examples
