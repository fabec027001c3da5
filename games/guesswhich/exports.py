"""GuessWhich exports, built from match records (the event log plus content).

``--format guesswhich``: what the original GuessWhich stored, one row per match::

    {"match_id", "game_id", "batch", "status", "seed", "seats", "created_at", "finished_at",
     "secret_id", "secret_image": {"image_filename", "image_index"}, "pool": [image ids],
     "pool_images": {id: {"image_filename", "image_index"}}, "caption", "difficulty",
     "rounds": [{"round", "question", "answer", "history": [{"question", "answer"}, ...earlier rounds],
                 "picked_image", "picked_correct", "coarse_rank", "asked_t", "answered_t",
                 "picked_t"}],
     "final_image_list": [image ids in click order], "rank", "reciprocal_rank",
     "score": bonus total, "score_parts": {...}, "feedback": {"ratings", "comment"} | {"skipped"} | None,
     "arm", "arm_order", "arm_position", "arm_seed"}

The last four: the match's arm of its batch's experiment (issue 24; ``games.records.arm_fields``,
"" outside one).

The score is recomputed from the events with the rules' constants (never read from the browser).

``--format guesswhich-visdial``: the dialogs as VisDial v1.0 JSON (see :mod:`games.visdial.exports`;
format names are global across games, and ``visdial`` belongs to ``visdial_v1``), each dialog with
its own ``image_id``; ``--format guesswhich-visdial-image-ids`` is its side file, mapping each id
back to the match and the secret image.
"""
from __future__ import annotations

import json

from games.guesswhich.rules import C
from games.records import arm_fields
from games.visdial.exports import image_id_map, to_visdial


def match_row(record: dict) -> dict:
    content = record.get("content") or {}
    secret = content.get("secret_id")
    sources = content.get("sources") or {}
    coarse = content.get("coarse_rank") or {}
    rounds: dict[int, dict] = {}
    clicks: list[tuple[str, bool]] = []
    feedback = None
    for ev in sorted(record.get("events") or [], key=lambda e: e["seq"]):
        p = ev.get("payload") or {}
        t = ev["type"]
        if t == "question_asked":
            rounds[p["round"]] = {"round": p["round"], "question": p["text"], "answer": None,
                                  "picked_image": None, "asked_t": ev.get("t")}
        elif t == "answer_given" and p.get("round") in rounds:
            rounds[p["round"]].update(answer=p["text"], answered_t=ev.get("t"))
        elif t == "guess_made" and p.get("round") in rounds:
            rounds[p["round"]].update(picked_image=p["image_id"], picked_t=ev.get("t"))
        elif t == "image_clicked":
            clicks.append((p["image_id"], p["image_id"] == secret))
        elif t == "feedback_given":
            feedback = {"ratings": p.get("ratings"), "comment": p.get("comment", "")}
        elif t == "feedback_skipped":
            feedback = {"skipped": True, "by": p.get("by")}
    ordered = [rounds[k] for k in sorted(rounds)]
    history: list[dict] = []
    for r in ordered:
        r["history"] = list(history)
        r["picked_correct"] = None if r["picked_image"] is None else r["picked_image"] == secret
        r["coarse_rank"] = coarse.get(r["picked_image"]) if r["picked_image"] else None
        if r["answer"] is not None:
            history.append({"question": r["question"], "answer": r["answer"]})
    found = any(ok for _, ok in clicks)
    wrong = sum(1 for _, ok in clicks if not ok)
    right = sum(1 for r in ordered if r["picked_correct"])
    rank = len(clicks) if found else None
    return {
        "match_id": record.get("match_id"), "game_id": record.get("game_id"), "batch": record.get("batch"),
        "status": record.get("status"), "seed": record.get("seed"), "seats": record.get("seats"),
        "created_at": record.get("created_at"), "finished_at": record.get("finished_at"),
        "secret_id": secret,
        "secret_image": {k: (sources.get(secret) or {}).get(k) for k in ("image_filename", "image_index")},
        "pool": [item["id"] for item in content.get("pool") or []],
        "pool_images": {i: {k: s.get(k) for k in ("image_filename", "image_index")} for i, s in sources.items()},
        "caption": content.get("caption"), "difficulty": content.get("difficulty"),
        "rounds": ordered,
        "final_image_list": [i for i, _ in clicks],
        "rank": rank, "reciprocal_rank": (1.0 / rank) if rank else None,
        "score": C.BONUS_BASE + C.BONUS_WRONG_CLICK * wrong + C.BONUS_RIGHT_ROUND * right,
        "score_parts": {"base": C.BONUS_BASE, "wrong_clicks": wrong, "right_round_guesses": right},
        "feedback": feedback,
        **arm_fields(record),
    }


def to_guesswhich(records, **_options) -> list[dict]:
    return [match_row(r) for r in records if r.get("game_id", "guesswhich_v1") == "guesswhich_v1"]


FORMATS = {"guesswhich": to_guesswhich, "visdial": to_visdial, "visdial-image-ids": image_id_map}


def write_guesswhich(records, out) -> int:
    """``manage.py export --format guesswhich``: one JSON object per line per match."""
    n = 0
    for row in to_guesswhich(records):
        out.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")))
        out.write("\n")
        n += 1
    return n


def write_visdial(records, out) -> int:
    """``manage.py export --format guesswhich-visdial``: GuessWhich dialogs as VisDial v1.0 JSON."""
    data = to_visdial(list(records))
    json.dump(data, out, ensure_ascii=False)
    return len(data["data"]["dialogs"])


def write_image_ids(records, out) -> int:
    """``manage.py export --format guesswhich-visdial-image-ids``: the side file of
    ``guesswhich-visdial`` (exported image id -> match, secret image, caption)."""
    data = image_id_map(list(records))
    json.dump(data, out, ensure_ascii=False)
    return len(data["images"])


def export(records, fmt: str = "guesswhich", **options):
    """Run the exporter named ``fmt`` over ``records`` (an iterable of match records)."""
    try:
        fn = FORMATS[fmt]
    except KeyError:
        raise ValueError(f"unknown format {fmt!r}; this game exports: {', '.join(FORMATS)}") from None
    return fn(list(records), **options)
