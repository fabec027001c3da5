"""Who may enter a batch (issue 11, item 1).

A batch lists the entry kinds it accepts (``Batch.entry_kinds``):

* ``mturk``: MTurk's ExternalQuestion parameters (workerId, assignmentId, hitId, turkSubmitTo);
* ``prolific``: Prolific's study URL parameters (PROLIFIC_PID, STUDY_ID, SESSION_ID);
* ``lab``: ``?lab=TOKEN``, a per-person token the researcher generates (``lab_links``, the staff
  page ``/research/batches/<slug>/lab-links/`` downloads them as CSV). The token is the person's
  name signed with Django's signing (HMAC-SHA256 over SECRET_KEY) under a salt of the batch's id
  and its ``lab_key``: a token of another batch, an edited name or a made-up token is refused;
  changing ``lab_key`` revokes every link of the batch. A token opened in a second browser is a
  takeover attempt like any other (crowd.identity).
* ``demo``: ``?worker=NAME`` with any name: while the server runs embedded (settings.EMBEDDED:
  SQLite, one process, the newcomer's demo), or on the full stack when the operator asked for the
  demo on this machine (``settings.GT_DEMO_ENTRY``: ``GT_DEMO=1`` and a loopback ``HOST``), and
  then only for a browser on this machine asking for a loopback host name
  (``check_demo_client``: a request through a proxy names the public host or address). A live
  study never accepts it. ``/b/<slug>/demo/`` (crowd.pages.demo_entry) makes a new demo person
  at each click, so one browser can play both seats of a human-human demo batch.

``entry_problems(batch)`` says why nobody can enter a batch on this server (the admin and the
research pages show it).
"""
from __future__ import annotations

import io
import re
from urllib.parse import urlencode

from django.conf import settings
from django.core import signing
from django.core.exceptions import DisallowedHost

from groundtalk_web import csvsafe
from groundtalk_web.loopback import is_loopback

ENTRY_KINDS = ("mturk", "prolific", "lab", "demo")
KIND_LABELS = {"mturk": "MTurk", "prolific": "Prolific", "lab": "lab", "demo": "demo"}
MAX_LAB_LINKS = 5000
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}$")


class EntryRefused(ValueError):
    """The batch does not take this kind of link, or its lab token is not valid (HTTP 403)."""


def _signer(batch) -> signing.Signer:
    return signing.Signer(salt=f"groundtalk.lab:{batch.pk}:{batch.lab_key}", algorithm="sha256")


def lab_token(batch, person: str) -> str:
    """The signed token of one person's lab link."""
    return _signer(batch).sign_object({"p": person})


def lab_person(batch, token: str) -> str:
    """The person a lab token names; ``EntryRefused`` for a forged, edited or foreign token."""
    try:
        data = _signer(batch).unsign_object(token)
    except (signing.BadSignature, ValueError, UnicodeDecodeError):
        raise EntryRefused("This lab link is not valid for this study. Please use the link the researcher "
                           "gave you, exactly as it is.") from None
    person = data.get("p") if isinstance(data, dict) else None
    if not isinstance(person, str) or not _NAME.match(person):
        raise EntryRefused("This lab link is not valid for this study.")
    return person


DEMO_CLOSED = ("This study does not accept open links: please use the link you were given "
               "(MTurk, Prolific or your personal lab link).")


def demo_entry_open() -> bool:
    """Whether this server opens demo links at all (embedded, or GT_DEMO=1 on a loopback HOST)."""
    return bool(settings.EMBEDDED or settings.GT_DEMO_ENTRY)


def check_demo_client(request) -> None:
    """On the full stack a demo link serves only a browser on this machine: the client's address
    and the host name it asked for must both be loopback (behind a proxy the address is the
    visitor's, from X-Forwarded-For, and the host the public name). Embedded: anyone (its own
    guard is gt_listen_check)."""
    if settings.EMBEDDED:
        return
    try:
        host = request.get_host()
    except DisallowedHost:
        host = ""
    if not (is_loopback(request.META.get("REMOTE_ADDR", "")) and is_loopback(host)):
        raise EntryRefused(DEMO_CLOSED)


def check_kind(batch, platform: str) -> None:
    """Refuse an entry kind the batch does not accept."""
    kinds = batch.entry_kinds or []
    if platform == "demo":
        if "demo" not in kinds or not demo_entry_open():
            raise EntryRefused(DEMO_CLOSED)
        return
    if platform not in kinds:
        accepted = ", ".join(KIND_LABELS[k] for k in kinds if k in KIND_LABELS and k != "demo") or "no links"
        raise EntryRefused(f"This study does not accept {KIND_LABELS.get(platform, platform)} links "
                           f"(it accepts: {accepted}).")


def entry_problems(batch) -> list[str]:
    """Why nobody can enter this batch on this server (empty: someone can). A batch that takes
    only demo links cannot be entered where demo links are closed (the full stack without
    GT_DEMO=1 on a loopback HOST)."""
    kinds = [k for k in batch.entry_kinds or [] if k in ENTRY_KINDS]
    if not kinds:
        return ["Nobody can enter it: it takes no entry links (tick lab, MTurk or Prolific under Entry kinds)."]
    if kinds == ["demo"] and not demo_entry_open():
        return ["Nobody can enter it here: it takes only demo links (?worker=NAME), which this server does not "
                "open (only the embedded server does, or the full stack started with GT_DEMO=1 on a loopback HOST, "
                "from that machine). Tick lab under Entry kinds and hand out lab links."]
    return []


def lab_names(*, names_text: str = "", count: int = 0, prefix: str = "P") -> list[str]:
    """The people to make links for: the names given one per line (or comma-separated), else
    ``count`` numbered names (``P001`` ...). ``ValueError`` says what is wrong."""
    names = [n.strip() for n in re.split(r"[\n,]", names_text or "") if n.strip()]
    if not names:
        if not 0 < count <= MAX_LAB_LINKS:
            raise ValueError(f"Give names, or a number of links from 1 to {MAX_LAB_LINKS}.")
        if not _NAME.match(prefix or "P"):
            raise ValueError("The prefix may hold letters, digits and . _ @ + - only.")
        width = max(3, len(str(count)))
        names = [f"{prefix or 'P'}{i:0{width}d}" for i in range(1, count + 1)]
    bad = [n for n in names if not _NAME.match(n)]
    if bad:
        raise ValueError(f"Names may hold letters, digits and . _ @ + - (at most 64 characters): {bad[0][:80]!r}.")
    if len(set(names)) != len(names):
        raise ValueError("Each name may appear once (one link per person).")
    if len(names) > MAX_LAB_LINKS:
        raise ValueError(f"At most {MAX_LAB_LINKS} links at once.")
    return names


def lab_links(batch, names: list[str], entry_url: str) -> list[tuple[str, str]]:
    """(name, full link) for each person; ``entry_url`` is the batch's absolute entry address."""
    return [(name, f"{entry_url}?{urlencode({'lab': lab_token(batch, name)})}") for name in names]


def lab_links_csv(rows: list[tuple[str, str]]) -> str:
    out = io.StringIO()
    writer = csvsafe.writer(out)   # names are checked (_NAME), and escaped all the same
    writer.writerow(["name", "link"])
    writer.writerows(rows)
    return out.getvalue()
