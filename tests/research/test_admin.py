"""The batch builder (admin BatchForm over live.batches): impossible batches are refused with a
message naming the problem, and a saved batch that can no longer run is not served."""
from __future__ import annotations

import json

import pytest
from django.test import Client

from research.admin import BatchForm
from research.batch_builder import as_form_data
from live.batches import batch_problems
from crowd.models import Participant
from live.models import Batch
from games.registry import GAMES

from tests.support.factories import batch as make_batch
from tests.support.factories import lab_url

pytestmark = pytest.mark.django_db


def form_data(**kw) -> dict:
    """What the admin's batch builder posts: the model's fields, and the chosen game's roles,
    agents and settings as their own fields (research/batch_builder.py)."""
    data = dict(slug="s1", title="t", game_id="colors_v1", pairing="human-agent", human_roles=["listener"],
                agents={"speaker": "colors_lexicon_speaker"}, games_per_worker=1, max_wait_s=60,
                inactivity_limit_s=600, on_timeout="leave", on_partner_absent="requeue", config={"rounds": 5},
                unverified_pairing="agent",
                content_pool=[],
                pay_cents=0, bonus_cents=0, instructions="", status="open", entry_kinds=["lab"],
                lab_key="k1", exit_pay={}, prolific_codes={}, expected_minutes=10)
    data.update(kw)
    game = {k: data.pop(k) for k in ("human_roles", "agents", "config")}
    out = {k: json.dumps(v) if isinstance(v, (list, dict)) and k != "entry_kinds" else v  # checkboxes: a list
           for k, v in data.items()}
    out.update(as_form_data(data["game_id"], **game) if data["game_id"] in GAMES else {})
    return out


def errors(**kw) -> dict:
    form = BatchForm(data=form_data(**kw))
    assert not form.is_valid()
    return {k: " ".join(v) for k, v in form.errors.items()}


def test_a_valid_batch_saves():
    form = BatchForm(data=form_data())
    assert form.is_valid(), form.errors
    b = form.save()
    b = Batch.objects.get(pk=b.pk)
    assert (b.human_roles, b.agents, b.config) == (["listener"], {"speaker": "colors_lexicon_speaker"}, {"rounds": 5})
    assert batch_problems(b) == []


def test_only_the_chosen_games_fields_are_read():
    data = form_data(game_id="guesswhich_v1", human_roles=["questioner"], agents={"answerer": "alice_exact"},
                     config={"rounds": 4, "difficulty": "hard"})
    data.update(as_form_data("colors_v1", ["listener"], {"speaker": "colors_lexicon_speaker"}, {"rounds": 9}))
    form = BatchForm(data=data)
    assert form.is_valid(), form.errors
    b = form.save()
    assert (b.human_roles, b.agents, b.config) == (["questioner"], {"answerer": "alice_exact"},
                                                   {"rounds": 4, "difficulty": "hard"})
    # an existing batch's form shows its values in its game's fields
    form = BatchForm(instance=b)
    assert form["guesswhich_v1__agent__answerer"].value() == "alice_exact"
    assert form["guesswhich_v1__set__difficulty"].value() == "hard"


def test_choices_come_from_the_registries():
    form = BatchForm()
    assert [c for c, _ in form.fields["game_id"].choices] == list(GAMES)
    speakers = [c for c, _ in form.fields["colors_v1__agent__speaker"].choices]
    # the game's speakers, then the shipped models file's (models/models.toml)
    assert speakers == ["", "colors_lexicon_speaker", "colors_neural_speaker", "colors_neural_speaker_cic"]
    answerers = [c for c, _ in form.fields["guesswhich_v1__agent__answerer"].choices]
    assert {"alice_exact", "alice_noisy"} <= set(answerers) and "qbot" not in answerers
    assert [c for c, _ in form.fields["codraw_v1__roles"].choices] == ["teller", "drawer"]


def test_unknown_game_is_refused():
    e = errors(game_id="colours_v9")
    assert "colours_v9" in e["game_id"]


def test_role_not_of_the_game():
    e = errors(human_roles=["drawer"])
    assert "drawer is not one of the available choices" in e["colors_v1__roles"]


def test_agent_of_another_game_or_role():
    e = errors(agents={"speaker": "alice_exact"})
    assert "alice_exact is not one of the available choices" in e["colors_v1__agent__speaker"]
    e = errors(human_roles=["speaker"], agents={"listener": "colors_lexicon_speaker"})
    assert "colors_lexicon_speaker" in e["colors_v1__agent__listener"]
    e = errors(agents={"speaker": "no_such_agent"})
    assert "no_such_agent" in e["colors_v1__agent__speaker"]


def test_human_agent_without_an_agent():
    e = errors(agents={})
    assert "needs an agent for the speaker seat" in e["colors_v1__agent__speaker"]
    e = errors(pairing="agent-agent", human_roles=[], agents={"speaker": "colors_lexicon_speaker"})
    assert "missing: listener" in e["colors_v1__agent__listener"]
    e = errors(pairing="human-human", human_roles=[], agents={}, on_timeout="agent")
    assert "on_timeout=agent" in e["colors_v1__agent__speaker"]


def test_settings_are_typed_fields():
    assert "positive integer" in errors(config={"rounds": 0})["colors_v1__set__rounds"] or \
        "greater than or equal to 1" in errors(config={"rounds": 0})["colors_v1__set__rounds"]
    assert "whole number" in errors(config={"rounds": "many"})["colors_v1__set__rounds"]
    e = errors(game_id="guesswhich_v1", human_roles=["questioner"], agents={"answerer": "alice_exact"},
               config={"difficulty": "impossible"})
    assert "impossible is not one of the available choices" in e["guesswhich_v1__set__difficulty"]


def test_problems_name_their_field():
    from live.batches import problems

    found = problems(game_id="colors_v1", pairing="human-agent", human_roles=["listener"],
                     agents={"speaker": "alice_exact"}, on_timeout="leave",
                     config={"rounds": "many", "roundz": 1})
    fields = {f for f, _ in found}
    assert fields == {"agents.speaker", "config.rounds", "config"}
    diff = problems(game_id="guesswhich_v1", pairing="agent-agent", human_roles=[], on_timeout="leave",
                    agents={"answerer": "alice_exact", "questioner": "qbot"}, config={"difficulty": "x"})
    assert diff == [("config.difficulty", "Setting 'difficulty' must be one of easy, medium, hard, not 'x'.")]


def test_existing_batches_stay_valid():
    from live.management.commands.gt_demo import demo_batches

    assert {b["game_id"] for b in demo_batches()} == {"colors_v1", "codraw_v1", "guesswhich_v1", "visdial_v1"}
    for spec in demo_batches():
        assert batch_problems(Batch(**spec)) == [], spec["slug"]
    assert batch_problems(make_batch()) == []


@pytest.fixture
def admin_client(django_user_model):
    user = django_user_model.objects.create_superuser("root", "root@example.org", "pw")
    c = Client()
    c.force_login(user)
    return c


def test_admin_add_refuses_a_bad_batch(admin_client):
    r = admin_client.post("/admin/live/batch/add/", form_data(slug="bad", agents={"speaker": "alice_exact"}))
    assert r.status_code == 200
    assert "alice_exact" in r.content.decode()
    assert not Batch.objects.filter(slug="bad").exists()
    r = admin_client.post("/admin/live/batch/add/", form_data(slug="good"))
    assert r.status_code == 302
    assert Batch.objects.filter(slug="good").exists()


def test_change_page_shows_entry_links(admin_client):
    b = make_batch(slug="links")
    r = admin_client.get(f"/admin/live/batch/{b.pk}/change/")
    html = r.content.decode()
    assert r.status_code == 200
    assert ("http://testserver/b/links/?PROLIFIC_PID={{%PROLIFIC_PID%}}&amp;STUDY_ID={{%STUDY_ID%}}"
            "&amp;SESSION_ID={{%SESSION_ID%}}") in html
    assert "/research/batches/links/lab-links/" in html   # signed per-person lab links (crowd/entry.py)
    r = admin_client.get("/admin/live/batch/")
    assert r.status_code == 200 and "can run" in r.content.decode().lower()


def test_a_batch_that_can_no_longer_run_is_not_served(admin_client):
    b = make_batch(slug="gone", pairing=Batch.Pairing.HUMAN_AGENT, human_roles=["listener"],
                   agents={"speaker": "colors_lexicon_speaker"})
    ok = make_batch(slug="fine")
    Batch.objects.filter(pk=b.pk).update(agents={"speaker": "removed_agent"})
    c = Client()
    r = c.get(lab_url(b, "x"))
    assert r.status_code == 503
    assert "not available" in r.content.decode() and "<html" in r.content.decode().lower()
    assert not Participant.objects.filter(batch=b).exists()
    home = c.get("/").content.decode()
    assert "/b/gone/" not in home and "gone" not in home
    assert "fine" not in home and ok.title not in home   # a live study is never listed (issue 11)
    # a worker who entered before the agent was removed is not paired either
    assert c.get(lab_url(ok, "w")).status_code == 302
    p = Participant.objects.get(batch=ok, worker_id="w")
    Participant.objects.filter(pk=p.pk).update(state=Participant.State.WAITING)
    Batch.objects.filter(pk=ok.pk).update(config={"rounds": 3, "bogus": 1})
    r = c.get(f"/p/{p.token}/")
    assert r.status_code == 503
    r = c.get(f"/p/{p.token}/status")
    assert r.status_code == 503 and r.json()["state"] == "unavailable"
    changelist = admin_client.get("/admin/live/batch/").content.decode()
    assert "removed_agent" in changelist


def test_the_experiment_fields_have_their_fieldset_and_the_arms_their_choices(admin_client):
    """The arms' JSON carries the per-game agent choices the table offers (the batch's own agent
    fields' choices); budget, assignment, end questions and blind wait are shown beside it; an
    arm's problem is shown on the arms field, naming the arm."""
    import html as htmlmod
    import re

    page = admin_client.get("/admin/live/batch/add/").content.decode()
    experiment = page.split("gt-experiment")[1].split("</fieldset>")[0]
    for name in ("arms", "assignment", "budget_usd", "ask_partner_kind", "ask_preference", "blind_wait_min_s",
                 "blind_wait_max_s"):
        assert f'name="{name}"' in experiment, name
    area = re.search(r'<textarea[^>]*class="[^"]*gt-arms-json[^"]*"[^>]*>', experiment).group(0)
    choices = json.loads(htmlmod.unescape(re.search(r'data-agents="([^"]*)"', area).group(1)))
    assert choices["colors_v1"]["roles"] == list(GAMES["colors_v1"].roles)
    listener = [v for v, _ in choices["colors_v1"]["agents"]["listener"]]
    form_choices = [v for v, _ in BatchForm().fields["colors_v1__agent__listener"].choices]
    assert listener == form_choices and listener[0] == "" and "colors_literal_listener" in listener
    r = admin_client.post("/admin/live/batch/add/", form_data(slug="bad-arm", arms=[
        {"name": "a", "agents": {"speaker": "colors_lexicon_speaker"}},
        {"name": "b", "agents": {"speaker": "alice_exact"}}]))
    text = htmlmod.unescape(r.content.decode())
    assert r.status_code == 200 and not Batch.objects.filter(slug="bad-arm").exists()
    errors = text.split('field-arms')[1].split("</ul>")[0]
    assert "arms[1].agents.speaker (arm 'b')" in errors
