"""The post-game questionnaire (issue 12, item 3): asked after the last game and before the
completion code, validated on the server (a bad form stores nothing), stored once per participant
with the match its partner questions are about, and exported (jsonl entry, questionnaire-csv)."""
from __future__ import annotations

import csv
import io
import json

import pytest
from django.test import Client

from crowd import questionnaire
from research.exports import run_export
from crowd.models import Participant, QuestionnaireResponse
from live.models import Batch, Seat
from live.selectors import pseudonym

from tests.support.factories import batch as make_batch
from tests.support.factories import lab_url
from tests.crowd.test_outcomes import play_colors_round

pytestmark = pytest.mark.django_db

QUESTIONS = [
    {"id": "partner_clear", "kind": "likert", "text": "My partner was clear", "about": "partner", "min": 1, "max": 5},
    {"id": "enjoyed", "kind": "likert", "text": "I enjoyed the game", "about": "study", "min": 1, "max": 7},
    {"id": "comment", "kind": "text", "text": "Any comments?", "required": False, "max_length": 50},
]


def pair(b: Batch):
    out = []
    for name in ("ann", "bob"):
        c = Client()
        url = c.get(lab_url(b, name)).url
        c.post(url, {"step": "consent", "agree": "yes"})
        c.post(url, {"step": "ready"})
        out.append((c, url))
    out[0][0].get(out[0][1])
    r = out[1][0].get(out[1][1])
    return out, Seat.objects.get(token=r.url.split("seat=")[1]).match


def me(url) -> Participant:
    return Participant.objects.get(token=url.rstrip("/").rsplit("/", 1)[-1])


def test_problems_of_a_questionnaire():
    assert questionnaire.questionnaire_problems(QUESTIONS) == []
    assert questionnaire.questionnaire_problems(None) == []
    assert questionnaire.questionnaire_problems("x")
    assert questionnaire.questionnaire_problems([{"id": "a", "kind": "stars", "text": "?"}])
    assert questionnaire.questionnaire_problems([{"id": "a", "kind": "likert", "text": "?", "min": 3, "max": 2}])
    assert questionnaire.questionnaire_problems([{"id": "a", "kind": "text", "text": "?"}] * 2)


def test_guesswhich_defaults_to_its_feedback_ratings_and_an_empty_list_asks_nothing():
    gw = make_batch(game_id="guesswhich_v1", slug="gw")
    ids = [q["id"] for q in questionnaire.questions_for(gw)]
    assert ids == ["understood_question", "understood_image", "fluency", "detail", "accuracy", "consistency",
                   "comment"]
    from games.guesswhich.rules import C

    assert set(ids[:6]) == set(C.RATING_KEYS)
    assert questionnaire.questions_for(make_batch(slug="c1")) == []               # colors: no default
    assert questionnaire.questions_for(make_batch(slug="gw0", game_id="guesswhich_v1", questionnaire=[])) == []


def test_asked_after_the_last_game_validated_stored_and_exported():
    b = make_batch(slug="q", config={"rounds": 1}, questionnaire=QUESTIONS, pay_cents=100)
    [(ca, ua), (cb, ub)], match = pair(b)
    play_colors_round(match.id)
    p = me(ua)
    assert (p.state, p.exit_reason) == ("done", "completed")
    page = ca.get(ua).content.decode()
    assert "A few questions before you finish" in page and p.completion_code not in page
    # a bad form: missing required, out of range, too long; nothing stored
    for data in ({"enjoyed": "3"}, {"partner_clear": "6", "enjoyed": "3"}, {"partner_clear": "x", "enjoyed": "3"},
                 {"partner_clear": "2", "enjoyed": "3", "comment": "x" * 51}):
        r = ca.post(ua, {"step": "questionnaire", **data})
        assert r.status_code == 200 and 'id="questionnaire-error"' in r.content.decode()   # again, with why
        assert "Traceback" not in r.content.decode()
    assert not QuestionnaireResponse.objects.exists()
    r = ca.post(ua, {"step": "questionnaire", "partner_clear": "4", "enjoyed": "7", "comment": "  fun  "})
    assert r.status_code == 302
    page = ca.get(ua).content.decode()
    assert p.completion_code in page and "You finished the study." in page
    resp = QuestionnaireResponse.objects.get(participant=p)
    assert resp.answers == {"partner_clear": 4, "enjoyed": 7, "comment": "fun"} and resp.match_id == match.id
    # a second submission keeps the first
    ca.post(ua, {"step": "questionnaire", "partner_clear": "1", "enjoyed": "1"})
    assert QuestionnaireResponse.objects.get(participant=p).answers["partner_clear"] == 4
    # bob answers without the optional comment
    cb.post(ub, {"step": "questionnaire", "partner_clear": "2", "enjoyed": "5"})
    assert QuestionnaireResponse.objects.get(participant=me(ub)).answers == {"partner_clear": 2, "enjoyed": 5}

    out = io.StringIO()
    run_export("jsonl", out, batch="q")
    [record] = [json.loads(line) for line in out.getvalue().splitlines()]
    entries = {e["worker"]: e for e in record["questionnaire"]}
    assert set(entries) == {pseudonym("ann"), pseudonym("bob")}
    role_of_ann = Seat.objects.get(match=match, participant=p).role
    assert entries[pseudonym("ann")]["role"] == role_of_ann
    assert entries[pseudonym("ann")]["answers"] == {"partner_clear": 4, "enjoyed": 7, "comment": "fun"}
    assert record["seats"][role_of_ann]["worker"] == pseudonym("ann")   # joins to the dialog's seat

    out = io.StringIO()
    n = run_export("questionnaire-csv", out, batch="q")
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert n == len(rows) == 5
    ann = {r["question_id"]: r for r in rows if r["worker"] == pseudonym("ann")}
    assert ann["partner_clear"]["answer"] == "4" and ann["partner_clear"]["about"] == "partner"
    assert ann["comment"]["answer"] == "fun" and ann["enjoyed"]["match_id"] == str(match.id)
    assert "ann" not in out.getvalue().replace(pseudonym("ann"), "")


def test_not_asked_of_a_worker_who_played_no_game():
    b = make_batch(slug="nq", questionnaire=QUESTIONS, pay_cents=100)
    c = Client()
    url = c.get(lab_url(b, "ann")).url
    c.post(url, {"step": "consent", "agree": "yes"})
    c.post(url, {"step": "ready"})
    c.post(url, {"step": "leave"})
    assert "A few questions" not in c.get(url).content.decode()
    r = c.post(url, {"step": "questionnaire", "partner_clear": "4", "enjoyed": "7"})
    assert r.status_code == 302 and not QuestionnaireResponse.objects.exists()
