"""A web process loads what a game imports on first use while a person waits, not inside the
pairing (games/spec.py ``GameSpec.warm_up_soon``, crowd/lobby.py, crowd/pages.py).

The colour game imports colour-science (matplotlib, scipy.interpolate: about 1.5 s of CPU) on its
first colour computation, which in a web process is the match's content, made by the poll that
pairs two people while it holds the batch row's lock. A loaded machine saw the first pairing of a
fresh server take 1.7 s of the issue 20 bound "both present: paired in under 2 s"
(tests/crowd/test_presence.py::test_ghost_pairing_across_two_server_processes failed by chance).
Each probe is a fresh process on the test database, as a server process is: the first waiting
poll of a colour batch starts the import in the background, the pairing then finds it done; a
process that serves only games with nothing to warm up imports nothing."""
from __future__ import annotations

import subprocess
import sys

import pytest

from crowd.models import Participant
from live.models import Batch, Match
from tests.conftest import ROOT, child_env
from tests.support.factories import batch as make_batch
from tests.support.factories import participant

pytestmark = pytest.mark.django_db(transaction=True)

PROBE = r"""
import os, sys, threading
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "groundtalk_web.settings")
import django
django.setup()
from crowd import lobby
from games import spec
from games.registry import get_game
ids = [int(a) for a in sys.argv[1:]]
lobby.lobby_poll(participant_id=ids[0])          # the first waiting poll of this process: nobody to pair with
print("warming:", sorted(spec._warming))
for t in threading.enumerate():                  # the import may still be running
    if t.name.startswith("gt-warm-up-"):
        t.join(120)
print("imported before pairing:", "colour" in sys.modules)
for pid in ids[1:]:
    status = lobby.lobby_poll(participant_id=pid)
    print("paired:", status.match_id is not None)
print("started again:", [g for g in ("colors_v1", "codraw_v1") if get_game(g).warm_up_soon() is not None])
"""


PAGE_PROBE = r"""
import os, sys, threading
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "groundtalk_web.settings")
import django
django.setup()
from django.test import Client
from django.test.utils import setup_test_environment
setup_test_environment()
page = Client().get(f"/p/{sys.argv[1]}/")
print("status:", page.status_code, "consent:", "consent" in page.content.decode().lower())
for t in threading.enumerate():
    if t.name.startswith("gt-warm-up-"):
        t.join(120)
print("imported while reading:", "colour" in sys.modules)
"""


def probe(*args, script: str = PROBE) -> str:
    done = subprocess.run([sys.executable, "-c", script, *map(str, args)], cwd=ROOT, env=child_env(),
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_first_waiting_poll_of_a_colour_batch_loads_colour_science_before_the_pairing():
    b = make_batch(slug="warm-colours")
    first, second = participant(b, "ann"), participant(b, "bob")
    out = probe(first.pk, second.pk)
    assert "warming: ['games.colors']" in out, out
    assert "imported before pairing: True" in out, out     # by the waiting poll, no colour computed yet
    assert "paired: True" in out, out
    assert "started again: []" in out, out                  # once per process
    assert Match.objects.filter(batch=b).count() == 1


def test_a_process_that_serves_a_game_with_nothing_to_warm_up_imports_nothing():
    b = make_batch(slug="warm-codraw", game_id="codraw_v1", config={}, pairing=Batch.Pairing.HUMAN_HUMAN)
    first, second = participant(b, "cy"), participant(b, "di")
    out = probe(first.pk, second.pk)
    assert "warming: []" in out and "imported before pairing: False" in out, out
    assert "paired: True" in out, out
    assert "started again: ['colors_v1']" in out, out     # colour's was never started here
    assert Match.objects.filter(batch=b).count() == 1


def test_the_consent_page_of_a_colour_batch_starts_the_import_while_the_person_reads():
    b = make_batch(slug="warm-consent")
    reader = participant(b, "eve", state=Participant.State.CONSENT)
    out = probe(reader.token, script=PAGE_PROBE)
    assert "status: 200 consent: True" in out and "imported while reading: True" in out, out
