"""Questions at the end of a match (issue 24, items 2 and 4; crowd/end_questions.py): "was your
partner a person or an AI?" after each match and, after two arms, the pairwise preferences; asked
only once a match has ended and before the next one, stored once, the arms never named on the page,
a bad form refused with the reason and nothing stored; the research selectors read them."""
from __future__ import annotations

import pytest
from django.test import Client

from crowd import end_questions
from crowd.models import Participant, PartnerKindAnswer, PreferenceAnswer
from live.models import Batch, Match, Seat
from research import arms as research_arms
from tests.crowd.test_outcomes import play_colors_round
from tests.support.factories import batch as make_batch
from tests.support.factories import lab_url

pytestmark = pytest.mark.django_db

LITERAL, PRAGMATIC = "colors_literal_listener", "colors_pragmatic_listener"
ARM_WORDS = ("literal", "pragmatic", LITERAL, PRAGMATIC)


def within_batch(**kw) -> Batch:
    return make_batch(pairing=Batch.Pairing.HUMAN_AGENT, human_roles=["speaker"], games_per_worker=2,
                      assignment="within", config={"rounds": 1}, pay_cents=100, arms=[
                          {"name": "literal", "agents": {"listener": LITERAL}},
                          {"name": "pragmatic", "agents": {"listener": PRAGMATIC}}], **kw)


def enter(b: Batch, name: str = "ann"):
    c = Client()
    url = c.get(lab_url(b, name)).url
    c.post(url, {"step": "consent", "agree": "yes"})
    c.post(url, {"step": "ready"})
    return c, url


def me(url) -> Participant:
    return Participant.objects.get(token=url.rstrip("/").rsplit("/", 1)[-1])


def seated(c, url) -> Match:
    r = c.get(url)
    assert r.status_code == 302 and "/m/" in r.url, r
    return Seat.objects.get(token=r.url.split("seat=")[1]).match


def no_arm_named(html: str) -> None:
    assert "Traceback" not in html
    for word in ARM_WORDS:
        assert word not in html.lower(), word


def test_partner_kind_then_preferences_asked_when_due_stored_once_and_read_by_research():
    b = within_batch(ask_partner_kind=True, ask_preference=True)
    c, url = enter(b)
    first = seated(c, url)
    assert seated(c, url) == first                         # the match is on: no question yet
    assert end_questions.due(me(url)) is None
    play_colors_round(first.id)
    p = me(url)
    assert (p.state, p.games_played) == ("waiting", 1)
    page = c.get(url)
    html = page.content.decode()
    assert page.status_code == 200 and "Was your partner a person or an AI?" in html and "How sure are you?" in html
    no_arm_named(html)
    assert Match.objects.filter(batch=b).count() == 1      # not seated while the question is due
    # bad forms: each refused with its reason, nothing stored
    good = {"step": "end_questions", "kind": "partner_kind", "match": str(first.pk)}
    for data in ({}, {"partner_kind": "ai"}, {"partner_kind": "robot", "confidence": "3"},
                 {"partner_kind": "ai", "confidence": "9"}, {"partner_kind": "ai", "confidence": "x"}):
        r = c.post(url, {**good, **data})
        text = r.content.decode()
        assert r.status_code == 200 and 'id="end-questions-error"' in text and "Traceback" not in text, data
    r = c.post(url, {**good, "match": "5b9d3c1e-0000-0000-0000-000000000000", "partner_kind": "ai",
                     "confidence": "3"})
    assert r.status_code == 200 and 'id="end-questions-stale"' in r.content.decode()   # about another game
    r = c.post(url, {**good, "kind": "preference", "partner_kind": "ai", "confidence": "3"})
    assert r.status_code == 200 and 'id="end-questions-stale"' in r.content.decode()
    assert not PartnerKindAnswer.objects.exists()
    r = c.post(url, {**good, "partner_kind": "ai", "confidence": "4"})
    assert r.status_code == 302
    answer = PartnerKindAnswer.objects.get()
    assert (answer.participant_id, answer.match_id, answer.arm, answer.said_person, answer.confidence) == (
        p.pk, first.pk, first.arm, False, 4)
    c.post(url, {**good, "partner_kind": "person", "confidence": "1"})   # again: the first answer stays
    assert PartnerKindAnswer.objects.get().said_person is False
    # the wait starts afresh; the second game (the other arm) is seated
    second = seated(c, url)
    assert second.arm != first.arm and {first.arm, second.arm} == {"literal", "pragmatic"}
    play_colors_round(second.id)
    assert me(url).state == "done"
    html = c.get(url).content.decode()
    assert "Was your partner a person or an AI?" in html   # before the preferences and the code
    c.post(url, {"step": "end_questions", "kind": "partner_kind", "match": str(second.pk), "partner_kind": "person",
                 "confidence": "2"})
    html = c.get(url).content.decode()
    assert "Which partner would you rather play with again?" in html and "Which partner understood you better?" in html
    assert "Your first partner" in html and "Your second partner" in html and me(url).completion_code not in html
    no_arm_named(html)
    pair = {"step": "end_questions", "kind": "preference", "match_a": str(first.pk), "match_b": str(second.pk)}
    for data in ({"play_again": "a"}, {"play_again": "a", "understood": "c"}, {"play_again": "literal",
                                                                                "understood": "b"}):
        r = c.post(url, {**pair, **data})
        assert r.status_code == 200 and 'id="end-questions-error"' in r.content.decode(), data
    r = c.post(url, {**pair, "match_a": str(second.pk), "match_b": str(first.pk), "play_again": "a",
                     "understood": "a"})
    assert 'id="end-questions-stale"' in r.content.decode()   # the pair the other way round: not this one
    assert not PreferenceAnswer.objects.exists()
    assert c.post(url, {**pair, "play_again": "a", "understood": "none"}).status_code == 302
    rows = {a.question: a for a in PreferenceAnswer.objects.all()}
    assert set(rows) == {"play_again", "understood"}
    assert all((a.match_a_id, a.match_b_id, a.arm_a, a.arm_b) == (first.pk, second.pk, first.arm, second.arm)
               for a in rows.values())
    assert (rows["play_again"].choice, rows["understood"].choice) == ("a", "none")
    c.post(url, {**pair, "play_again": "b", "understood": "b"})   # stored once
    assert PreferenceAnswer.objects.count() == 2 and PreferenceAnswer.objects.get(question="play_again").choice == "a"
    html = c.get(url).content.decode()
    assert me(url).completion_code in html   # nothing more to ask: the code

    # research reads them as its plain rows
    prefs = research_arms.batch_preferences(batch=b)
    assert {(x.question, x.arm_a, x.arm_b, x.winner) for x in prefs} == {
        ("play_again", first.arm, second.arm, first.arm), ("understood", first.arm, second.arm, None)}
    judged = research_arms.batch_judgements(batch=b)
    assert [(j.arm, j.said_person, j.confidence) for j in judged] == [(first.arm, False, 4), (second.arm, True, 2)]
    stats = research_arms.batch_arm_statistics(batch=b)
    assert stats["preferences"]["questions"]["play_again"]["answers"] == 1
    rates = {row["arm"]: row["rate"] for row in stats["taken_for_person"]["arms"]}
    assert rates == {first.arm: 0.0, second.arm: 1.0}


def test_nothing_asked_when_the_batch_does_not_ask():
    b = within_batch()
    c, url = enter(b, "bob")
    first = seated(c, url)
    play_colors_round(first.id)
    assert end_questions.due(me(url)) is None
    assert seated(c, url).pk != first.pk   # straight on to the next game
    assert research_arms.batch_arm_statistics(batch=b)["preferences"] is None


def test_a_person_with_a_question_due_is_nobodys_partner():
    b = make_batch(pairing=Batch.Pairing.HUMAN_HUMAN, config={"rounds": 1}, games_per_worker=2, ask_partner_kind=True)
    (ca, ua), (cb, ub) = enter(b, "ann"), enter(b, "bob")
    ca.get(ua)
    match = seated(cb, ub)
    play_colors_round(match.id)
    assert me(ua).state == me(ub).state == "waiting"
    (cc, uc) = enter(b, "cat")
    for _ in range(2):
        r = cc.get(uc)
        assert r.status_code == 200   # cat waits: ann and bob have a question to answer first
    assert Match.objects.filter(batch=b).count() == 1
    ca.post(ua, {"step": "end_questions", "kind": "partner_kind", "match": str(match.pk), "partner_kind": "person",
                 "confidence": "5"})
    assert seated(ca, ua).pk != match.pk   # answered: paired again (with cat)
    assert end_questions.due(me(ub)) is not None and "person or an AI" in cb.get(ub).content.decode()
