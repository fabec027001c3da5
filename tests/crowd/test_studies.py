"""Studies and exclusion (issue 12, item 3): a worker who took part in a study cannot enter a
batch that excludes it, on every entry kind; a clear 403 page and no participant is created."""
from __future__ import annotations

import hashlib

import pytest
from django.test import Client

from research.admin import BatchForm
from crowd.models import Participant, Study

from tests.support.factories import batch as make_batch
from tests.support.factories import lab_url

pytestmark = pytest.mark.django_db


def mturk_url(b, worker):
    """MTurk's id formats (crowd/platform_ids.py): the worker ``w1`` is ``AW1``. No MTurk answers
    here, so the worker enters unverified (crowd/verify.py): exclusion holds all the same."""
    w = "A" + worker.upper()
    return f"/b/{b.slug}/?workerId={w}&assignmentId=3{w}&hitId=3HIT1&turkSubmitTo=https://workersandbox.mturk.com"


def _hex(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def prolific_url(b, worker):
    """Prolific's 24-hex ids, made from the test's name for the worker."""
    return f"/b/{b.slug}/?PROLIFIC_PID={_hex(worker)}&STUDY_ID={_hex('study')}&SESSION_ID={_hex('session' + worker)}"


URLS = {"mturk": mturk_url, "prolific": prolific_url, "lab": lab_url}


@pytest.fixture()
def setup():
    first = make_batch(slug="pilot")
    other = make_batch(slug="pilot-2")
    study = Study.objects.create(name="color pilot")
    study.batches.add(first, other)
    later = make_batch(slug="main")
    later.excluded_studies.add(study)
    return first, later


@pytest.mark.parametrize("kind", ["mturk", "prolific", "lab"])
def test_a_worker_of_an_excluded_study_is_refused_at_entry(setup, kind):
    first, later = setup
    url = URLS[kind]
    assert Client().get(url(first, "w1")).status_code == 302     # took part in the study
    r = Client().get(url(later, "w1"))
    assert r.status_code == 403
    page = r.content.decode()
    assert "took part in an earlier, related study" in page and "Traceback" not in page
    assert not Participant.objects.filter(batch=later).exists()
    # another worker, and the same worker id on another platform, enter
    assert Client().get(url(later, "w2")).status_code == 302
    other_kind = "lab" if kind != "lab" else "mturk"
    assert Client().get(URLS[other_kind](later, "w1")).status_code == 302
    assert Participant.objects.filter(batch=later).count() == 2


def test_any_batch_of_the_study_counts_and_a_batch_without_exclusion_is_open(setup):
    first, later = setup
    assert Client().get(lab_url(first.studies.get().batches.get(slug="pilot-2"), "ann")).status_code == 302
    assert Client().get(lab_url(later, "ann")).status_code == 403
    free = make_batch(slug="free")
    assert Client().get(lab_url(free, "ann")).status_code == 302


def test_a_worker_already_in_the_batch_is_let_back_in(setup):
    first, later = setup
    c = Client()
    r = c.get(lab_url(later, "bob"))
    assert r.status_code == 302                       # entered before taking part in the study
    Participant.objects.create(batch=first, platform="lab", worker_id="bob")
    assert c.get(lab_url(later, "bob")).status_code == 302   # resumes: exclusion decides who may start


def test_the_batch_form_offers_the_exclusion(setup):
    _, later = setup
    form = BatchForm(instance=later)
    assert "excluded_studies" in form.fields
    assert [s.name for s in form.fields["excluded_studies"].queryset] == ["color pilot"]
