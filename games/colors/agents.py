"""Baseline agents for the color reference game (``colors_v1``).

After Monroe, Hawkins, Goodman & Potts (2017), "Colors in Context", and the literal / pragmatic
listeners of seeds/003 (Newman, Mirchandani & Gong), with a hand-built lexicon instead of trained
networks: the 949 XKCD color-survey names (``matplotlib._color_data.XKCD_COLORS``), each a point
in CIELAB, and CIEDE2000 as the semantics of "this name fits that color".

* :class:`LiteralListener` (L0): finds color names in the speaker's messages of this round
  (longest-match n-grams over the lexicon, a fuzzy match for typos, modifiers such as dark / light
  / pale / bright, "not X"), scores each context color by its summed CIEDE2000 distance to the
  named colors, and clicks the argmax of ``L0(c | u) ∝ exp(-cost / TEMPERATURE)`` (a "none of
  these" outcome at ``NULL_COST`` keeps names that fit no color from looking informative).
* :class:`PragmaticListener` (L1, Rational Speech Acts): ``L1(c | u) ∝ S1(u | c)`` with
  ``S1(u | c) ∝ exp(ALPHA * (log L0(c | u) - cost(u)))`` over the lexicon's utterances, uniform prior.
* :class:`LexiconSpeaker`: says the lexicon name that maximises ``L0(target | name)`` minus a small
  cost for length and for rare names (the XKCD list is ordered by how often people used a name).
* :class:`RandomListener`: clicks a seeded uniform random position (the chance baseline).

Every agent is stateless (``act(view)`` reads only the view); a listener that finds no color word
still clicks (a seeded guess), so matches progress. ``summarize`` formats simulate results.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass
from functools import cache

import numpy as np
from rapidfuzz import fuzz, process

from agents.base import AgentSpec
from games.colors.content import delta_e, hex_to_lab, hsl_to_lab

# ----------------------------------------------------------------------------------------- constants
GAME_ID = "colors_v1"
CONDITIONS = ("far", "split", "close")
TEMPERATURE = 4.0        # CIEDE2000 units per nat in the literal listener's softmax
NULL_COST = 20.0         # CIEDE2000 cost of "none of these" (the conditions' close threshold)
ALPHA = 2.0              # RSA speaker rationality
LENGTH_COST = 0.02       # utterance cost per word
RARITY_COST = 0.3        # utterance cost for the rarest name (scaled by popularity rank)
FUZZY_CUTOFF = 82        # rapidfuzz ratio needed to read a misspelt word as a color name
FUZZY_MIN_LEN = 4
NEGATION_WINDOW = 3      # "not" applies to the next color named within this many tokens
# modifier + color: (change of L*, factor on chroma C*); "pale blue" = blue, lighter and less vivid
MODIFIERS = {
    "dark": (-15.0, 1.0), "deep": (-10.0, 1.15), "light": (15.0, 1.0), "pale": (10.0, 0.6),
    "bright": (5.0, 1.3), "vivid": (0.0, 1.3), "dull": (0.0, 0.6), "muted": (0.0, 0.6),
    "greyish": (0.0, 0.5),
}
# modifier alone ("the darker one"): the context color at the low (-1) / high (+1) end of L* or C*
RELATIVE = {
    "dark": ("L", -1.0), "deep": ("L", -1.0), "light": ("L", 1.0), "pale": ("C", -1.0),
    "bright": ("C", 1.0), "vivid": ("C", 1.0), "dull": ("C", -1.0), "muted": ("C", -1.0),
    "greyish": ("C", -1.0),
}
MODIFIER_FORMS = {
    **{base: base for base in MODIFIERS},
    "darker": "dark", "darkest": "dark", "deeper": "deep", "deepest": "deep",
    "lighter": "light", "lightest": "light", "paler": "pale", "palest": "pale",
    "brighter": "bright", "brightest": "bright", "duller": "dull", "dullest": "dull",
    "grayish": "greyish", "saturated": "vivid", "desaturated": "muted", "faded": "muted",
}
SPELLING = {"gray": "grey", "colour": "color"}
NEGATIONS = {"not", "nt", "t", "never", "isn", "aren", "don", "without"}  # "no," often opens a correction
# names a baseline speaker should not send to crowdworkers (the listener still understands them)
CRUDE = {"shit", "poo", "poop", "puke", "vomit", "barf", "piss", "diarrhea", "booger", "snot"}


# ---------------------------------------------------------------------------------------- lexicon
@dataclass(frozen=True)
class Lexicon:
    names: tuple[str, ...]
    tokens: tuple[tuple[str, ...], ...]
    lab: np.ndarray            # (N, 3) CIELAB of each name
    cost: np.ndarray           # (N,) utterance cost: length + rarity
    speakable: np.ndarray      # (N,) bool: fit for the baseline speaker
    index: dict                # token tuple -> name index (the more common name wins)
    max_len: int
    single_words: tuple[str, ...]


def tokenize(text: str) -> list[str]:
    return [SPELLING.get(tok, tok) for tok in re.findall(r"[a-z]+", text.lower())]


@cache
def lexicon() -> Lexicon:
    """The XKCD lexicon with CIELAB coordinates, built once per process (the names imported here:
    matplotlib's package costs every process that imports this module, each Django process, about
    0.2 s of CPU at start; docs/testing.md "Where the time goes")."""
    from matplotlib._color_data import XKCD_COLORS

    names = tuple(key.removeprefix("xkcd:") for key in XKCD_COLORS)
    tokens = tuple(tuple(tokenize(name)) for name in names)
    n = len(names)
    rarity = (n - 1 - np.arange(n)) / (n - 1)  # the file lists the most used names last
    words = np.array([len(toks) for toks in tokens], dtype=float)
    index: dict[tuple[str, ...], int] = {}
    for i, toks in enumerate(tokens):       # later (more common) names overwrite earlier ones
        index[toks] = i
    return Lexicon(
        names=names,
        tokens=tokens,
        lab=hex_to_lab(list(XKCD_COLORS.values())),
        cost=LENGTH_COST * words + RARITY_COST * rarity,
        speakable=np.array([not CRUDE.intersection(toks) for toks in tokens]),
        index=index,
        max_len=max(len(toks) for toks in tokens),
        single_words=tuple(sorted({toks[0] for toks in tokens if len(toks) == 1})),
    )


# ------------------------------------------------------------------------------------ the semantics
@dataclass(frozen=True)
class Term:
    """One piece of meaning found in a message."""
    lab: np.ndarray | None = None      # a named color (possibly modified) ...
    negated: bool = False
    attribute: str | None = None       # ... or a bare "darkest"/"brightest": "L" or "C" ...
    direction: float = 0.0             # ... towards the high (+1) or low (-1) end of the context


def modify(lab: np.ndarray, modifier: str) -> np.ndarray:
    d_lightness, chroma_factor = MODIFIERS[modifier]
    lightness, a, b = lab
    return np.array([np.clip(lightness + d_lightness, 0.0, 100.0), a * chroma_factor, b * chroma_factor])


def relative_term(modifier: str) -> Term:
    attribute, direction = RELATIVE[modifier]
    return Term(attribute=attribute, direction=direction)


def parse(text: str) -> list[Term]:
    """Color terms in ``text``: longest lexicon matches, modifiers, negation, fuzzy single words."""
    lex = lexicon()
    toks = tokenize(text)
    terms: list[Term] = []
    pending: list[str] = []
    negate_until = -1
    i = 0
    while i < len(toks):
        match = None
        for n in range(min(lex.max_len, len(toks) - i), 0, -1):
            key = tuple(toks[i:i + n])
            if key in lex.index and not (n == 1 and key[0] in MODIFIER_FORMS):
                match = (lex.index[key], n)
                break
        if match is None and toks[i] not in MODIFIER_FORMS and len(toks[i]) >= FUZZY_MIN_LEN:
            found = process.extractOne(toks[i], lex.single_words, scorer=fuzz.ratio,
                                       score_cutoff=FUZZY_CUTOFF)
            if found is not None:
                match = (lex.index[(found[0],)], 1)
        if match is not None:
            lab = lex.lab[match[0]]
            for modifier in pending:
                lab = modify(lab, modifier)
            terms.append(Term(lab=lab, negated=i <= negate_until))
            pending, negate_until = [], -1   # a negation covers the next color term only
            i += match[1]
            continue
        tok = toks[i]
        if tok in MODIFIER_FORMS:
            pending.append(MODIFIER_FORMS[tok])
        elif tok in NEGATIONS:
            negate_until = i + NEGATION_WINDOW
        i += 1
    terms.extend(relative_term(modifier) for modifier in pending)
    return terms


def term_costs(terms: list[Term], context_lab: np.ndarray) -> np.ndarray:
    """Cost of each context color under the terms (CIEDE2000-like units; lower fits better)."""
    costs = np.zeros(len(context_lab))
    for term in terms:
        if term.lab is not None:
            distance = delta_e(term.lab[None, :], context_lab)
            costs += -distance if term.negated else distance
        else:
            values = context_lab[:, 0] if term.attribute == "L" else np.hypot(context_lab[:, 1],
                                                                               context_lab[:, 2])
            extreme = values.max() if term.direction > 0 else values.min()
            costs += np.abs(values - extreme)
    return costs


def softmax_rows(scores: np.ndarray) -> np.ndarray:
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    return weights / weights.sum(axis=-1, keepdims=True)


def literal_probs(costs: np.ndarray, n_terms: int = 1) -> np.ndarray:
    """L0 over the context colors plus a last "none of these" outcome, from costs (..., n).

    ``L0(c | u, C) ∝ exp(-cost(u, c) / TEMPERATURE)``; "none of these" costs ``NULL_COST`` per
    color term, so a name far from every color says little even if it is a bit less far from one.
    """
    null = np.full(costs.shape[:-1] + (1,), NULL_COST * max(1, n_terms))
    return softmax_rows(-np.concatenate([costs, null], axis=-1) / TEMPERATURE)


def lexicon_literal_matrix(context_lab: np.ndarray) -> np.ndarray:
    """L0(c | name, C) for every lexicon name (rows); columns: context colors, then "none"."""
    distances = delta_e(lexicon().lab[:, None, :], context_lab[None, :, :])
    return literal_probs(distances)


def message_literal_probs(terms: list[Term], context_lab: np.ndarray) -> np.ndarray:
    n_colors = sum(term.lab is not None for term in terms)
    return literal_probs(term_costs(terms, context_lab), n_colors)


def pragmatic_probs(terms: list[Term], words: int, context_lab: np.ndarray) -> np.ndarray:
    """L1(c | u, C) ∝ S1(u | c, C) with a uniform prior over the context colors.

    ``S1(u | c, C) ∝ exp(ALPHA * (log L0(c | u, C) - cost(u)))``, normalised over the lexicon's
    names plus the observed message ``u`` itself (cost: ``LENGTH_COST`` per word).
    """
    n = len(context_lab)
    lex = lexicon()
    with np.errstate(divide="ignore"):
        log_l0 = np.log(lexicon_literal_matrix(context_lab)[:, :n])           # (N, n)
        log_observed = np.log(message_literal_probs(terms, context_lab)[:n])  # (n,)
    utilities = ALPHA * (log_l0 - lex.cost[:, None])
    own = ALPHA * (log_observed - LENGTH_COST * words)
    log_z = np.logaddexp(np.logaddexp.reduce(utilities, axis=0), own)         # per context color
    return softmax_rows(own - log_z)


# ------------------------------------------------------------------------------------------- agents
def context_lab(view: dict) -> np.ndarray:
    return hsl_to_lab([color["hsl"] for color in view["colors"]])


def speaker_text(view: dict) -> str:
    return " ".join(m["text"] for m in view["messages"] if m["role"] == "speaker")


def guess(view: dict, seed: int = 0) -> int:
    """A reproducible uniform guess for this view (no hidden state between calls)."""
    rng = random.Random(f"{seed}:{view['round']}:{[c['hsl'] for c in view['colors']]}")
    return rng.randrange(len(view["colors"]))


def click(view: dict, position: int) -> dict:
    return {"type": "click", "position": int(position), "round": view["round"]}


class LiteralListener:
    """Clicks the color the literal listener L0 finds most likely."""

    def __init__(self, seed: int = 0):
        self.seed = seed

    def probabilities(self, view: dict) -> np.ndarray | None:
        terms = parse(speaker_text(view))
        if not terms:
            return None
        return message_literal_probs(terms, context_lab(view))[:-1]

    def act(self, view: dict) -> dict | None:
        if not view.get("can_click"):
            return None
        probs = self.probabilities(view)
        return click(view, guess(view, self.seed) if probs is None else int(np.argmax(probs)))


class PragmaticListener(LiteralListener):
    """Clicks the color the RSA listener L1 finds most likely."""

    def probabilities(self, view: dict) -> np.ndarray | None:
        text = speaker_text(view)
        terms = parse(text)
        return pragmatic_probs(terms, len(text.split()), context_lab(view)) if terms else None


class RandomListener:
    """Clicks a uniformly random position, reproducible from ``seed`` and the view."""

    def __init__(self, seed: int = 0):
        self.seed = seed

    def act(self, view: dict) -> dict | None:
        if not view.get("can_click"):
            return None
        return click(view, guess(view, self.seed))


class LexiconSpeaker:
    """Names the target with the lexicon entry that best singles it out for a literal listener."""

    def choose(self, view: dict) -> str:
        lex = lexicon()
        target = next(i for i, color in enumerate(view["colors"]) if color.get("target"))
        utility = lexicon_literal_matrix(context_lab(view))[:, target] - lex.cost
        utility[~lex.speakable] = -np.inf
        return lex.names[int(np.argmax(utility))]

    def act(self, view: dict) -> dict | None:
        if view.get("over") or view.get("role") != "speaker" or not view.get("colors"):
            return None
        if any(m["role"] == "speaker" for m in view["messages"]):
            return None
        return {"type": "chat", "text": self.choose(view), "round": view["round"]}


AGENTS: list[AgentSpec] = [
    AgentSpec("colors_lexicon_speaker", GAME_ID, "speaker", LexiconSpeaker,
              "Says the XKCD color name that maximises a literal listener's chance of the target "
              "(CIEDE2000 semantics) minus a small length/rarity cost."),
    AgentSpec("colors_literal_listener", GAME_ID, "listener", LiteralListener,
              "Finds XKCD color names in the speaker's messages and clicks the closest color "
              "by CIEDE2000 (literal listener L0)."),
    AgentSpec("colors_pragmatic_listener", GAME_ID, "listener", PragmaticListener,
              "RSA pragmatic listener L1 over the XKCD lexicon on top of the literal listener."),
    AgentSpec("colors_random_listener", GAME_ID, "listener", RandomListener,
              "Clicks a seeded random color once the speaker has spoken (chance baseline)."),
]


# ---------------------------------------------------------------------------------------- reporting
def summarize(outcomes: list[dict]) -> str:
    """Accuracy per condition (with counts) over the outcomes of several matches."""
    lines = [f"{GAME_ID}: {len(outcomes)} matches"]
    played = sum(o.get("played", 0) for o in outcomes)
    correct = sum(o.get("correct", 0) for o in outcomes)
    rows = [("overall", correct, played)]
    for condition in CONDITIONS:
        stats = [o.get("by_condition", {}).get(condition, {}) for o in outcomes]
        rows.append((condition, sum(s.get("correct", 0) for s in stats),
                     sum(s.get("played", 0) for s in stats)))
    for label, hits, total in rows:
        rate = f"{100.0 * hits / total:5.1f}%" if total else "    -"
        lines.append(f"  {label:<8} {rate}  ({hits}/{total})")
    scores = [o["gricean_true_score"] for o in outcomes if o.get("gricean_true_score") is not None]
    if scores:
        lines.append(f"  Gricean True Score (mean over {len(scores)} matches): "
                     f"{sum(scores) / len(scores):.3f}")
    return "\n".join(lines)


def plot(outcomes: list[dict], path: str) -> None:
    """Accuracy per condition with 95% bootstrap intervals over matches (``simulate --plot``)."""
    import matplotlib   # here: matplotlib and scipy.stats take seconds to load; only a plot needs them

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from scipy import stats

    labels, means, lows, highs = [], [], [], []
    for condition in CONDITIONS:
        per_match = [o["by_condition"][condition]["accuracy"] for o in outcomes
                     if o.get("by_condition", {}).get(condition, {}).get("accuracy") is not None]
        if not per_match:
            continue
        mean = float(np.mean(per_match))
        if len(per_match) > 1 and len(set(per_match)) > 1:
            ci = stats.bootstrap((np.array(per_match),), np.mean, confidence_level=0.95, random_state=0)
            low, high = ci.confidence_interval.low, ci.confidence_interval.high
        else:
            low = high = mean
        labels.append(condition)
        means.append(mean)
        lows.append(mean - low)
        highs.append(high - mean)
    fig, ax = plt.subplots(figsize=(5, 3.2))
    ax.bar(labels, means, yerr=[lows, highs], capsize=6, color=["#4c9be8", "#f2a541", "#e05a5a"][:len(labels)])
    ax.axhline(1 / 3, color="grey", linestyle="--", linewidth=1, label="chance")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("listener accuracy")
    ax.set_title(f"Color game, {len(outcomes)} matches (95% bootstrap CI)")
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
