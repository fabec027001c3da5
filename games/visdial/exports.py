"""Visual-dialog exports: ``--format visdial`` writes VisDial v1.0 JSON from match records.

Shape (VisDial v1.0, so existing VisDial data loaders read it)::

    {"version": "1.0", "split": "train",
     "data": {"questions": [str, ...], "answers": [str, ...],
              "dialogs": [{"image_id": int, "caption": str,
                           "dialog": [{"question": qi, "answer": ai,
                                       "answer_options": [100 answer indices], "gt_index": k}, ...]}]}}

Nothing else at the top level: VisDial's release has exactly ``version``, ``split`` and ``data``.

Built only from the event log (``question_asked`` / ``answer_given``) and the match content
(caption, image id). Only dialogs whose every round has an answer are exported (VisDial kept only
complete dialogs). Text is normalised as in VisDial's release: stripped, lower-cased, the
question's trailing "?" and the answer's trailing "." removed; captions likewise lower-cased with
no final full stop (``caption_style="visdial"``, the default; ``"original"`` keeps our captions).

Image ids. VisDial's reference reader (``visdialch/data/readers.py`` of the challenge starter
code) keys captions and dialogs by ``image_id``, so two dialogs sharing an id silently become one.
Several matches can be played on one scene (the scene's seed was its id), so each exported dialog
gets its own ``image_id``: :func:`dialog_image_id`, a 52-bit integer from a hash of the match id
(stable: the same match has the same id in every export, whatever else is exported with it). The
side file ``--format visdial-image-ids`` (``guesswhich-visdial-image-ids`` for GuessWhich dialogs)
maps each id back::

    {"format": "groundtalk-visdial-image-ids/v1",
     "images": [{"image_id": int, "match_id", "game_id", "scene_image_id" (the content's own image
                 id: the scene seed, or the CLEVR image index of the secret), "image_filename",
                 "image_path" (real renders only), "caption" (as played), "seed", "rounds" (answered
                 rounds played), "rounds_exported", "arm", "arm_order", "arm_position", "arm_seed"
                 (the match's arm of its batch's experiment, issue 24; "" outside one)}, ...]}

A dialog longer than VisDial's 10 rounds (a batch configured with more) is cut to its first 10 in
the VisDial file, which the reference code batches as 10 rounds; the side file says how many
rounds were played. Shorter dialogs are kept as they are (the reader pads them).

Candidate answers (VisDial section 4): each question gets 100 distinct options, the ground truth
plus up to 50 *plausible* answers (answers given to the questions in the set that start with the
same words), up to 30 *popular* answers (most frequent in the set), and *random* answers to fill;
seeded (``seed``), so an export is reproducible. When the set is small its answers are topped up
with a bank of CLEVR answers (yes/no, counts, colors, shapes, sizes, materials, object
descriptions), which are added to ``answers``.
"""
from __future__ import annotations

import hashlib
import json
import random
from collections import Counter

from clevr.captions import COLORS, MATERIALS, SHAPES, SIZES
from games.records import arm_fields, model_seats

N_OPTIONS = 100
VISDIAL_ROUNDS = 10   # VisDial dialogs have 10 rounds; its reader pads shorter ones, longer ones break its batches
N_PLAUSIBLE = 50
N_POPULAR = 30


def answer_bank() -> list[str]:
    """Answers that are well-formed in the CLEVR world (fills small option sets)."""
    bank = ["yes", "no"] + [str(n) for n in range(11)] + list(COLORS) + list(SHAPES) + list(SIZES) \
        + list(MATERIALS) + ["i can't tell", "that's outside what i can see", "nothing"]
    for z in SIZES:
        for c in COLORS:
            for m in MATERIALS:
                for s in SHAPES:
                    bank.append(f"a {z} {c} {m} {s}")
    return bank


def norm_question(text: str) -> str:
    return " ".join(text.strip().lower().split()).rstrip("?").strip()


def norm_answer(text: str) -> str:
    return " ".join(text.strip().lower().split()).rstrip(".").strip()


def dialog_rounds(record: dict) -> list[dict]:
    """[{round, question, answer, asked_t, answered_t}] from a record's events, in order."""
    rounds: dict[int, dict] = {}
    for ev in sorted(record.get("events") or [], key=lambda e: e["seq"]):
        p = ev.get("payload") or {}
        if ev["type"] == "question_asked":
            rounds[p["round"]] = {"round": p["round"], "question": p["text"], "answer": None,
                                  "asked_t": ev.get("t")}
        elif ev["type"] == "answer_given" and p.get("round") in rounds:
            rounds[p["round"]]["answer"] = p["text"]
            rounds[p["round"]]["answered_t"] = ev.get("t")
    return [rounds[k] for k in sorted(rounds)]


def norm_caption(text: str) -> str:
    """A caption in VisDial's style: lower-case, single spaces, no final full stop."""
    return " ".join((text or "").strip().lower().split()).rstrip(".").strip()


CAPTION_STYLES = {"visdial": norm_caption, "original": lambda text: text or ""}
ID_BITS = 52   # image ids stay exact in JavaScript and in float64 readers (< 2**53)


def dialog_image_id(match_id, salt: int = 0) -> int:
    """The exported ``image_id`` of a match's dialog: the first :data:`ID_BITS` bits of
    sha256(match id), never 0. ``salt`` > 0 only when two matches of one export collide."""
    digest = hashlib.sha256((f"{match_id}" + (f"#{salt}" if salt else "")).encode()).hexdigest()
    return int(digest, 16) >> (256 - ID_BITS) or 1


def scene_image_id(record: dict) -> int | str | None:
    """The content's own id of the dialog's image (a generated scene's seed, an imported CLEVR
    image's index, or the GuessWhich secret's); many matches may share it."""
    content = record.get("content") or {}
    if "image_id" in content:
        return content["image_id"]
    secret = content.get("secret_id")  # a GuessWhich record: the secret image
    src = (content.get("sources") or {}).get(secret) or {}
    return src.get("image_index", secret)


def _image_source(record: dict) -> dict:
    content = record.get("content") or {}
    if "image_id" in content:
        return {"image_filename": content.get("image_filename"),
                "image_path": content.get("image_path") or (content.get("scene") or {}).get("image_path")}
    src = (content.get("sources") or {}).get(content.get("secret_id")) or {}
    return {"image_filename": src.get("image_filename"), "image_path": src.get("image_path")}


def _assign_image_ids(match_ids: list) -> list[int]:
    """One distinct id per dialog (see :func:`dialog_image_id`); the position breaks a tie between
    records without a match id."""
    out, used = [], set()
    for k, mid in enumerate(match_ids):
        key = mid if mid is not None else f"position:{k}"
        salt = 0
        while (iid := dialog_image_id(key, salt)) in used:
            salt += 1
        used.add(iid)
        out.append(iid)
    return out


def _complete_dialogs(records, complete_only: bool) -> list[tuple[dict, list[dict]]]:
    """(record, answered rounds) of the dialogs an export keeps (complete ones unless told)."""
    out = []
    for rec in records:
        rounds = dialog_rounds(rec)
        if not rounds:
            continue
        complete = all(r["answer"] is not None for r in rounds)
        expected = (rec.get("config") or {}).get("rounds")
        if complete_only and (not complete or (expected and len(rounds) < int(expected))):
            continue
        out.append((rec, [r for r in rounds if r["answer"] is not None]))
    return out


def image_id_map(records, *, complete_only: bool = True) -> dict:
    """The side file of :func:`to_visdial` over the same ``records``: each exported ``image_id``
    with the match, the scene it was played on and the caption as shown."""
    kept = _complete_dialogs(records, complete_only)
    ids = _assign_image_ids([rec.get("match_id") for rec, _ in kept])
    images = []
    for iid, (rec, rounds) in zip(ids, kept):
        src = _image_source(rec)
        row = {"image_id": iid, "match_id": rec.get("match_id"), "game_id": rec.get("game_id"),
               "scene_image_id": scene_image_id(rec), "image_filename": src.get("image_filename"),
               "caption": (rec.get("content") or {}).get("caption", ""), "seed": rec.get("seed"),
               "rounds": len(rounds), "rounds_exported": min(len(rounds), VISDIAL_ROUNDS), **arm_fields(rec)}
        if src.get("image_path"):
            row["image_path"] = src["image_path"]
        if model_seats(rec):   # a model played a seat: its version and checkpoint hash
            row["models"] = model_seats(rec)
        images.append(row)
    return {"format": "groundtalk-visdial-image-ids/v1", "images": images}


def to_visdial(records, *, seed: int = 0, split: str = "train", complete_only: bool = True,
               caption_style: str = "visdial") -> dict:
    """VisDial v1.0 JSON for the dialogs in ``records`` (visdial_v1 or guesswhich_v1 matches);
    ``image_id`` as in :func:`image_id_map` over the same records."""
    try:
        style = CAPTION_STYLES[caption_style]
    except KeyError:
        raise ValueError(f"caption_style must be one of {', '.join(CAPTION_STYLES)}") from None
    records = list(records)
    kept = _complete_dialogs(records, complete_only)
    ids = _assign_image_ids([rec.get("match_id") for rec, _ in kept])
    dialogs = [(rec.get("match_id"), iid, style((rec.get("content") or {}).get("caption", "")),
                [(norm_question(r["question"]), norm_answer(r["answer"])) for r in rounds[:VISDIAL_ROUNDS]])
               for iid, (rec, rounds) in zip(ids, kept)]
    questions: list[str] = []
    answers: list[str] = []
    q_index: dict[str, int] = {}
    a_index: dict[str, int] = {}

    def qi(text):
        if text not in q_index:
            q_index[text] = len(questions)
            questions.append(text)
        return q_index[text]

    def ai(text):
        if text not in a_index:
            a_index[text] = len(answers)
            answers.append(text)
        return a_index[text]

    for _, _, _, qa in dialogs:
        for q, a in qa:
            qi(q)
            ai(a)
    popularity = Counter(a for _, _, _, qa in dialogs for _, a in qa)
    if len(answers) < N_OPTIONS:
        for a in answer_bank():
            ai(a)
            if len(answers) >= N_OPTIONS + 20:
                break
    by_prefix: dict[tuple, list[str]] = {}
    for _, _, _, qa in dialogs:
        for q, a in qa:
            words = tuple(q.split())
            for k in (3, 2, 1):
                by_prefix.setdefault(words[:k], []).append(a)
    popular = [a for a, _ in popularity.most_common()]
    rng = random.Random(f"visdial-options:{seed}")
    out_dialogs = []
    for match_id, image_id, caption, qa in dialogs:
        turns = []
        for q, a in qa:
            chosen = [a]
            seen = {a}
            words = tuple(q.split())
            for k in (3, 2, 1):
                for x in by_prefix.get(words[:k], []):
                    if len(chosen) >= 1 + N_PLAUSIBLE:
                        break
                    if x not in seen:
                        chosen.append(x)
                        seen.add(x)
            for x in popular:
                if len(chosen) >= 1 + N_PLAUSIBLE + N_POPULAR:
                    break
                if x not in seen:
                    chosen.append(x)
                    seen.add(x)
            rest = [x for x in answers if x not in seen]
            chosen += rng.sample(rest, N_OPTIONS - len(chosen))
            options = [a_index[x] for x in chosen]
            rng.shuffle(options)
            turns.append({"question": q_index[q], "answer": a_index[a], "answer_options": options,
                          "gt_index": options.index(a_index[a])})
        # only VisDial's keys: which model played a seat is in the side file (image_id_map)
        out_dialogs.append({"image_id": image_id, "caption": caption, "dialog": turns})
    return {"version": "1.0", "split": split,
            "data": {"questions": questions, "answers": answers, "dialogs": out_dialogs}}


FORMATS = {"visdial": to_visdial, "visdial-image-ids": image_id_map}


def write_visdial(records, out) -> int:
    """``manage.py export --format visdial``: the VisDial v1.0 JSON of visdial_v1 matches."""
    data = to_visdial(list(records))
    json.dump(data, out, ensure_ascii=False)
    return len(data["data"]["dialogs"])


def write_image_ids(records, out) -> int:
    """``manage.py export --format visdial-image-ids``: the side file mapping the exported image
    ids back to matches and scenes (run it with the same selection as the ``visdial`` export)."""
    data = image_id_map(list(records))
    json.dump(data, out, ensure_ascii=False)
    return len(data["images"])


def export(records, fmt: str = "visdial", **options):
    """Run the exporter named ``fmt`` over ``records`` (an iterable of match records)."""
    try:
        fn = FORMATS[fmt]
    except KeyError:
        raise ValueError(f"unknown format {fmt!r}; this game exports: {', '.join(FORMATS)}") from None
    return fn(list(records), **options)
