"""The batch builder (admin BatchForm over games.batches): impossible batches are refused with a
message naming the problem, and a saved batch that can no longer run is not served."""
from __future__ import annotations

import json

import pytest
from django.test import Client

from games.admin import BatchForm
from games.batches import batch_problems
from games.models import Batch, Participant

from .factories import batch as make_batch

pytestmark = pytest.mark.django_db


def form_data(**kw) -> dict:
    data = dict(slug="s1", title="t", game_id="colors_v1", pairing="human-agent", human_roles=["listener"],
                agents={"speaker": "colors_lexicon_speaker"}, games_per_worker=1, max_wait_s=60,
                inactivity_limit_s=600, on_timeout="leave", config={"rounds": 5}, content_pool=[],
                pay_cents=0, bonus_cents=0, instructions="", status="open")
    data.update(kw)
    return {k: json.dumps(v) if isinstance(v, (list, dict)) else v for k, v in data.items()}


def errors(**kw) -> dict:
    form = BatchForm(data=form_data(**kw))
    assert not form.is_valid()
    return {k: " ".join(v) for k, v in form.errors.items()}


def test_a_valid_batch_saves():
    form = BatchForm(data=form_data())
    assert form.is_valid(), form.errors
    b = form.save()
    assert Batch.objects.get(pk=b.pk).agents == {"speaker": "colors_lexicon_speaker"}
    assert batch_problems(b) == []


def test_unknown_game_is_refused():
    e = errors(game_id="colours_v9")
    assert "colours_v9" in e["game_id"]


def test_role_not_of_the_game():
    e = errors(human_roles=["drawer"])
    assert "'drawer' is not a role of colors_v1" in e["human_roles"] and "speaker, listener" in e["human_roles"]


def test_agent_of_another_game_or_role():
    e = errors(agents={"speaker": "alice_exact"})
    assert "alice_exact" in e["agents"] and "guesswhich_v1/answerer" in e["agents"]
    assert "colors_lexicon_speaker" in e["agents"]  # the allowed values are named
    e = errors(human_roles=["speaker"], agents={"listener": "colors_lexicon_speaker"})
    assert "colors_v1/speaker" in e["agents"] and "colors_pragmatic_listener" in e["agents"]
    e = errors(agents={"speaker": "no_such_agent"})
    assert "'no_such_agent'" in e["agents"] and "not a registered agent" in e["agents"]


def test_human_agent_without_an_agent():
    e = errors(agents={})
    assert "needs an agent for the speaker seat" in e["agents"]
    e = errors(pairing="agent-agent", human_roles=[], agents={"speaker": "colors_lexicon_speaker"})
    assert "missing: listener" in e["agents"]
    e = errors(pairing="human-human", human_roles=[], agents={}, on_timeout="agent")
    assert "on_timeout=agent" in e["agents"]


def test_config_keys_and_types():
    e = errors(config={"rounds": 5, "roundz": 3})
    assert "Unknown setting 'roundz'" in e["config"] and "rounds" in e["config"]
    assert "positive integer" in errors(config={"rounds": 0})["config"]
    assert "must be int" in errors(config={"rounds": "many"})["config"]


def test_existing_batches_stay_valid():
    from games.management.commands.gt_demo import DEMO_BATCHES

    for spec in DEMO_BATCHES:
        assert batch_problems(Batch(**spec)) == [], spec["slug"]
    assert batch_problems(make_batch()) == []


@pytest.fixture
def admin_client(django_user_model):
    user = django_user_model.objects.create_superuser("root", "root@example.org", "pw")
    c = Client()
    c.force_login(user)
    return c


def test_admin_add_refuses_a_bad_batch(admin_client):
    r = admin_client.post("/admin/games/batch/add/", form_data(slug="bad", agents={"speaker": "alice_exact"}))
    assert r.status_code == 200
    assert "alice_exact" in r.content.decode()
    assert not Batch.objects.filter(slug="bad").exists()
    r = admin_client.post("/admin/games/batch/add/", form_data(slug="good"))
    assert r.status_code == 302
    assert Batch.objects.filter(slug="good").exists()


def test_change_page_shows_entry_links(admin_client):
    b = make_batch(slug="links")
    r = admin_client.get(f"/admin/games/batch/{b.pk}/change/")
    html = r.content.decode()
    assert r.status_code == 200
    assert ("http://testserver/b/links/?PROLIFIC_PID={{%PROLIFIC_PID%}}&amp;STUDY_ID={{%STUDY_ID%}}"
            "&amp;SESSION_ID={{%SESSION_ID%}}") in html
    assert "http://testserver/b/links/?worker=NAME" in html
    r = admin_client.get("/admin/games/batch/")
    assert r.status_code == 200 and "can run" in r.content.decode().lower()


def test_a_batch_that_can_no_longer_run_is_not_served(admin_client):
    b = make_batch(slug="gone", pairing=Batch.Pairing.HUMAN_AGENT, human_roles=["listener"],
                   agents={"speaker": "colors_lexicon_speaker"})
    ok = make_batch(slug="fine")
    Batch.objects.filter(pk=b.pk).update(agents={"speaker": "removed_agent"})
    c = Client()
    r = c.get("/b/gone/?worker=x")
    assert r.status_code == 503
    assert "not available" in r.content.decode() and "<html" in r.content.decode().lower()
    assert not Participant.objects.filter(batch=b).exists()
    home = c.get("/").content.decode()
    assert "/b/gone/" not in home and "gone" not in home
    assert "fine" in home or ok.title in home
    # a worker who entered before the agent was removed is not paired either
    p = Participant.objects.create(batch=ok, platform="lab", worker_id="w", state=Participant.State.WAITING)
    Batch.objects.filter(pk=ok.pk).update(config={"rounds": 3, "bogus": 1})
    r = c.get(f"/p/{p.token}/")
    assert r.status_code == 503
    r = c.get(f"/p/{p.token}/status")
    assert r.status_code == 503 and r.json()["state"] == "unavailable"
    changelist = admin_client.get("/admin/games/batch/").content.decode()
    assert "removed_agent" in changelist
