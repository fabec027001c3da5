"""The full stack's demo (issue 20, item 4): PostgreSQL, Redis, uvicorn started with GT_DEMO=1 on a
loopback HOST, the demo batches of ``gt_demo``. A person on this machine opens the home page,
enters a two-person demo batch twice (two tabs, two demo participants) and the two are paired;
demo links open no study, and a server whose HOST is not loopback opens no demo link at all."""
from __future__ import annotations

import pytest
from django.core.management import call_command

from crowd.models import Participant
from live.models import Batch, Match, Seat

from ..conftest import child_env, running_server
from .demo import enter_both_people

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("agent_queues_served")]   # the demo batches' agents count as served

SLUG = "colors-human-human"


def demo_env(host: str) -> dict:
    return {**child_env(), "GT_DEMO": "1", "HOST": host}


def test_a_demo_person_enters_a_demo_batch_on_the_full_stack_and_is_paired(browser):
    call_command("gt_demo")
    Batch.objects.create(slug="a-study", title="A study", game_id="colors_v1", pairing=Batch.Pairing.HUMAN_HUMAN,
                         config={"rounds": 3}, entry_kinds=["lab", "mturk"])
    with running_server(demo_env("127.0.0.1"), "test-demo-server.log") as url:
        ctx = browser.new_context(viewport={"width": 1366, "height": 768})
        home = ctx.new_page()
        home.goto(url + "/")
        assert "Full stack with the demo batches" in home.inner_text("body")
        assert home.locator('tr[data-batch="a-study"]').count() == 0
        tabs = enter_both_people(ctx, home, SLUG)
        roles = sorted(tab.inner_text("#role-label").lower() for tab in tabs)
        assert "listener" in roles[0] and "speaker" in roles[1]

        # demo links never open a study, even from this machine
        for path in ("/b/a-study/?worker=eve", "/b/a-study/demo/"):
            r = home.request.get(url + path, max_redirects=0)
            assert r.status == 403 and "does not accept open links" in r.text(), path
        ctx.close()
    match = Match.objects.get(batch__slug=SLUG)
    people = Participant.objects.filter(batch__slug=SLUG)
    assert people.count() == 2 and {p.platform for p in people} == {"demo"}
    assert set(Seat.objects.filter(match=match).values_list("participant__platform", flat=True)) == {"demo"}
    assert not Participant.objects.filter(batch__slug="a-study").exists()


def test_no_demo_link_opens_when_the_server_is_not_on_loopback(browser):
    call_command("gt_demo")
    with running_server(demo_env("0.0.0.0"), "test-demo-server.log") as url:
        ctx = browser.new_context()
        page = ctx.new_page()
        page.goto(url + "/")
        assert "Demo batches" not in page.inner_text("body") and SLUG not in page.content()
        for path in (f"/b/{SLUG}/?worker=eve", f"/b/{SLUG}/demo/"):
            r = page.request.get(url + path, max_redirects=0)
            assert r.status == 403 and "does not accept open links" in r.text(), path
        ctx.close()
    assert not Participant.objects.exists()
