"""Studies and exclusion (issue 12, item 3).

A ``Study`` is a named group of batches. A worker (platform and worker id) who has a participant
in any batch of a study has *taken part* in it; a batch whose ``excluded_studies`` names that
study refuses the worker at entry (HTTP 403, a clear page, no participant created). MTurk's launch
form can also send a "has not taken part" qualification, but this check is the one that holds on
every platform: MTurk, Prolific and lab links alike (a lab worker id is the name its signed token
carries).

A worker who already has a participant in the excluding batch itself (they entered before the
exclusion was set, or the batch is in the study it excludes) is let back in: exclusion decides
who may *start*, never takes a started study away.
"""
from __future__ import annotations

from crowd.models import Participant

from crowd.entry import EntryRefused

EXCLUDED = ("You cannot take part in this study because you took part in an earlier, related study. "
            "Please return the task (you have not started it, so this does not count against you). "
            "Thank you for your interest.")


class Excluded(EntryRefused):
    """The worker took part in a study this batch excludes."""


def excluding_studies(batch, *, platform: str, worker_id: str) -> list[str]:
    """The names of the studies ``batch`` excludes that this worker took part in (selector)."""
    studies = list(batch.excluded_studies.all())
    if not studies:
        return []
    taken = (Participant.objects.filter(platform=platform, worker_id=worker_id, batch__studies__in=studies)
             .exclude(batch=batch).values_list("batch__studies__name", flat=True))
    names = {s.name for s in studies}
    return sorted({n for n in taken if n in names})


def check_not_excluded(batch, *, platform: str, worker_id: str) -> None:
    """``EntryRefused`` when the worker took part in a study the batch excludes (unless they
    already have a participant in this batch)."""
    if Participant.objects.filter(batch=batch, platform=platform, worker_id=worker_id).exists():
        return
    if excluding_studies(batch, platform=platform, worker_id=worker_id):
        raise Excluded(EXCLUDED)

