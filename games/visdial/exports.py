"""Visual-dialog exports: ``--format visdial`` writes VisDial v1.0 JSON from match records.

Shape (VisDial v1.0, so existing VisDial data loaders read it)::

    {"version": "1.0", "split": "train",
     "data": {"questions": [str, ...], "answers": [str, ...],
              "dialogs": [{"image_id": int, "caption": str,
                           "dialog": [{"question": qi, "answer": ai,
                                       "answer_options": [100 answer indices], "gt_index": k}, ...]}]},
     "matches": [match_id per dialog]}

Built only from the event log (``question_asked`` / ``answer_given``) and the match content
(caption, image id). Only dialogs whose every round has an answer are exported (VisDial kept only
complete dialogs). Text is normalised as in VisDial's release: stripped, lower-cased, the
question's trailing "?" and the answer's trailing "." removed.

Candidate answers (VisDial section 4): each question gets 100 distinct options, the ground truth
plus up to 50 *plausible* answers (answers given to the questions in the set that start with the
same words), up to 30 *popular* answers (most frequent in the set), and *random* answers to fill;
seeded (``seed``), so an export is reproducible. When the set is small its answers are topped up
with a bank of CLEVR answers (yes/no, counts, colors, shapes, sizes, materials, object
descriptions), which are added to ``answers``.
"""
from __future__ import annotations

import json
import random
from collections import Counter

from games.clevr.captions import COLORS, MATERIALS, SHAPES, SIZES

N_OPTIONS = 100
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


def _image_id(record: dict) -> int | str | None:
    content = record.get("content") or {}
    if "image_id" in content:
        return content["image_id"]
    secret = content.get("secret_id")  # a GuessWhich record: the secret image
    src = (content.get("sources") or {}).get(secret) or {}
    return src.get("image_index", secret)


def to_visdial(records, *, seed: int = 0, split: str = "train", complete_only: bool = True) -> dict:
    """VisDial v1.0 JSON for the dialogs in ``records`` (visdial_v1 or guesswhich_v1 matches)."""
    dialogs = []
    for rec in records:
        rounds = dialog_rounds(rec)
        if not rounds:
            continue
        complete = all(r["answer"] is not None for r in rounds)
        expected = (rec.get("config") or {}).get("rounds")
        if complete_only and (not complete or (expected and len(rounds) < int(expected))):
            continue
        rounds = [r for r in rounds if r["answer"] is not None]
        dialogs.append((rec.get("match_id"), _image_id(rec), (rec.get("content") or {}).get("caption", ""),
                        [(norm_question(r["question"]), norm_answer(r["answer"])) for r in rounds]))
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
        out_dialogs.append({"image_id": image_id, "caption": caption, "dialog": turns})
    return {"version": "1.0", "split": split,
            "data": {"questions": questions, "answers": answers, "dialogs": out_dialogs},
            "matches": [d[0] for d in dialogs]}


FORMATS = {"visdial": to_visdial}


def write_visdial(records, out) -> int:
    """``manage.py export --format visdial``: the VisDial v1.0 JSON of visdial_v1 matches."""
    data = to_visdial(list(records))
    json.dump(data, out, ensure_ascii=False)
    return len(data["data"]["dialogs"])


EXPORT_FORMATS = {"visdial": write_visdial}


def export(records, fmt: str = "visdial", **options):
    """Run the exporter named ``fmt`` over ``records`` (an iterable of match records)."""
    try:
        fn = FORMATS[fmt]
    except KeyError:
        raise ValueError(f"unknown format {fmt!r}; this game exports: {', '.join(FORMATS)}") from None
    return fn(list(records), **options)
