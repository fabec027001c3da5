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

from games.codraw import clipart as ca
from games.codraw.scenes import parse_scene
from games.codraw.agents import generated_dialogs

GENERATOR_VERSION = 3          # 2: people's wording (vary), several pieces a message, messages that name nothing;
#                                3: twice the several-piece messages, more chat
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


def paraphrase(text: str, rng: random.Random, typo_p: float = 0.06, prefixes: bool = True) -> str:
    """A reworded ``text`` (the rule Teller's template): same pieces and numbers, other words."""
    if rng.random() < 0.5:                         # "centered X from left and Y from top" -> swapped
        text = _PLACE.sub(lambda m: f"{m.group(2)} and {m.group(1)}", text)
    for pattern, choices in SYNONYMS:
        text = re.sub(pattern, lambda m: m.expand(rng.choice(choices)), text)
    if prefixes:
        text = rng.choice(PREFIXES) + text
    if rng.random() < 0.4:
        text = text.replace(",", "")
    words = [typo(w, rng) if rng.random() < typo_p else w for w in text.split(" ")]
    text = " ".join(words)
    if rng.random() < 0.1:
        text = text.upper()
    return text[:140]


# ------------------------------------------------------------------ people's wording (GENERATOR_VERSION 2)
# Each rewrite keeps what the message asks for (the example's target is still what the rule Drawer
# drew for the rule Teller's words): clip-art names people use (clipart.py synonyms, those that name
# one clip art only), sizes, poses, expressions, facing, worn and held items said the other way
# round, what the message starts with; then paraphrase()'s places and typos.
_AMBIGUOUS = {"kid", "child", "bird", "wizard hat", "him", "he", "her", "she", "pirate",
              "bench", "soccer", "ball", "disc", "cup", "basket", "helmet", "pine", "glove", "bat", "fire"}
NAME_CHOICES = {c.name: [c.name, c.name, *[s for s in c.synonyms if s not in _AMBIGUOUS]] for c in ca.CLIPARTS}
NAME_CHOICES["Mike"] = ["Mike", "mike", "the boy", "a boy", "boy", "the guy", "a little boy"]
NAME_CHOICES["Jenny"] = ["Jenny", "jenny", "the girl", "a girl", "girl", "the lady", "a little girl", "woman"]
PERSON = {"Mike": ["Mike", "mike", "the boy", "the guy"], "Jenny": ["Jenny", "jenny", "the girl", "the lady"]}
SIZE_CHOICES = {"big": ["big", "large", "huge", "big", "large size"], "medium": ["medium", "medium sized",
                "mid size", "normal size", "medium"], "small": ["small", "tiny", "little", "small", "far away"]}
POSE_CHOICES = {"arms out": ["arms out", "arms out to the side", "standing with arms out"],
                "arms up": ["arms up", "hands up", "arms raised", "both arms up"],
                "kicking": ["kicking", "kicking a leg up", "one leg up kicking"],
                "running": ["running", "jogging", "running pose"],
                "cross-legged": ["cross-legged", "sitting cross legged", "legs crossed"],
                "sitting": ["sitting", "sitting down", "seated"],
                "waving": ["waving", "waving one hand", "one hand up waving"]}
EXPRESSION_CHOICES = {"angry": ["angry", "mad", "grumpy", "angry face"],
                      "big smile": ["big smile", "grinning", "laughing", "very happy"],
                      "smiling": ["smiling", "happy", "with a smile", "smile"],
                      "smile": ["smile", "smiling", "happy"],
                      "sad": ["sad", "upset", "crying", "sad face"],
                      "scared": ["scared", "surprised", "shocked", "afraid"]}
FACING_CHOICES = ["facing {d}", "facing {d}", "looking {d}", "facing to the {d}", "faces {d}", "turned {d}",
                  "pointing {d}", "looking to the {d}", "{d} facing"]
OPENERS = ["", "", "", "", "there is a ", "there's a ", "i see a ", "add a ", "put a ", "draw a ", "next is a ",
           "now a ", "ok next a ", "we have a ", "then there is a ", "also a "]
JOINERS = [" and ", ". ", ", also ", ". then ", ". next ", " and then ", "; ", ". there is also "]
# places people say in two words ("top left"), for the rule Teller's two halves of the same place
CORNERS = [
    (r"\bon the (?:far )?(left|right), (?:at the (?:very )?top|in the sky|in the middle of the sky)\b",
     [r"top \1", r"in the top \1 corner", r"upper \1", r"\1 top", r"at the top \1", r"top \1 corner"]),
    (r"\bon the (?:far )?(left|right), (?:near the bottom|at the very bottom)\b",
     [r"bottom \1", r"in the bottom \1 corner", r"lower \1", r"\1 bottom", r"bottom \1 corner"]),
    (r"\bin the middle, (?:at the (?:very )?top|in the sky|in the middle of the sky)\b",
     ["top middle", "at the top in the middle", "top center", "middle of the sky", "top centre"]),
    (r"\bin the middle, (?:near the bottom|at the very bottom)\b",
     ["bottom middle", "at the bottom in the middle", "bottom center"]),
    (r"\bon the (left|right), just below the horizon\b", [r"\1 side, far back", r"\1 in the back", r"back \1"]),
]
_NAMES = sorted((n for n in NAME_CHOICES), key=len, reverse=True)
_LEAD = re.compile(r"^(big|medium|small) (" + "|".join(re.escape(n) for n in _NAMES) + r")\b(.*)$")
_FACING = re.compile(r",? ?facing (left|right)\b")
_WORN = re.compile(r"^(.+?) on (Mike|Jenny)'s (head|face)(.*)$")
_HELD = re.compile(r"^(.+?) in (Mike|Jenny)'s hand(.*)$")

# messages that ask for nothing to be drawn (the Drawer abstains): chat, questions, praise, ends
NOTHING_CORE = ["ok", "okay", "not yet", "on", "yes", "no", "good", "great", "looks great", "looks good",
                "thanks", "thank you", "perfect", "nice", "nice job", "good job", "great job so far", "hello", "hi",
                "hi there", "ready?", "are you ready", "ready when you are", "wait", "hold on", "one sec", "hmm",
                "let me see", "that's it", "that is all", "we are done", "all done", "i think that's it",
                "done?", "got it?", "that's right", "correct",
                "yes that's right", "no worries", "sorry", "my bad", "lol", "haha", "cool", "awesome", "almost there",
                "keep going", "that looks fine", "leave it as it is", "no changes", "it is fine", "fine",
                "the picture is a park", "it's a sunny day", "i'm not sure", "can you see it?", "how's it going",
                "whats next", "ok ready", "you're doing great", "good so far", "nothing else", "nope", "yep", "k",
                # version 3: more chat, questions and hesitation
                "alright", "yeah", "yes please", "no thanks", "uh", "umm", "so", "well", "right",
                "ok good", "very good", "well done", "nicely done", "excellent", "sounds good", "understood",
                "makes sense", "next one", "moving on", "anything else?", "any questions?", "is that clear?",
                "does that make sense?", "can you hear me", "still there?", "let me think",
                "give me a second", "just a moment", "hang on", "not quite yet", "not yet, wait", "almost",
                "we're almost done", "last one coming", "that should be everything", "that's all for now",
                "you got it", "exactly", "yes exactly", "that's fine", "close enough", "good enough",
                "never mind", "forget that", "ignore that", "whoops", "thank u", "ty", "thx", "np",
                "hey", "good morning", "lets start", "let's begin", "here we go", "i will describe the scene",
                "this one is easy", "this is a busy picture", "it's a simple scene", "ok what do you see",
                "how does it look", "what did you draw?", "tell me when you're ready",
                "your turn", "ok next", "and", "on", "in", "the", "so far so good", "brb"]
NOTHING_END = ["", "", "", "!", ".", "?", " :)", "!!", " thanks", " please"]


def vary(text: str, rng: random.Random, typo_p: float = 0.08) -> str:
    """``text`` (the rule Teller's template, one piece) in the words people use: the clip art's
    other names, sizes, poses, expressions and facing said otherwise, a worn or held item said from
    its wearer (``Jenny is wearing a pirate hat``), an opener; then :func:`paraphrase`."""
    facing = _FACING.search(text)
    direction = facing.group(1) if facing else None
    if facing and rng.random() < 0.5:               # facing said up front or dropped into another spot
        text = _FACING.sub("", text)
    else:
        direction = None
    for phrase, choices in {**POSE_CHOICES, **EXPRESSION_CHOICES}.items():
        text = re.sub(rf"\b{re.escape(phrase)}\b", lambda m: rng.choice(choices), text)
    worn, held = _WORN.match(text), _HELD.match(text)
    if (worn or held) and rng.random() < 0.6:
        m = worn or held
        person = rng.choice(PERSON[m.group(2)])
        thing = m.group(1)
        verb = rng.choice(["is wearing a", "has a", "wears a", "with a"]) if worn else \
            rng.choice(["is holding a", "has a", "holds a", "with a"])
        text = f"{person} {verb} {thing}{m.group(4) if worn else m.group(3)}"
    for pattern, choices in CORNERS:
        if rng.random() < 0.7:
            text = re.sub(pattern, lambda m: m.expand(rng.choice(choices)), text)
    lead = _LEAD.match(text)
    if lead:
        size, name, rest = lead.groups()
        # no size said reads as medium (language.DEFAULT_DEPTH): people often leave it out
        size = "" if size == "medium" and rng.random() < 0.5 else rng.choice(SIZE_CHOICES[size])
        name = rng.choice(NAME_CHOICES[name])
        name = name.split(" ", 1)[1] if name.startswith(("a ", "the ")) else name
        face = f" {rng.choice(FACING_CHOICES).format(d=direction)}" if direction else ""
        text = f"{size} {name}{face}{rest}".strip()
        text = rng.choice(OPENERS) + text
    else:
        for name in _NAMES:
            if re.search(rf"\b{re.escape(name)}\b", text):
                choice = rng.choice(NAME_CHOICES[name])
                text = re.sub(rf"\b{re.escape(name)}\b", choice.split(" ", 1)[1] if choice.startswith(("a ", "the "))
                              else choice, text, count=1)
                break
        if direction:
            text = f"{text}, {rng.choice(FACING_CHOICES).format(d=direction)}"
    return paraphrase(text, rng, typo_p=typo_p, prefixes=False)


def nothing_message(rng: random.Random) -> str:
    """A message that asks for nothing to be drawn (``ok``, ``not yet``, ``looks great!``)."""
    text = rng.choice(NOTHING_CORE)
    if rng.random() < 0.25:
        text = f"{text} {rng.choice(NOTHING_CORE)}"
    text += rng.choice(NOTHING_END)
    words = [typo(w, rng) if rng.random() < 0.06 else w for w in text.split(" ")]
    text = " ".join(words)
    return text.upper() if rng.random() < 0.05 else text


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


MIX = {"template": 0.1, "paraphrased": 0.2, "varied": 0.4, "several": 0.3}   # drawable messages' wording
NOTHING_SHARE = 0.12           # extra examples whose message names nothing (target: abstain)
LANDMARK_P = 0.25              # share of messages naming a piece on the canvas whose canvas lacks it
CONDITIONS = ("template", "paraphrased", "varied", "several", "landmark", "nothing")
_CANVAS_NAMES = [(c.idx, re.compile(rf"\b(?:the {re.escape(c.name)}|{c.name}(?:'s)?)\b" if c.idx in ca.HUMAN_IDXS
                                    else rf"\bthe {re.escape(c.name)}\b")) for c in ca.CLIPARTS]


def without_landmark(example: dict, rng: random.Random) -> dict | None:
    """``example`` (the rule Teller's words) whose message places its piece by another one on the
    canvas (``left of the oak tree``, ``on Jenny's head``), with that landmark taken off the
    canvas and added to what is drawn (where it was): a named landmark not drawn yet is drawn too
    (``a girl wearing a witch hat`` on an empty canvas is both). None when it names none."""
    changed = {c["idx"] for c in example["changes"]}
    on_canvas = {p["idx"]: p for p in example["canvas"]}
    named = [idx for idx, pattern in _CANVAS_NAMES
             if idx in on_canvas and idx not in changed and pattern.search(example["text"])]
    if not named:
        return None
    idx = rng.choice(named)
    return {**example, "canvas": [p for p in example["canvas"] if p["idx"] != idx],
            "changes": [on_canvas[idx], *example["changes"]]}


def make_examples(split: str, n_dialogs: int, seed: int = 0, paraphrase_p: float | None = None,
                  mix: dict | None = None, nothing_share: float = NOTHING_SHARE) -> list[dict]:
    """One example per round of ``n_dialogs`` generated dialogs of ``split`` (rounds that change
    nothing or only remove pieces are left out), each with its ``condition``: the rule Teller's
    words (``template``), :func:`paraphrase` d, :func:`vary` d (people's wording) or two rounds in
    one message (``several``, both varied: its changes are both rounds'), in the shares of ``mix``
    (default :data:`MIX`); ``LANDMARK_P`` of those that place their piece by another one lose that
    one from the canvas and draw it too (:func:`without_landmark`, ``landmark``, worded as varied
    or paraphrased); plus ``nothing_share`` as many messages that name nothing
    (:func:`nothing_message`, ``changes`` empty, ``abstain`` true) on the dialogs' canvases.
    ``paraphrase_p`` (the version-1 recipe): that share paraphrased, the rest template, nothing else."""
    rng = random.Random(f"codraw-neural-data:{split}:{seed}")
    if paraphrase_p is not None:
        mix, nothing_share = {"template": 1 - paraphrase_p, "paraphrased": paraphrase_p}, 0.0
    mix = mix or MIX
    kinds, weights = list(mix), list(mix.values())
    out, canvases = [], []
    for key, dialog in dialogs(split, n_dialogs, offset=seed * 100_000).items():
        rounds = []
        for r in dialog["dialog"]:
            example = round_example(r["msg_t"], r.get("abs_b") or "", r.get("abs_d") or "")
            if example["changes"]:
                rounds.append(example)
            canvases.append(example["canvas"])
        k = 0
        while k < len(rounds):
            example, kind = rounds[k], rng.choices(kinds, weights)[0]
            k += 1
            if kind == "several" and k < len(rounds) and not rounds[k]["removed"] and not example["removed"]:
                second = rounds[k]
                for _ in range(4):          # both pieces within the chat's 140 characters
                    text = vary(example["text"], rng) + rng.choice(JOINERS) + vary(second["text"], rng)
                    if len(text) <= 140:
                        break
                else:
                    kind = "varied"
                if kind == "several":
                    k += 1
                    moved = {c["idx"] for c in second["changes"]}
                    example = {**example, "text": text, "changes": [c for c in example["changes"]
                                                                     if c["idx"] not in moved] + second["changes"]}
            elif kind == "several":
                kind = "varied"
            if kind != "several" and rng.random() < LANDMARK_P and (moved := without_landmark(example, rng)):
                example, kind = {**moved, "text": vary(moved["text"], rng) if rng.random() < 0.7
                                 else paraphrase(moved["text"], rng)}, "landmark"
            if kind == "paraphrased":
                example = {**example, "text": paraphrase(example["text"], rng)}
            elif kind == "varied":
                example = {**example, "text": vary(example["text"], rng)}
            out.append({**example, "text": example["text"][:140], "dialog": key, "condition": kind, "abstain": False})
    for _ in range(round(nothing_share * len(out))):
        out.append({"text": nothing_message(rng), "canvas": rng.choice(canvases) if canvases else [], "changes": [],
                    "removed": [], "dialog": "", "condition": "nothing", "abstain": True})
    rng.shuffle(out) if nothing_share else None
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
