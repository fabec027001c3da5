"""Training data for the neural CoDraw Drawer: Teller-Drawer dialogs over generated scenes.

Each dialog is the rule Teller (games/codraw/agents.py ``RuleTeller(peek=False)``) describing a
generated scene (games/codraw/scenes.py via content.generate) to the rule Drawer (language.py), as
:func:`games.codraw.agents.generated_dialogs` plays them. One example per round: the Teller's
message, the canvas before it (``abs_b``) and what the rule Drawer changed (``abs_d`` minus
``abs_b``: the pieces added or moved, with their place, depth, flip and subtype).

The wording is varied (:func:`paraphrase`, seeded): synonyms (``big``/``large``, ``facing``/
``looking``, ``on the left``/``on the left side``, ``in the middle``/``in the center``, ``under``/
``below``, ``next to``/``beside``, ``just below the horizon``/``at the back of the grass`` ...; for
older inch-measured messages ``in``/``inches``, ``from left``/``from the left`` and the order of
the place's two halves), dropped commas, upper case, and typos (a letter dropped, doubled or
swapped in a longer word) — so that the Drawer does not learn the rule Teller's template only.
Clip-art names are not changed, and each synonym reads as the same place to the rule Drawer
(the meaning stays the rule Drawer's reading).

Scene seeds: the split's range (``SEED_RANGES``) plus an offset; training, validation and the
evaluation scenes (eval.py) come from disjoint ranges (crosstalk-style: nothing evaluated
was seen in training). Training has two disjoint halves (``HALVES``: ``a`` = ``train``, the
Drawer's by default; ``b`` = ``train_b``, the Teller's by default), so that a Teller and a Drawer
trained apart can be paired across halves as the paper's crosstalk protocol does.

The Teller's examples (:func:`teller_examples`) are the same kind of dialogs seen from the other
side: the target scene, the Teller's earlier messages (paraphrased, without typos: they are what
the Teller learns to say), which piece it describes next (or that it stops) and its message.
"""
from __future__ import annotations

import random
import re

from games.codraw.scenes import parse_scene
from games.codraw.agents import generated_dialogs

GENERATOR_VERSION = 1
SEED_RANGES = {"train": 3_000_000, "val": 4_000_000, "test": 5_000_000, "train_b": 6_000_000}
HALVES = {"a": "train", "b": "train_b"}      # crosstalk: the two training partitions (Drawer a, Teller b)
PARAPHRASE_P = 0.7             # share of training messages reworded

SYNONYMS = [
    (r"\bbig\b", ["large", "big"]),
    (r"\bsmall\b", ["little", "tiny", "small"]),
    (r"\bmedium\b", ["medium sized", "mid size", "medium"]),
    (r"\bfacing\b", ["facing", "looking", "pointing", "faces"]),
    (r"\bcentered\b", ["centered", "center is", "its center", "middle"]),
    (r"\b(\d+(?:\.\d+)?) in\b", [r"\1 in", r"\1 inches", r"\1 inch", r"\1in", r"\1 in."]),
    (r"\bfrom (left|right|top|bottom)\b", [r"from \1", r"from the \1", r"from the \1 edge", r"off the \1"]),
    (r"\bin (\w+'s) hand\b", [r"in \1 hand", r"held in \1 hand", r"in \1 hands"]),
    (r"\bon (\w+'s) head\b", [r"on \1 head", r"on top of \1 head", r"worn on \1 head"]),
    (r"\bsmiling\b", ["smiling", "happy"]),
    # places in words (the rule Teller since issue 20); each choice reads as the same place
    (r"\bjust (left|right) of center\b", [r"just \1 of center", r"slightly \1 of center", r"a bit \1 of the middle"]),
    (r"\b(?<!just )(?<!slightly )(left|right) of center\b", [r"\1 of center", r"\1 of the middle", r"\1 of centre"]),
    (r"\bin the middle\b(?! of)", ["in the middle", "in the center", "in the centre"]),
    (r"\bon the far (left|right)\b", [r"on the far \1", r"at the far \1", r"on the \1 edge"]),
    (r"\bon the (left|right)\b(?! edge)", [r"on the \1", r"on the \1 side", r"to the \1"]),
    (r"\bnear the bottom\b", ["near the bottom", "at the bottom", "close to the bottom"]),
    (r"\bat the very (top|bottom)\b", [r"at the very \1", r"at the \1 edge"]),
    (r"\bjust below the horizon\b", ["just below the horizon", "at the back of the grass", "just under the horizon"]),
    (r"\bjust above the horizon\b", ["just above the horizon", "at the horizon", "on the horizon"]),
    (r"\bin the sky\b", ["in the sky", "up in the sky"]),
    (r"\bon the grass\b", ["on the grass", "on the ground"]),
    (r"\bunder (?!the horizon)", ["under ", "below ", "beneath "]),
    (r"\bnext to\b", ["next to", "beside", "by"]),
    (r"\ba bit to the (left|right)\b", [r"a bit to the \1", r"slightly to the \1", r"a little to the \1"]),
]
PREFIXES = ["", "", "", "there is a ", "add a ", "now ", "next, ", "then a ", "ok, "]
_PLACE = re.compile(r"(centered [\d.]+ in from \w+) and ([\d.]+ in from \w+)")


def typo(word: str, rng: random.Random) -> str:
    if len(word) < 5 or not word.isalpha():
        return word
    i = rng.randrange(1, len(word) - 1)
    kind = rng.randrange(3)
    if kind == 0:
        return word[:i] + word[i + 1:]
    if kind == 1:
        return word[:i] + word[i] + word[i:]
    return word[:i - 1] + word[i] + word[i - 1] + word[i + 1:]


def paraphrase(text: str, rng: random.Random, typo_p: float = 0.06) -> str:
    """A reworded ``text`` (the rule Teller's template): same pieces and numbers, other words."""
    if rng.random() < 0.5:                         # "centered X from left and Y from top" -> swapped
        text = _PLACE.sub(lambda m: f"{m.group(2)} and {m.group(1)}", text)
    for pattern, choices in SYNONYMS:
        text = re.sub(pattern, lambda m: m.expand(rng.choice(choices)), text)
    text = rng.choice(PREFIXES) + text
    if rng.random() < 0.4:
        text = text.replace(",", "")
    words = [typo(w, rng) if rng.random() < typo_p else w for w in text.split(" ")]
    text = " ".join(words)
    if rng.random() < 0.1:
        text = text.upper()
    return text[:140]


def dialogs(split: str, n: int, offset: int = 0) -> dict[str, dict]:
    start = SEED_RANGES[split] + offset
    return generated_dialogs(range(start, start + n))


def scene_seeds(split: str, n: int, offset: int = 0) -> range:
    start = SEED_RANGES[split] + offset
    return range(start, start + n)


def round_example(message: str, abs_b: str, abs_d: str) -> dict:
    before = {p.idx: p for p in parse_scene(abs_b).placed}
    after = {p.idx: p for p in parse_scene(abs_d).placed}
    changes = [p.to_dict() for idx, p in sorted(after.items()) if before.get(idx) != p]
    return {"text": message, "canvas": [p.to_dict() for p in before.values()], "changes": changes,
            "removed": sorted(set(before) - set(after))}


def make_examples(split: str, n_dialogs: int, seed: int = 0, paraphrase_p: float = PARAPHRASE_P) -> list[dict]:
    """One example per round of ``n_dialogs`` generated dialogs of ``split`` (rounds that change
    nothing or only remove pieces are left out); ``paraphrase_p`` of the messages reworded."""
    rng = random.Random(f"codraw-neural-data:{split}:{seed}")
    out = []
    for key, dialog in dialogs(split, n_dialogs, offset=seed * 100_000).items():
        for r in dialog["dialog"]:
            example = round_example(r["msg_t"], r.get("abs_b") or "", r.get("abs_d") or "")
            if not example["changes"]:
                continue
            if rng.random() < paraphrase_p:
                example["text"] = paraphrase(example["text"], rng)
            example["dialog"] = key
            out.append(example)
    return out


def target_pieces(abs_t: str) -> list[dict]:
    """The target as the Teller's view has it: the scene's placed pieces, the first of a repeated
    clip art only (rules.initial_state)."""
    seen, out = set(), []
    for piece in parse_scene(abs_t).placed:
        if piece.idx not in seen:
            seen.add(piece.idx)
            out.append(piece.to_dict())
    return out


def teller_examples(split: str, n_dialogs: int, seed: int = 0, paraphrase_p: float = PARAPHRASE_P) -> list[dict]:
    """One example per Teller turn of ``n_dialogs`` generated dialogs of ``split``: ``target``
    (pieces in the view's order), ``history`` (the Teller's earlier messages), ``choice`` (the
    position in ``target`` of the piece its next message describes, None: it ends), ``text`` (that
    message, "" when it ends), ``described`` (positions already described). The rule Teller
    without peek describes the pieces in :func:`agents.target_order`, one per message; a dialog
    whose messages do not match that is left out. ``paraphrase_p`` of the messages reworded
    (no typos), the same wording in the later turns' history."""
    rng = random.Random(f"codraw-neural-teller-data:{split}:{seed}")
    out = []
    for key, dialog in dialogs(split, n_dialogs, offset=seed * 100_000).items():
        target = target_pieces(dialog["abs_t"])
        order = sorted(range(len(target)), key=lambda k: target[k]["idx"])
        said = [r["msg_t"] for r in dialog["dialog"]]
        if len(said) != len(target):
            continue
        texts = [paraphrase(t, rng, typo_p=0.0) if rng.random() < paraphrase_p else t for t in said]
        for k in range(len(texts) + 1):
            out.append({"target": target, "history": texts[:k], "choice": order[k] if k < len(texts) else None,
                        "text": texts[k] if k < len(texts) else "", "described": sorted(order[:k]), "dialog": key})
    return out
