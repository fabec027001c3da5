"""QBot: a CLEVR-Dialog-style questioner that keeps a belief over candidate scenes and guesses.

The questioner of GuessWhich (``seeds/001_*``) and of CLEVR-Dialog (``seeds/002_*``) does not see the
secret image. Ours:

* reads the caption (:func:`clevr.captions.parse_caption`) and every question/answer so far;
* keeps a belief over the candidate scenes (the GuessWhich pool; in visual-dialog chat, where there
  is no pool, a set of imagined scenes consistent with the caption), recomputed from the dialog in
  its view on every call (agents are stateless). For each candidate, the dialog is replayed with
  ALICE's exact program executor (:mod:`clevr.alice`): an answer that agrees with what the
  candidate predicts keeps its weight (1 - epsilon), one that disagrees multiplies it by epsilon,
  "I can't tell" changes nothing. Epsilon (default 0.1) makes the belief robust to a noisy ALICE
  or a sloppy human answerer;
* asks the CLEVR-Dialog question (count, exist, seek, with coreference to what it has heard:
  "what is its color?", "how many things are to its left?", "how about to its right?", the
  caption's objects) whose answer it expects to be most informative: the entropy of the predicted
  answer under the current belief (expected information gain with noiseless answers);
* guesses the most likely candidate; in the final phase it clicks candidates in belief order.

``strategy="random"`` is the paper's random baseline: random questions, random guesses.

Public API: ``QBot(name, strategy="infogain", epsilon=0.1, seed=0)`` with ``act(view)``,
``belief(view) -> {image id: probability}``, ``next_question(view) -> str``;
``candidate_questions(dialog) -> list[str]``; ``interpret(text) -> dict``;
``consistent(predicted_answer, text) -> bool | None``; ``imagine_scenes(caption, seed, n)``.
"""
from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass
from functools import lru_cache

from clevr import captions as cg
from clevr.alice import Answer, Discourse, execute, parse_question
from clevr.captions import COLORS, MATERIALS, NP_ORDER, SHAPES, SIZES, VALUES
from clevr.scenes import DIRECTIONS, compute_relationships

_YES = {"yes", "yeah", "yep", "yup", "correct", "right", "true", "sure", "affirmative", "indeed"}
_NO = {"no", "nope", "not", "none", "nothing", "isn", "aren", "false", "neither", "nah"}
_SYNONYMS = {"grey": "gray", "ball": "sphere", "balls": "sphere", "block": "cube", "blocks": "cube",
             "box": "cube", "boxes": "cube", "big": "large", "tiny": "small", "little": "small",
             "shiny": "metal", "metallic": "metal", "matte": "rubber", "cubes": "cube",
             "spheres": "sphere", "cylinders": "cylinder"}
_SIDE_WORDS = {"left": "left", "right": "right", "front": "front", "back": "behind", "behind": "behind",
               "rear": "behind"}


@lru_cache(maxsize=4096)
def interpret(text: str) -> dict:
    """What a received answer says, whoever wrote it: polarity, numbers, attribute values,
    whether it refuses, says the object is missing, or is ambiguous."""
    t = (text or "").lower().replace("\u2019", "'")
    t = re.sub(r"\bcan't\b|\bcannot\b", "can not", t)
    t = re.sub(r"\bwon't\b", "will not", t)
    t = re.sub(r"n't\b", " not", t)
    words = re.findall(r"[a-z]+|\d+", t)
    norm = [_SYNONYMS.get(w, w) for w in words]
    out: dict = {"polarity": None, "number": None, "values": {}, "refusal": None, "sides": set()}
    if re.search(r"can ?not tell which|which one do you mean|which .* you mean", t):
        out["refusal"] = "ambiguous"
    elif re.search(r"can ?not tell|outside what|do not know|not sure|no idea|cannot see|can not see|"
                   r"unsure|hard to (say|tell)", t):
        out["refusal"] = "unknown"
    elif re.search(r"do not see|there is no |there are no |there are not any|there is not any|no such|"
                   r"does not exist|do not have any", t):
        out["refusal"] = "missing"
    for w in norm:
        if out["polarity"] is None and w in _YES:
            out["polarity"] = True
        elif out["polarity"] is None and w in _NO:
            out["polarity"] = False
        n = cg.parse_number(w)
        if n is not None and out["number"] is None:
            out["number"] = n
        if w in cg.CATEGORY_OF:
            out["values"].setdefault(cg.CATEGORY_OF[w], set()).add(w)
        if w in _SIDE_WORDS:
            out["sides"].add(_SIDE_WORDS[w])
    if out["number"] is None:
        if re.search(r"\b(none|no|nothing|zero)\b", t):
            out["number"] = 0
        elif re.search(r"\b(a single|only one|just one|an? )\b", t):
            out["number"] = 1
    if "nothing" in norm:
        out["nothing"] = True
    return out


def consistent(pred: Answer, text: str) -> bool | None:
    """Does the received ``text`` agree with the answer ``pred`` a candidate scene predicts?
    None when the text tells nothing either way."""
    said = interpret(text)
    if said["refusal"] == "unknown":
        return None
    if pred.kind == "refuse":
        if pred.value == "ambiguous":
            return said["refusal"] == "ambiguous"
        if pred.value == "missing":
            return said["refusal"] == "missing" or bool(said.get("nothing")) or said["polarity"] is False
        return None
    if said["refusal"] in ("ambiguous",):
        return False
    if pred.kind == "yesno":
        if said["polarity"] is None:
            return False if said["refusal"] == "missing" and pred.value else None
        return said["polarity"] == pred.value
    if pred.kind == "count":
        if said["number"] is None:
            return None
        return said["number"] == pred.value
    if pred.kind in ("attr", "values"):
        got = said["values"].get(pred.category)
        if not got:
            return False if said["refusal"] == "missing" else None
        want = {pred.value} if pred.kind == "attr" else set(pred.value)
        if pred.kind == "attr" and len(got) > 1:  # "neither, it is green" / "red or blue? red"
            return pred.value in got
        return got == want
    if pred.kind == "describe":
        if said["refusal"] == "missing" or said.get("nothing"):
            return False
        if not said["values"]:
            return None
        described = {}
        for attrs in pred.key[1]:
            for cat, v in attrs:
                described.setdefault(cat, set()).add(v)
        return all(vals <= described.get(cat, set()) for cat, vals in said["values"].items())
    if pred.kind == "nothing":
        return bool(said.get("nothing")) or said["polarity"] is False or said["refusal"] == "missing"
    if pred.kind == "where":
        if not said["sides"]:
            return None
        return said["sides"] == set(pred.value)
    if pred.kind == "scene":
        return None if said["number"] is None else said["number"] == sum(n for _, n in pred.value)
    return None


# --------------------------------------------------------------------------------------------
# Candidate questions (CLEVR-Dialog templates)
# --------------------------------------------------------------------------------------------
_PAIR_CATS = [("color", "shape"), ("size", "shape"), ("material", "shape"), ("size", "color"),
              ("color", "material"), ("size", "material")]


def _count_questions() -> list[tuple[str, str]]:
    out = [("How many objects are in the image?", "count-all")]
    for cat in NP_ORDER:
        for v in VALUES[cat]:
            out.append((f"How many {cg.np_text({cat: v}, plural=True)} are there?", "count-attr"))
    for a, b in _PAIR_CATS:
        for va in VALUES[a]:
            for vb in VALUES[b]:
                attrs = {a: va, b: vb}
                out.append((f"How many {cg.np_text({c: attrs[c] for c in NP_ORDER if c in attrs}, plural=True)}"
                            f" are there?", "count-attr"))
    return out


def _exist_questions() -> list[tuple[str, str]]:
    out = []
    for z in SIZES:
        for c in COLORS:
            for s in SHAPES:
                out.append((f"Is there {cg.with_article(cg.np_text({'size': z, 'color': c, 'shape': s}))}?",
                            "exist-attr"))
    return out


def _extreme_questions() -> list[tuple[str, str]]:
    out = []
    for d, word in cg.EXTREME_WORD.items():
        for cat in NP_ORDER:
            out.append((f"What {cat} is the {word} object?", "seek-extreme"))
    return out


_STATIC = tuple(_count_questions() + _exist_questions() + _extreme_questions())


def candidate_questions(dialog: list, caption: str | None = None) -> list[tuple[str, str]]:
    """(question, template family) pairs: the static count/exist/extreme templates plus
    coreference questions about what the dialog has talked about so far."""
    out = list(_STATIC)
    last = dialog[-1]["question"] if dialog else None
    last_frame = parse_question(last) if last else None
    for cat in NP_ORDER:
        if last_frame is not None and last_frame[0] == "seek":
            out.append((f"How about {cat}?", "seek-attr-imm2"))
        else:
            out.append((f"What is its {cat}?", "seek-attr-imm"))
    for d, phrase in (("left", "to its left"), ("right", "to its right"), ("front", "in front of it"),
                      ("behind", "behind it")):
        if last_frame is not None and last_frame[0] == "count" and last_frame[1].rel is not None \
                and last_frame[1].rel[1] is not None and last_frame[1].rel[1].pronoun == "it":
            out.append((f"How about {phrase}?", "count-obj-rel-imm2"))
        else:
            out.append((f"How many things are {phrase}?", "count-obj-rel-imm"))
        for cat in ("color", "shape"):
            out.append((f"What {cat} is the thing immediately {phrase}?", "seek-attr-rel-imm"))
    spec = cg.parse_caption(caption) if caption else None
    if spec is not None:
        nps = []
        if spec["kind"] == "obj-relation":
            nps = [spec["attrs_a"], spec["attrs_b"]]
        elif spec["kind"] in ("obj-unique", "obj-extreme"):
            nps = [spec["attrs"]]
        for attrs in nps:
            if not attrs:
                continue
            phrase = cg.np_text(attrs)
            for cat in NP_ORDER:
                if cat not in attrs:
                    out.append((f"What is the {cat} of that {phrase}?", "seek-attr-early"))
            out.append((f"How many things are the same color as that {phrase}?", "count-obj-excl-early"))
    return out


# --------------------------------------------------------------------------------------------
# Imagined scenes (visual-dialog chat has no pool)
# --------------------------------------------------------------------------------------------
def _cheap_scene(rng: random.Random) -> dict:
    n = rng.randint(3, 10)
    objects = []
    while len(objects) < n:
        x, y = rng.uniform(-3, 3), rng.uniform(-3, 3)
        if any(abs(x - o["3d_coords"][0]) < 0.5 and abs(y - o["3d_coords"][1]) < 0.5 for o in objects):
            continue
        size = rng.choice(SIZES)
        objects.append({"shape": rng.choice(SHAPES), "color": rng.choice(COLORS), "size": size,
                        "material": rng.choice(MATERIALS),
                        "3d_coords": [x, y, 0.7 if size == "large" else 0.35]})
    return {"objects": objects, "relationships": compute_relationships(objects),
            "directions": {k: list(v) for k, v in DIRECTIONS.items()}}


@lru_cache(maxsize=64)
def imagine_scenes(caption: str, seed: int, n: int = 40, tries: int = 1500) -> tuple:
    """Up to ``n`` random scenes the caption is true of (rejection sampling, ``tries`` draws),
    topped up with other random scenes if too few are found."""
    rng = random.Random(f"qbot-imagine:{seed}:{caption}")
    spec = cg.parse_caption(caption) if caption else None
    good, other = [], []
    for _ in range(tries):
        s = _cheap_scene(rng)
        if spec is None or cg.ground_caption(spec, s)["holds"]:
            good.append(s)
            if len(good) >= n:
                break
        elif len(other) < n:
            other.append(s)
    return tuple(good + other[: max(0, n // 2 - len(good))])


# --------------------------------------------------------------------------------------------
# The bot
# --------------------------------------------------------------------------------------------
@dataclass
class QBot:
    name: str = "qbot"
    strategy: str = "infogain"     # or "random"
    epsilon: float = 0.1
    caption_epsilon: float = 0.02
    seed: int = 0
    description: str = ""

    # ---- belief -----------------------------------------------------------------------------
    def _hypotheses(self, view: dict) -> list[tuple[str, dict]]:
        pool = view.get("pool")
        if pool:
            return [(item["id"], item.get("scene") or {}) for item in pool]
        scenes = imagine_scenes(view.get("caption") or "", self.seed)
        return [(f"h{k}", s) for k, s in enumerate(scenes)]

    def _replay(self, view: dict, hyps):
        """Log-weights and final dialog memories per hypothesis."""
        caption = view.get("caption")
        spec = cg.parse_caption(caption) if caption else None
        turns = [(d["question"], d["answer"]) for d in view.get("dialog", []) if d.get("answer") is not None]
        frames = [parse_question(q) for q, _ in turns]
        logw, discs = [], []
        good, bad = math.log(1 - self.epsilon), math.log(self.epsilon)
        for _, scene in hyps:
            if not isinstance(scene.get("objects"), list):
                logw.append(bad * 3)
                discs.append(Discourse())
                continue
            lw = 0.0
            if spec is not None and not cg.ground_caption(spec, scene)["holds"]:
                lw += math.log(self.caption_epsilon)
            disc = Discourse.start(scene, caption)
            for (q, a), frame in zip(turns, frames):
                pred = execute(frame, scene, disc)
                ok = consistent(pred, a)
                if ok is True:
                    lw += good
                elif ok is False:
                    lw += bad
                disc = disc.after(frame, pred)
            logw.append(lw)
            discs.append(disc)
        return logw, discs

    @staticmethod
    def _normalise(logw: list[float]) -> list[float]:
        top = max(logw)
        w = [math.exp(x - top) for x in logw]
        z = sum(w)
        return [x / z for x in w]

    def belief(self, view: dict) -> dict:
        hyps = self._hypotheses(view)
        logw, _ = self._replay(view, hyps)
        return dict(zip([h for h, _ in hyps], self._normalise(logw)))

    # ---- choices ----------------------------------------------------------------------------
    def _rng(self, view: dict, what: str) -> random.Random:
        pool = ",".join(item["id"] for item in view.get("pool") or [])
        key = f"{self.name}:{self.seed}:{what}:{view.get('caption')}:{pool}:{view.get('round')}:" \
              f"{len(view.get('final_clicks') or [])}:{len(view.get('dialog') or [])}"
        return random.Random(key)

    def next_question(self, view: dict) -> str:
        dialog = [d for d in view.get("dialog", []) if d.get("question")]
        asked = {d["question"] for d in dialog}
        cands = [(q, fam) for q, fam in candidate_questions(dialog, view.get("caption")) if q not in asked]
        rng = self._rng(view, "question")
        rng.shuffle(cands)
        if self.strategy == "random" or not cands:
            return cands[0][0] if cands else "How many objects are in the image?"
        hyps = self._hypotheses(view)
        logw, discs = self._replay(view, hyps)
        weights = self._normalise(logw)
        last_family = None
        if dialog:
            for q, fam in candidate_questions(dialog[:-1], view.get("caption")):
                if q == dialog[-1]["question"]:
                    last_family = fam.split("-")[0]
        best, best_score = cands[0][0], -1.0
        live = [(w, h[1], d) for w, h, d in zip(weights, hyps, discs) if w > 1e-4]
        for q, fam in cands:
            frame = parse_question(q)
            dist: dict = {}
            for w, scene, disc in live:
                key = execute(frame, scene, disc).key
                dist[key] = dist.get(key, 0.0) + w
            total = sum(dist.values())
            h = -sum((p / total) * math.log(p / total) for p in dist.values() if p > 0)
            if fam.split("-")[0] == last_family:
                h -= 0.05
            if h > best_score + 1e-9:
                best, best_score = q, h
        return best

    def ranking(self, view: dict) -> list[str]:
        """Pool ids from most to least likely (seeded tie-breaks); ruled-out ids left out."""
        ruled = set(view.get("ruled_out") or [])
        ids = [item["id"] for item in view.get("pool") or [] if item["id"] not in ruled]
        rng = self._rng(view, "guess")
        tiebreak = {i: rng.random() for i in ids}
        if self.strategy == "random":
            return sorted(ids, key=lambda i: tiebreak[i])
        b = self.belief(view)
        return sorted(ids, key=lambda i: (-round(b.get(i, 0.0), 12), tiebreak[i]))

    def act(self, view: dict) -> dict | None:
        if not view.get("your_turn"):
            return None
        expects = view.get("expects")
        if expects == "question":
            return {"type": "ask", "text": self.next_question(view)}
        if expects in ("guess", "final_guess"):
            order = self.ranking(view)
            return {"type": "guess", "image_id": order[0]} if order else None
        if expects == "feedback":
            return {"type": "skip_feedback"}
        return None
