"""The practice round (issue 12, item 3): a real match against an agent, played through the
services with a real Celery worker as the agent, gates pairing; passed or failed it is stored and
reused; the practice match is no game of the batch and is not exported."""
from __future__ import annotations

import io
import json
import time

import pytest
from django.test import Client

from crowd import onboarding
from crowd import lobby
from games.base import IllegalAction
from research.exports import run_export
from crowd.models import OnboardingResult, Participant, PracticeRound
from live.models import Match
from live.services import match_apply_action

from tests.support.factories import batch as make_batch
from tests.support.factories import lab_url, listener_target

pytestmark = [pytest.mark.celery, pytest.mark.django_db(transaction=True)]


def enter_ready(b, name):
    c = Client()
    url = c.get(lab_url(b, name)).url
    c.post(url, {"step": "consent", "agree": "yes"})
    c.post(url, {"step": "ready"})
    return c, url


def me(url) -> Participant:
    return Participant.objects.get(token=url.rstrip("/").rsplit("/", 1)[-1])


def play_practice(c, url, *, right: bool) -> Match:
    """Start the practice round from the worker's page and play it as the listener against the
    agent speaker (the Celery worker): the right swatch, or a wrong one, in every round."""
    r = c.post(url, {"step": "practice"})
    assert r.status_code == 302 and "/m/" in r.url
    match_id = r.url.split("/m/")[1].split("/")[0]
    token = r.url.split("seat=")[1]
    page = c.get(r.url)
    assert page.status_code == 200 and f'/p/{me(url).token}/' in page.content.decode()   # back to the worker's page
    rounds = Match.objects.get(pk=match_id).config["rounds"]
    for round_no in range(1, rounds + 1):
        deadline = time.monotonic() + 30
        while True:   # until the agent has described the target (its message is in the log)
            match = Match.objects.get(pk=match_id)
            target = listener_target(match)
            position = target if right else (target + 1) % 3
            try:
                match_apply_action(match_id=match_id, role="listener", client_action_id=f"{token[:6]}{round_no}",
                                   action={"type": "click", "position": position, "round": round_no})
                break
            except IllegalAction:
                assert time.monotonic() < deadline, "the agent never spoke"
                time.sleep(0.1)
    return Match.objects.get(pk=match_id)


def test_the_practice_round_gates_pairing_and_is_reused(celery_worker_process):
    b = make_batch(slug="prac", onboarding="practice", config={"rounds": 1}, pay_cents=100)
    ca, ua = enter_ready(b, "ann")
    cb, ub = enter_ready(b, "bob")
    assert me(ua).state == me(ub).state == "onboarding"
    assert "A practice round before you play" in ca.get(ua).content.decode()
    assert lobby.lobby_poll(participant_id=me(ua).pk).match_id is None     # not paired before passing

    match = play_practice(ca, ua, right=True)
    assert match.status == "finished" and match.batch_id is None and match.outcome["correct"] == 2
    assert ca.get(ua).status_code == 302 and me(ua).state == "waiting"    # graded when the page is opened
    assert me(ua).games_played == 0                                        # no game of the batch
    assert lobby.lobby_poll(participant_id=me(ua).pk).match_id is None     # bob has not passed

    # bob fails twice (no right pick): let go, screened out, no pay
    play_practice(cb, ub, right=False)
    page = cb.get(ub).content.decode()
    assert me(ub).state == "onboarding" and "did not pass" in page and 'id="attempts-left">1<' in page
    play_practice(cb, ub, right=False)
    cb.get(ub)
    p = me(ub)
    assert (p.state, p.exit_reason, p.outcome, p.pay) == ("done", "failed_onboarding", "screened_out", "none")
    result = OnboardingResult.objects.get(worker_id="bob", kind="practice")
    assert (result.passed, result.attempts, result.score) == (False, 2, 0)
    assert PracticeRound.objects.filter(participant=p, graded=True).count() == 2

    # reused: ann goes straight to the waiting room of another batch with the practice round
    _, url2 = enter_ready(make_batch(slug="prac-2", onboarding="practice"), "ann")
    assert me(url2).state == "waiting"
    _, url3 = enter_ready(make_batch(slug="prac-3", onboarding="practice"), "bob")
    assert (me(url3).state, me(url3).exit_reason) == ("done", "failed_onboarding")

    # practice matches are never exported
    out = io.StringIO()
    run_export("jsonl", out, status="all")
    exported = {json.loads(line)["match_id"] for line in out.getvalue().splitlines()}
    practice_ids = {str(r.match_id) for r in PracticeRound.objects.all()}
    assert len(practice_ids) == 3 and str(match.id) in practice_ids and not exported & practice_ids
    # nor counted by the monitor and the agent comparisons
    from research.monitor import played_matches

    assert not {m.match_id for m in played_matches(game_id="colors_v1")} & practice_ids


def test_the_batch_form_checks_the_practice_round():
    assert onboarding.onboarding_problems(game_id="colors_v1", kind="practice") == []
    assert onboarding.onboarding_problems(game_id="guesswhich_v1", kind="practice")   # none defined
    assert onboarding.practice_problems("colors_v1", {"role": "speaker", "agents": {"listener": "nobody"},
                                                      "max_attempts": 1})
