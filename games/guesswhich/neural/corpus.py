"""People's visual dialogs from a file, for training the neural ALICE on people's answers
(``manage.py train_agent guesswhich_neural_alice --data VISDIAL.json --image-ids SIDE.json``).

The data file is VisDial v1.0 JSON (``{"version", "split", "data": {"questions": [str], "answers":
[str], "dialogs": [{"image_id": int, "caption": str, "dialog": [{"question": qi, "answer": ai, ...}]}]}}``),
validated here (a file in another shape is a ValueError naming what is wrong). This ALICE reads
CLEVR scene graphs, not pixels, so a dialog is only usable when its scene can be found: GroundTalk's
``visdial`` / ``guesswhich-visdial`` export has a side file (``visdial-image-ids`` /
``guesswhich-visdial-image-ids``, ``{"format": "groundtalk-visdial-image-ids/v1", "images": [...]}``,
games/visdial/exports.py) that maps each exported ``image_id`` to its match and scene:

* a generated scene (``image_filename`` ``synthetic_<seed:08d>.png``; visdial_v1 content and the
  GuessWhich secret are ``clevr.scenes.generate_scene(seed)`` with ``scene_image_id`` = that seed) is
  rebuilt from the seed, and accepted only when its caption (``clevr.captions.generate_caption(scene,
  seed)``) is the caption the side file says was played;
* any other (an imported CLEVR scene) through ``lookup(match_id)`` when the caller gives one (the
  command reads the match's content from this database), else skipped and counted.

The released VisDial v1.0 (COCO photographs, no side file, or ids the side file does not map) does
not apply: :func:`read_corpus` refuses it with a ValueError saying why.

Each answered round becomes one example ``{"scene", "caption" (as played), "history": [(q, a), ...]
(the people's earlier rounds), "question", "answer" (the person's answer, normalised as VisDial:
lower case, no final full stop), "dialog" (the exported image_id), "qtype"}``. :func:`canonical_answer`
maps a person's answer onto an answer vocabulary (exact after normalisation, then a few synonyms:
"yeah" -> "yes", "two" -> "2", "grey" -> "gray", "ball" -> "sphere", "not sure" -> "I can't tell.",
"yes, ..." -> "yes"); ``qtype`` is the answer's type (:data:`ANSWER_TYPES`), by which validation
accuracy is reported. :func:`split_by_dialog` splits by dialog (image_id), never by round, seeded.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from agents.checkpoints import file_sha256
from agents.training import split_by_group
from clevr.alice import CANT_TELL
from clevr.captions import COLORS, MATERIALS, SHAPES, SIZES, generate_caption
from clevr.scenes import generate_scene

FORMATS = ("visdial",)          # GroundTalk's export (with its side file); the release does not apply
SIDE_FORMAT = "groundtalk-visdial-image-ids/v1"
ANSWER_TYPES = ("yesno", "count", "color", "attribute", "refuse", "other")
NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
SYNONYMS = {"yeah": "yes", "yep": "yes", "yup": "yes", "sure": "yes", "correct": "yes", "nope": "no", "nah": "no",
            "none": "0", "grey": "gray", "ball": "sphere", "balls": "sphere", "spheres": "sphere", "block": "cube",
            "blocks": "cube", "cubes": "cube", "cylinders": "cylinder", "shiny": "metal", "metallic": "metal",
            "matte": "rubber", "big": "large", "tiny": "small", "little": "small",
            **{w: str(k) for k, w in enumerate(NUMBER_WORDS)}}
DONT_KNOW = ("i can't tell", "i cannot tell", "can't tell", "cannot tell", "i don't know", "don't know",
             "not sure", "i'm not sure", "unsure", "no idea", "i can't see", "can't see")
REFUSAL_MARKS = ("can't tell", "which one do you mean", "there is nothing")
RELEASED_HINT = ("this ALICE reads CLEVR scene graphs, not pixels: it trains only on dialogs over GroundTalk's "
                 "scenes, i.e. GroundTalk's `visdial` (or `guesswhich-visdial`) export with its side file "
                 "(`--format visdial-image-ids`, given as --image-ids). The released VisDial v1.0 (COCO "
                 "photographs) does not apply to it.")


def norm(text: str) -> str:
    """VisDial's answer normalisation (games/visdial/exports.py norm_answer) plus a final "!" or "."."""
    return " ".join(str(text).strip().lower().split()).rstrip(".!").strip()


def canonical_answer(text: str, answers) -> str | None:
    """The answer of ``answers`` (a vocabulary) that ``text`` (a person's answer) says, or None."""
    table = {norm(a): a for a in answers}
    n = norm(text)
    if n in table:
        return table[n]
    if n in DONT_KNOW and norm(CANT_TELL) in table:
        return table[norm(CANT_TELL)]
    words = [w.strip(",;:!?") for w in n.split()]
    if not words:
        return None
    if len(words) == 1 and SYNONYMS.get(words[0]) in table:
        return table[SYNONYMS[words[0]]]
    first = SYNONYMS.get(words[0], words[0])
    if first in ("yes", "no") and first in table and n[len(words[0]):len(words[0]) + 1] in (",", " "):
        return table[first]                      # "yes, it is" / "no there isn't"
    return None


def answer_type(answer: str) -> str:
    n = norm(answer)
    if n in ("yes", "no"):
        return "yesno"
    if n.isdigit():
        return "count"
    if n in COLORS:
        return "color"
    if n in SHAPES or n in SIZES or n in MATERIALS:
        return "attribute"
    if any(mark in n for mark in REFUSAL_MARKS) or n in DONT_KNOW:
        return "refuse"
    return "other"


@dataclass
class Corpus:
    """The rounds read from one file, its format and sha256, and what was skipped."""

    path: str
    format: str
    sha256: str
    side_sha256: str
    examples: list[dict] = field(default_factory=list)
    dialogs: list[int] = field(default_factory=list)      # the image_ids used, in file order
    skipped: dict = field(default_factory=dict)           # reason -> dialogs skipped


def _load(path: Path, what: str):
    try:
        with open(path, "rb") as f:
            return json.load(f)
    except (UnicodeDecodeError, ValueError) as exc:       # json.JSONDecodeError is a ValueError
        raise ValueError(f"{path}: {what} is not valid JSON ({exc}).") from None


def validate_visdial(doc, path) -> None:
    """A ValueError naming the first thing in ``doc`` that is not VisDial v1.0's shape."""
    shape = ('{"version": "1.0", "split", "data": {"questions": [str], "answers": [str], "dialogs": '
             '[{"image_id": int, "caption": str, "dialog": [{"question": int, "answer": int}]}]}}')
    data = doc.get("data") if isinstance(doc, dict) else None
    if not isinstance(data, dict) or not all(isinstance(data.get(k), list) for k in ("questions", "answers", "dialogs")):
        raise ValueError(f"{path}: not VisDial v1.0 JSON (expected {shape}).")
    questions, answers = data["questions"], data["answers"]
    if not all(isinstance(x, str) for x in questions + answers):
        raise ValueError(f"{path}: data.questions and data.answers must be lists of strings.")
    if not data["dialogs"]:
        raise ValueError(f"{path}: data.dialogs is empty.")
    for k, d in enumerate(data["dialogs"]):
        where = f"{path}: data.dialogs[{k}]"
        if not isinstance(d, dict) or not isinstance(d.get("image_id"), int) or isinstance(d.get("image_id"), bool) \
                or not isinstance(d.get("dialog"), list) or not isinstance(d.get("caption", ""), str):
            raise ValueError(f"{where}: needs an integer image_id, a caption and a dialog list (expected {shape}).")
        for r, turn in enumerate(d["dialog"]):
            if not isinstance(turn, dict) or not isinstance(turn.get("question"), int) \
                    or not 0 <= turn["question"] < len(questions):
                raise ValueError(f"{where}.dialog[{r}]: question must index data.questions.")
            a = turn.get("answer", -1)
            if not isinstance(a, int) or not -1 <= a < len(answers):
                raise ValueError(f"{where}.dialog[{r}]: answer must index data.answers (or be absent / -1).")


def read_side(path) -> dict[int, dict]:
    """image_id -> side-file row of a ``visdial-image-ids`` file (ValueError when it is not one)."""
    side = _load(Path(path), "the image-ids side file")
    rows = side.get("images") if isinstance(side, dict) else None
    if not isinstance(side, dict) or side.get("format") != SIDE_FORMAT or not isinstance(rows, list) \
            or not all(isinstance(r, dict) and isinstance(r.get("image_id"), int) for r in rows):
        raise ValueError(f"{path}: not a visdial-image-ids side file (expected "
                         f'{{"format": "{SIDE_FORMAT}", "images": [{{"image_id": int, "match_id", "scene_image_id", '
                         f'"image_filename", "caption", ...}}]}}).')
    return {r["image_id"]: r for r in rows}


def rebuilt_scene(row: dict) -> tuple[dict, str] | None:
    """(scene, caption) of a side-file row whose scene was generated from a seed, when the rebuilt
    scene's caption is the one played (module docstring); else None."""
    seed = row.get("scene_image_id")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0 \
            or row.get("image_filename") != f"synthetic_{seed:08d}.png":
        return None
    scene = generate_scene(seed)
    caption = generate_caption(scene, seed)["text"]
    if row.get("caption") and row["caption"] != caption:
        return None
    return scene, row.get("caption") or caption


def read_corpus(path, image_ids=None, lookup=None) -> Corpus:
    """Every answered round of the dialogs of ``path`` whose scene is found (module docstring).
    ``image_ids``: the side file; ``lookup(match_id) -> {"scene", "caption"} | None``: the scenes
    of matches that cannot be rebuilt from a seed."""
    path = Path(path)
    doc = _load(path, "the data file")
    validate_visdial(doc, path)
    if not image_ids:
        raise ValueError(f"{path}: no --image-ids side file, so no dialog can be led to its scene; {RELEASED_HINT}")
    side = read_side(image_ids)
    data = doc["data"]
    ids = [d["image_id"] for d in data["dialogs"]]
    if not any(i in side for i in ids):
        raise ValueError(f"{path}: none of its {len(ids)} image ids is in the side file {image_ids} (another export's "
                         f"side file, or VisDial's own photographs); {RELEASED_HINT}")
    corpus = Corpus(str(path), "visdial", file_sha256(path), file_sha256(image_ids))
    skipped: dict[str, int] = {}
    seen: set[int] = set()
    for d in data["dialogs"]:
        row = side.get(d["image_id"])
        reason = None
        if d["image_id"] in seen:
            reason = "image_id repeated"
        elif row is None:
            reason = "not in the side file"
        else:
            found = rebuilt_scene(row)
            if found is None and lookup is not None:
                got = lookup(row.get("match_id"))
                if got and isinstance((got.get("scene") or {}).get("objects"), list):
                    found = got["scene"], got.get("caption") or row.get("caption") or d.get("caption") or ""
            if found is None:
                reason = "scene not found (not a generated scene, match not in this database)"
        if reason:
            skipped[reason] = skipped.get(reason, 0) + 1
            continue
        seen.add(d["image_id"])
        scene, caption = found
        corpus.dialogs.append(d["image_id"])
        history: list[tuple[str, str]] = []
        for turn in d["dialog"]:
            if turn.get("answer", -1) < 0:
                break                            # VisDial's padding: the dialog ends here
            question, answer = data["questions"][turn["question"]], norm(data["answers"][turn["answer"]])
            corpus.examples.append({"scene": scene, "caption": caption, "history": list(history),
                                    "question": question, "answer": answer, "dialog": d["image_id"]})
            history.append((question, answer))
    corpus.skipped = skipped
    if not corpus.examples:
        raise ValueError(f"{path}: no answered round of a dialog whose scene was found (skipped: {skipped}).")
    return corpus


def map_answers(examples: list[dict], answers: list[str]) -> tuple[list[dict], list[dict]]:
    """(examples whose answer maps onto ``answers``, with ``answer`` the vocabulary's text and
    ``qtype`` its type; the others, unchanged)."""
    mapped, left = [], []
    for e in examples:
        a = canonical_answer(e["answer"], answers)
        if a is None:
            left.append(e)
        else:
            mapped.append({**e, "answer": a, "qtype": answer_type(a)})
    return mapped, left


def split_by_dialog(examples: list[dict], val_fraction: float, seed: int) -> tuple[list[dict], list[dict], list[int]]:
    """``(train examples, validation examples, validation dialog ids)``: a seeded ``val_fraction``
    of the dialogs (at least one each side), never rows of one dialog on both sides."""
    return split_by_group(examples, "dialog", val_fraction, f"guesswhich-corpus-split:{seed}", "dialog")

