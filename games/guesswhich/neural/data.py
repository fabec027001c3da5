"""CLEVR-Dialog-style dialogs for training the neural ALICE (``guesswhich_neural_alice``).

Each dialog is over a generated CLEVR scene (:func:`clevr.scenes.generate_scene`, seeded)
with its generated caption (:func:`clevr.captions.generate_caption`). A questioner asks
``rounds`` questions, each drawn (seeded) from:

* QBot's own candidates (:func:`clevr.qbot.candidate_questions`: count / exist / extreme
  templates, coreference questions "What is its color?", "How many things are to its left?",
  questions about the caption's objects);
* grounded questions about what is in the scene (an object's attributes, a color or shape that
  is present), so that "yes" and non-zero counts are not rare;

and then reworded (seeded) with one of a few paraphrases that the grounded ALICE still parses
("Is there ..." -> "Do you see ...", "How many ... are there?" -> "How many ... can you see?",
lower case, no question mark). The answer label is what the exact grounded ALICE
(:func:`clevr.alice.make_alice` ``"alice_exact"``) says, given the dialog so far: so the
neural ALICE learns to imitate the exact one, refusals ("I can't tell.", "which one do you
mean?") included.

Training and held-out dialogs use disjoint scene seeds (:func:`make_dialogs` ``split``).
An example is one round: ``{"scene", "caption", "history": [(q, a), ...], "question", "answer",
"qtype"}`` where ``qtype`` is the answer's kind (yesno, count, attr, refuse, ...) for per-type
accuracy.
"""
from __future__ import annotations

import random

from clevr import captions as cg
from clevr.alice import make_alice
from clevr.captions import COLORS, MATERIALS, SHAPES, SIZES
from clevr.qbot import candidate_questions
from clevr.scenes import generate_scene

GENERATOR_VERSION = "gw-dialogs-1"
SPLIT_OFFSET = {"train": 0, "val": 10_000_000, "test": 20_000_000}   # disjoint scene seeds


def _np(obj: dict, rng: random.Random) -> str:
    keys = [k for k in ("size", "color", "material") if rng.random() < 0.6]
    words = [obj[k] for k in keys] + [obj["shape"]]
    return " ".join(words)


def grounded_question(scene: dict, rng: random.Random) -> str:
    objects = scene["objects"]
    obj = rng.choice(objects)
    kind = rng.randrange(6)
    if kind == 0:
        return f"Is there a {_np(obj, rng)}?"
    if kind == 1:
        return f"How many {obj['color']} things are there?"
    if kind == 2:
        return f"How many {obj['shape']}s are there?"
    if kind == 3:
        return f"What color is the {_np(obj, rng)}?"
    if kind == 4:
        return f"Are there any {rng.choice(MATERIALS)} {rng.choice(SHAPES)}s?"
    return f"How many {rng.choice(SIZES)} {rng.choice(COLORS)} objects are there?"


def reword(question: str, rng: random.Random) -> str:
    """One of a few paraphrases the grounded ALICE parses the same way."""
    q = question
    r = rng.random()
    if r < 0.2 and q.startswith("Is there a"):
        q = "Do you see a" + q[len("Is there a"):]
    elif r < 0.35 and q.startswith("How many") and q.endswith(" are there?"):
        q = q[: -len(" are there?")] + " can you see?"
    elif r < 0.45 and q.startswith("Are there any"):
        q = "Can you see any" + q[len("Are there any"):]
    if rng.random() < 0.3:
        q = q.lower()
    if rng.random() < 0.2:
        q = q.rstrip("?")
    return q


def dialog(seed: int, rounds: int = 10) -> list[dict]:
    """One generated dialog (a list of round examples) over the scene of ``seed``."""
    rng = random.Random(f"gw-neural-dialog:{seed}")
    scene = generate_scene(seed)
    caption = cg.generate_caption(scene, seed)["text"]
    alice = make_alice("alice_exact")
    history: list[tuple[str, str]] = []
    out = []
    for r in range(rounds):
        if rng.random() < 0.5:
            question = rng.choice(candidate_questions([{"question": q} for q, _ in history], caption))[0]
        else:
            question = grounded_question(scene, rng)
        question = reword(question, rng)
        answer = alice.respond(scene, question, history, caption, r + 1)
        out.append({"scene": scene, "caption": caption, "history": list(history), "question": question,
                    "answer": answer.text, "qtype": answer.kind})
        history.append((question, answer.text))
    return out


def make_dialogs(n_dialogs: int, seed: int, split: str = "train", rounds: int = 10) -> list[dict]:
    """Round examples of ``n_dialogs`` dialogs over scenes ``SPLIT_OFFSET[split] + seed * 100_000 + k``."""
    base = SPLIT_OFFSET[split] + seed * 100_000
    return [ex for k in range(n_dialogs) for ex in dialog(base + k, rounds)]
