"""People's CoDraw dialogs from a file, for training and validating the neural Drawer on human
language (``manage.py train_agent codraw_neural_drawer --data FILE``).

Two formats of one shape (the released ``CoDraw_1_0.json`` of Kim et al., read as the authors'
``codraw_data.py`` reads it: ``["data"]``, each entry's ``abs_t`` and ``dialog``, each round's
``msg_t``, ``abs_b``, ``abs_d``), told apart by GroundTalk's marks:

* ``codraw``: GroundTalk's own export (:mod:`games.codraw.exports`): an entry whose ``socketId``
  is ``/#groundtalk_<match id>``, whose key is ``groundtalk_<match id>`` or which lists the
  ``groundtalk_models`` that played it;
* ``CoDraw_1_0.json``: the release, and any file in its shape without those marks.

A file that is not a CoDraw document (no ``"data"`` object, a malformed scene string) is refused
with a ValueError naming the entry.

Each round with a Teller message becomes one example in the shape the Drawer trains on
(:func:`games.codraw.neural.data.round_example`)::

    {"text": msg_t, "canvas": [pieces of abs_b], "changes": [pieces the Drawer added or moved],
     "removed": [idx], "dialog": key, "condition": ..., "abstain": bool,
     "history": [the Teller's earlier messages of the dialog]}

For the Teller (``train_agent codraw_neural_teller --data``), ``Corpus.targets`` holds each
dialog's target (``abs_t``) as the Teller's view has it (:func:`data.target_pieces`) and each
example's ``history`` the Teller's earlier messages (skipped rounds' messages included); the
Teller's examples are made from them by ``teller_train.people_examples``.

``condition`` says what the person did (what validation accuracy is reported by): ``adds``
(placed one new piece), ``moves`` (changed one piece already drawn), ``several`` (two or more
pieces), ``nothing`` (changed nothing: the example teaches the Drawer to abstain). Rounds without
a Teller message (the release's first round, the Drawer's greeting) and rounds that only remove
pieces are skipped and counted.

:func:`split_by_dialog` splits by dialog key, never by round: the release's ``train_``/``val_``/
``test_`` key prefixes when the file has training and held-out keys, else a seeded share of the keys.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agents.checkpoints import file_sha256
from agents.training import split_by_group
from games.codraw.neural.data import round_example, target_pieces
from games.codraw.scenes import SceneFormatError, read_codraw_document

FORMATS = ("CoDraw_1_0.json", "codraw")
CONDITIONS = ("adds", "moves", "several", "nothing")
SPLIT_PREFIXES = ("train", "val", "test")


@dataclass
class Corpus:
    """The rounds read from one file, its format and sha256, and what was skipped."""

    path: str
    format: str
    sha256: str
    examples: list[dict] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)          # every key, in file order
    skipped_rounds: int = 0          # no Teller message, or only removals
    # for the Teller (teller_train.people_examples): each key's target as the Teller's view has it
    targets: dict[str, list[dict]] = field(default_factory=dict)


def detect_format(document: dict) -> str:
    """``"codraw"`` when an entry carries GroundTalk's marks (module docstring), else ``"CoDraw_1_0.json"``."""
    for key, entry in document["data"].items():
        if str(key).startswith("groundtalk_") or "groundtalk_models" in entry \
                or str(entry.get("socketId", "")).startswith("/#groundtalk_"):
            return "codraw"
    return "CoDraw_1_0.json"


def condition_of(example: dict) -> str:
    if not example["changes"]:
        return "nothing"
    if len(example["changes"]) > 1:
        return "several"
    before = {p["idx"] for p in example["canvas"]}
    return "moves" if example["changes"][0]["idx"] in before else "adds"


def read_corpus(path: str | Path) -> Corpus:
    """Every round of ``path`` with a Teller message, in file order (see the module docstring)."""
    path = Path(path)
    try:
        document = read_codraw_document(path)
    except SceneFormatError as exc:
        raise ValueError(str(exc)) from None
    except (UnicodeDecodeError, ValueError) as exc:      # json.JSONDecodeError is a ValueError
        raise ValueError(f"{path}: not a CoDraw JSON file ({exc}). Expected the shape of CoDraw_1_0.json: "
                         '{"data": {"train_00000": {"abs_t": ..., "dialog": [{"msg_t", "abs_b", "abs_d", ...}]}}}') \
            from None
    corpus = Corpus(str(path), detect_format(document), file_sha256(path))
    for key, entry in document["data"].items():
        corpus.dialogs.append(key)
        corpus.targets[key] = target_pieces(entry["abs_t"])
        said: list[str] = []         # the Teller's earlier messages of this dialog
        for round_ in entry.get("dialog") or []:
            text = str(round_.get("msg_t") or "").strip()
            if not text:
                corpus.skipped_rounds += 1
                continue
            example = round_example(text, round_.get("abs_b") or "", round_.get("abs_d") or "")
            history = list(said)
            said.append(text)
            if example["removed"] and not example["changes"]:
                corpus.skipped_rounds += 1
                continue
            condition = condition_of(example)
            corpus.examples.append({**example, "dialog": key, "condition": condition,
                                    "abstain": condition == "nothing", "history": history})
    return corpus


def split_by_dialog(examples: list[dict], val_fraction: float, seed: int) -> tuple[list[dict], list[dict], list[str], str]:
    """``(train examples, validation examples, validation dialog keys, how)``: when the keys carry
    the release's split prefixes and some are ``train_`` and some ``val_`` (else ``test_``), those
    (``how`` = ``"keys"``; ``test_`` keys are left out when ``val_`` ones exist); else a seeded
    ``val_fraction`` of the dialog keys (at least one each side), ``how`` = ``"seeded"``."""
    keys = sorted({e["dialog"] for e in examples})
    prefix = {k: k.split("_", 1)[0] for k in keys}
    train_keys = {k for k in keys if prefix[k] == "train"}
    held = {k for k in keys if prefix[k] == "val"} or {k for k in keys if prefix[k] == "test"}
    if train_keys and held:
        return ([e for e in examples if e["dialog"] in train_keys], [e for e in examples if e["dialog"] in held],
                sorted(held), "keys")
    return (*split_by_group(examples, "dialog", val_fraction, f"codraw-corpus-split:{seed}", "dialog"), "seeded")
