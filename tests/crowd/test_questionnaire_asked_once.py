"""GuessWhich's six ratings are asked once (issue 20, item 4): the game asks them in its feedback
phase, so the post-game questionnaire (the batch's default, or one that repeats those ids) leaves
them out and still asks its other items; a questioner whose game ended before the feedback phase is
asked them in the questionnaire instead. Both exports still carry the ratings: GuessWhich's
(``feedback``) and the questionnaire's (jsonl entry and questionnaire-csv, ``asked_in: game``).
Pages through the Django test client against PostgreSQL; the game through the match service."""
from __future__ import annotations

import csv
import io
import json
import re

import pytest

from crowd import questionnaire
from research.exports import run_export
from games.guesswhich.rules import C
from crowd.models import Participant, QuestionnaireResponse
from live.models import Match, Seat
from live.selectors import pseudonym
from live.services import match_apply_action

from tests.support.factories import batch as make_batch
from tests.crowd.test_questionnaire import me, pair

pytestmark = pytest.mark.django_db

RATINGS = dict(zip(C.RATING_KEYS, (4, 5, 3, 2, 5, 4)))
RATING_IDS = set(C.RATING_KEYS)


def seat_urls(match, clients_urls):
    """{role: (client, participant url)} for the two workers paired into ``match``."""
    out = {}
    for c, url in clients_urls:
        out[Seat.objects.get(match=match, participant=me(url)).role] = (c, url)
    return out


def play_to_the_end(match, *, feedback: dict | None) -> None:
    """One round: a question, an answer, a wrong best guess, the secret found at the second click,
    then the feedback (``None``: skipped)."""
    secret = match.state["secret_id"]
    other = next(i for i in match.state["pool_ids"] if i != secret)
    n = iter(range(100))

    def act(role, action):
        match_apply_action(match_id=match.id, role=role, action=action, client_action_id=f"a{next(n)}")

    act("questioner", {"type": "ask", "text": "Is there a red cube?"})
    act("answerer", {"type": "answer", "text": "yes, a big one"})
    act("questioner", {"type": "guess", "image_id": other})
    act("questioner", {"type": "guess", "image_id": other})
    act("questioner", {"type": "guess", "image_id": secret})
    act("questioner", {"type": "feedback", **feedback} if feedback is not None else {"type": "skip_feedback"})


def page_ids(html: str) -> set[str]:
    """The questions a questionnaire page asks (their fieldsets, templates/lobby/questionnaire.html)."""
    return set(re.findall(r'<fieldset class="quiz-question" id="qn-(\w+)"', html))


def test_the_game_asks_the_ratings_so_the_questionnaire_does_not_and_both_exports_carry_them():
    b = make_batch(slug="gw-once", game_id="guesswhich_v1", config={"rounds": 1}, pay_cents=100)
    pairs, match = pair(b)
    seats = seat_urls(match, pairs)
    # while playing, the questioner's game page has the in-game ratings form
    qc, qurl = seats["questioner"]
    game_page = qc.get(f"/m/{match.id}/?seat={Seat.objects.get(match=match, role='questioner').token}")
    assert game_page.status_code == 200 and 'id="feedback"' in game_page.content.decode()
    play_to_the_end(match, feedback={"ratings": RATINGS, "comment": "clear answers"})
    match.refresh_from_db()
    assert match.state["phase"] == "done"

    # the questioner: the six ratings were asked in the game; the questionnaire asks only the comment
    p = me(qurl)
    assert (p.state, p.exit_reason) == ("done", "completed")
    html = qc.get(qurl).content.decode()
    assert "A few questions before you finish" in html
    assert page_ids(html) == {"comment"}
    for key in C.RATING_KEYS:
        assert f'name="{key}"' not in html
    assert [q["id"] for q in questionnaire.questions_asked(p)] == ["comment"]
    r = qc.post(qurl, {"step": "questionnaire", "comment": "fun game"})
    assert r.status_code == 302 and p.completion_code in qc.get(qurl).content.decode()
    assert QuestionnaireResponse.objects.get(participant=p).answers == {"comment": "fun game"}
    # the answerer was never asked the ratings (they are the questioner's); only the comment
    ac, aurl = seats["answerer"]
    assert page_ids(ac.get(aurl).content.decode()) == {"comment"}

    # GuessWhich's export has the in-game feedback
    out = io.StringIO()
    run_export("guesswhich", out, batch="gw-once")
    [row] = [json.loads(line) for line in out.getvalue().splitlines()]
    assert row["feedback"] == {"ratings": RATINGS, "comment": "clear answers"}
    # the questionnaire's jsonl entry has the ratings (from the game) and the comment (asked after)
    out = io.StringIO()
    run_export("jsonl", out, batch="gw-once")
    [record] = [json.loads(line) for line in out.getvalue().splitlines()]
    [entry] = record["questionnaire"]            # the answerer answered nothing yet
    assert entry["role"] == "questioner" and entry["worker"] == pseudonym(p.worker_id)
    assert entry["answers"] == {**RATINGS, "comment": "fun game"}
    asked_in = {q["id"]: q.get("asked_in") for q in entry["questions"]}
    assert asked_in == {"comment": None, **{k: "game" for k in C.RATING_KEYS}}
    # and questionnaire-csv has one row per answer, each saying where it was asked
    out = io.StringIO()
    assert run_export("questionnaire-csv", out, batch="gw-once") == 7
    rows = {r["question_id"]: r for r in csv.DictReader(io.StringIO(out.getvalue()))}
    assert {k: int(rows[k]["answer"]) for k in C.RATING_KEYS} == RATINGS
    assert {rows[k]["asked_in"] for k in C.RATING_KEYS} == {"game"} and rows["comment"]["asked_in"] == "questionnaire"
    assert rows["fluency"]["match_id"] == str(match.id) and rows["fluency"]["role"] == "questioner"


def test_a_batch_questionnaire_repeating_the_ratings_still_asks_its_other_items():
    questions = [*questionnaire.game_default("guesswhich_v1")[:6],
                 {"id": "enjoyed", "kind": "likert", "text": "I enjoyed the game", "about": "study", "min": 1, "max": 7}]
    b = make_batch(slug="gw-own", game_id="guesswhich_v1", config={"rounds": 1}, pay_cents=100,
                   questionnaire=questions)
    pairs, match = pair(b)
    seats = seat_urls(match, pairs)
    play_to_the_end(match, feedback={"ratings": RATINGS, "comment": ""})
    qc, qurl = seats["questioner"]
    assert page_ids(qc.get(qurl).content.decode()) == {"enjoyed"}
    assert qc.post(qurl, {"step": "questionnaire", "enjoyed": "6"}).status_code == 302
    out = io.StringIO()
    run_export("questionnaire-csv", out, batch="gw-own")
    rows = {r["question_id"]: r["answer"] for r in csv.DictReader(io.StringIO(out.getvalue()))}
    assert rows == {"enjoyed": "6", **{k: str(v) for k, v in RATINGS.items()}}


def test_skipped_in_the_game_is_not_asked_again_and_exports_nothing_for_the_ratings():
    b = make_batch(slug="gw-skip", game_id="guesswhich_v1", config={"rounds": 1}, pay_cents=100)
    pairs, match = pair(b)
    play_to_the_end(match, feedback=None)
    qc, qurl = seat_urls(match, pairs)["questioner"]
    assert page_ids(qc.get(qurl).content.decode()) == {"comment"}
    qc.post(qurl, {"step": "questionnaire", "comment": ""})
    out = io.StringIO()
    run_export("jsonl", out, batch="gw-skip")
    [record] = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [e["answers"] for e in record["questionnaire"]] == [{}]


def test_a_game_that_ended_before_its_feedback_phase_leaves_the_ratings_to_the_questionnaire():
    b = make_batch(slug="gw-cut", game_id="guesswhich_v1", config={"rounds": 1}, pay_cents=100)
    pairs, match = pair(b)
    qc, qurl = seat_urls(match, pairs)["questioner"]
    # the game ends by its clock before the feedback phase (the worker's part ends time_up)
    Match.objects.filter(pk=match.pk).update(status=Match.Status.TIMED_OUT)
    Participant.objects.filter(pk=me(qurl).pk).update(state=Participant.State.DONE, exit_reason="time_up")
    html = qc.get(qurl).content.decode()
    assert page_ids(html) == RATING_IDS | {"comment"}
    r = qc.post(qurl, {"step": "questionnaire", **{k: str(v) for k, v in RATINGS.items()}})
    assert r.status_code == 302
    out = io.StringIO()
    run_export("questionnaire-csv", out, batch="gw-cut", status="all")
    rows = {r["question_id"]: r for r in csv.DictReader(io.StringIO(out.getvalue()))}
    assert {k: int(rows[k]["answer"]) for k in C.RATING_KEYS} == RATINGS
    assert {rows[k]["asked_in"] for k in C.RATING_KEYS} == {"questionnaire"}
    # stored as asked: the questions only, never the page's working fields (error, value, scale)
    stored = QuestionnaireResponse.objects.get(participant=me(qurl)).questions
    assert stored == questionnaire.game_default("guesswhich_v1")


def test_visdial_has_no_in_game_ratings_and_no_default_questionnaire():
    """The visual-dialog game shares the CLEVR dialog page (static/games/clevr/dialog_page.js) but
    asks no ratings, in the game or after it."""
    b = make_batch(slug="vd-once", game_id="visdial_v1", config={"rounds": 1}, pay_cents=100)
    assert questionnaire.questions_for(b) == []
    pairs, match = pair(b)
    seat = Seat.objects.filter(match=match).first()
    html = pairs[0][0].get(f"/m/{match.id}/?seat={seat.token}").content.decode()
    assert 'id="feedback"' not in html and "rating" not in html.lower()
    assert questionnaire.asked_in_game(seat) == {}
