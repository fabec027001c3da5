"""Platform ids in one canonical form (issue 21, item 2).

Every id a worker brings is checked against its platform's documented format and put in ONE form
before anything compares or stores it, so ``a1realworker3``, ``A1REALWORKER3`` and
``A1REALWORKER3.`` cannot be three people:

* MTurk (botocore's service model, mturk-requester-2017-01-17): a worker id is ``^A[A-Z0-9]+$``,
  an assignment or HIT id ``^[A-Z0-9]+$``, 1 to 64 characters. The canonical form is upper case
  (MTurk itself only ever sends upper case): ``a1realworker3`` is ``A1REALWORKER3``.
* Prolific: participant, study and submission (session) ids are 24 hexadecimal digits; the
  canonical form is lower case.
* Lab and demo names: letters, digits and ``. _ @ + -`` (crowd.entry._NAME), kept as signed.

Anything else (a dot, a space inside, a zero-width or other non-ASCII character, a full-width
letter) is refused with ``BadId`` and the page says which parameter and what it should look like.
Only the surrounding ASCII blanks a copy-paste adds are dropped. Entry (crowd.lobby.parse_entry)
is the one door: exclusion (crowd.studies), study membership and pay compare the stored ids,
which are all canonical.
"""
from __future__ import annotations

import re

MTURK_WORKER = re.compile(r"A[A-Z0-9]{1,63}")
MTURK_ENTITY = re.compile(r"[A-Z0-9]{1,64}")
PROLIFIC_ID = re.compile(r"[0-9a-f]{24}")
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}")


class BadId(ValueError):
    """An id that is not in its platform's format (HTTP 400, a clear page)."""


def _ascii(value: str, what: str) -> str:
    value = (value or "").strip(" \t\r\n")
    if not value.isascii():
        raise BadId(f"The {what} holds characters that are not part of any {what} (check for a pasted "
                    "invisible or accented character).")
    return value


def mturk_worker(value: str) -> str:
    v = _ascii(value, "MTurk worker id").upper()
    if not MTURK_WORKER.fullmatch(v):
        raise BadId("This is not an MTurk worker id (an A followed by capital letters and digits, e.g. "
                    "A1B2C3D4E5F6G7). Please open the study from the MTurk HIT itself.")
    return v


def mturk_entity(value: str, what: str = "assignment id") -> str:
    v = _ascii(value, f"MTurk {what}").upper()
    if not MTURK_ENTITY.fullmatch(v):
        raise BadId(f"This is not an MTurk {what} (capital letters and digits). Please open the study from the "
                    "MTurk HIT itself.")
    return v


def prolific(value: str, what: str = "Prolific id") -> str:
    v = _ascii(value, what).lower()
    if not PROLIFIC_ID.fullmatch(v):
        raise BadId(f"This is not a {what} (24 characters 0-9 and a-f). Please open the study from Prolific "
                    "itself.")
    return v


def name(value: str, what: str = "name") -> str:
    v = _ascii(value, what)
    if not NAME.fullmatch(v):
        raise BadId(f"The {what} may hold letters, digits and . _ @ + - only (at most 64 characters).")
    return v


def canonical(platform: str, worker_id: str) -> str:
    """The canonical form of a worker id of ``platform`` (``BadId`` if it is not one)."""
    if platform == "mturk":
        return mturk_worker(worker_id)
    if platform == "prolific":
        return prolific(worker_id, "Prolific participant id")
    return name(worker_id)
