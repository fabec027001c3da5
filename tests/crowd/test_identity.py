"""Who may enter a study and which browser a participant belongs to (issue 11, item 1): takeover
attempts with a worker id, a Prolific id, a lab link or a copied address from a second browser;
forged, tampered, foreign and replayed lab tokens; entry kinds per batch; the home page; moving
to another device with a one-time code; the lab links CSV."""
from __future__ import annotations

import csv
import io
from datetime import timedelta
from urllib.parse import urlsplit

import pytest
from django.test import Client
from django.utils import timezone

from crowd import identity
from crowd.entry import lab_token
from crowd import lobby
from crowd.models import Participant
from live.models import Batch, Match, Seat

from tests.support.factories import batch as make_batch
from tests.support.factories import lab_url

pytestmark = [pytest.mark.django_db,
              pytest.mark.usefixtures("agent_queues_served")]   # human-agent batches are runnable

MTURK = "/b/{slug}/?workerId=AW1&assignmentId={a}&hitId=H1&turkSubmitTo=https://workersandbox.mturk.com"


# Prolific's ids are 24 hexadecimal digits (crowd/platform_ids.py); no Prolific answers here, so a
# participant enters unverified (crowd/verify.py), which changes nothing about browsers.
PID, STUDY, SESSION = "60f6acb180a2b1d7c5a3e1f0", "60f6acb180a2b1d7c5a3e1f1", "60f6acb180a2b1d7c5a3e1f2"


def refused(r) -> str:
    """The refusal page: 403, styled, and nothing of the participant's (token, code, seat)."""
    body = r.content.decode()
    assert r.status_code == 403, (r.status_code, body[:300])
    assert 'id="other-browser"' in body and "/static/gt/style.css" in body
    return body


def human_agent(**kw) -> Batch:
    return make_batch(pairing=Batch.Pairing.HUMAN_AGENT, human_roles=["listener"],
                      agents={"speaker": "colors_lexicon_speaker"}, **kw)


def play_to_match(c: Client, url: str) -> Seat:
    """Consent, get ready and be paired (human-agent: at once); the seat the browser got."""
    c.post(url, {"step": "consent", "agree": "yes"})
    c.post(url, {"step": "ready"})
    r = c.get(url)
    assert r.status_code == 302 and "/m/" in r.url
    return Seat.objects.get(token=r.url.split("seat=")[1])


def test_a_worker_id_in_a_second_browser_gets_nothing_of_the_participant():
    b = human_agent(slug="takeover")
    owner, thief = Client(), Client()
    r = owner.get(MTURK.format(slug=b.slug, a="A1"))
    assert r.status_code == 302
    p = Participant.objects.get(worker_id="AW1")
    seat = play_to_match(owner, r.url)
    # the same worker id, any assignment, from another browser
    for a in ("A1", "anything"):
        body = refused(thief.get(MTURK.format(slug=b.slug, a=a)))
        assert p.token not in body and seat.token not in body and p.completion_code not in body
    # the participant's own addresses, copied into the other browser
    body = refused(thief.get(f"/p/{p.token}/"))
    assert seat.token not in body and p.completion_code not in body
    r = thief.get(f"/p/{p.token}/status")
    assert r.status_code == 403 and r.json()["state"] == "other_browser" and "play_url" not in r.json()
    assert r.json()["next_url"] == f"/p/{p.token}/"   # the waiting page shows the refusal there
    body = refused(thief.get(f"/m/{seat.match_id}/?seat={seat.token}"))
    assert "ws_path" not in body and "/ws/match/" not in body and "role-label" not in body
    r = thief.post(f"/m/{seat.match_id}/partner-gone", {"seat": seat.token})
    assert r.status_code == 403
    refused(thief.post(f"/p/{p.token}/", {"step": "leave"}))
    # nothing changed for the owner, who goes on in their own browser
    p.refresh_from_db()
    assert p.state == Participant.State.PLAYING and p.assignment_id == "A1"
    assert owner.get(f"/m/{seat.match_id}/?seat={seat.token}").status_code == 200
    assert Participant.objects.filter(batch=b).count() == 1


def test_re_entry_from_the_same_browser_resumes_and_takes_the_new_assignment():
    b = make_batch(slug="again")
    c = Client()
    first = c.get(MTURK.format(slug=b.slug, a="A1"))
    again = c.get(MTURK.format(slug=b.slug, a="A2"))   # returned the HIT and accepted it again
    assert first.status_code == again.status_code == 302 and first.url == again.url
    p = Participant.objects.get(worker_id="AW1")
    assert p.assignment_id == "A2"


def test_a_prolific_id_in_a_second_browser_is_refused():
    b = make_batch(slug="pro")
    url = f"/b/pro/?PROLIFIC_PID={PID}&STUDY_ID={STUDY}&SESSION_ID={SESSION}"
    assert Client().get(url).status_code == 302
    refused(Client().get(url))
    assert Participant.objects.filter(batch=b).count() == 1


@pytest.mark.django_db(transaction=True)   # threads: each its own connection, so commits must be real
def test_two_browsers_racing_with_one_id_get_one_participant_and_one_owner():
    from tests.support.factories import run_in_threads

    b = make_batch(slug="race")
    sessions = [{} for _ in range(8)]
    outcomes = [None] * 8

    def arrive(i):
        try:
            lobby.participant_enter(batch=b, params=lobby.EntryParams("prolific", PID, study_id=STUDY, session_id=SESSION), session=sessions[i])
            outcomes[i] = "entered"
        except lobby.OtherBrowser:
            outcomes[i] = "refused"

    run_in_threads(8, arrive)
    assert outcomes.count("entered") == 1 and outcomes.count("refused") == 7
    assert Participant.objects.filter(batch=b).count() == 1


# ------------------------------------------------------------------------------- lab tokens
def test_a_lab_link_enters_its_person_once_per_browser():
    b = make_batch(slug="lab")
    c = Client()
    r = c.get(lab_url(b, "ann"))
    assert r.status_code == 302
    assert Participant.objects.get(batch=b).worker_id == "ann"
    assert c.get(lab_url(b, "ann")).url == r.url              # the same browser again: resumes
    refused(Client().get(lab_url(b, "ann")))                    # replayed in another browser
    assert Participant.objects.filter(batch=b).count() == 1


@pytest.mark.parametrize("how", ["tampered signature", "edited name", "other batch", "other key", "made up",
                                 "unsigned name", "empty"])
def test_forged_and_tampered_lab_tokens_are_refused(how):
    from django.core import signing

    b = make_batch(slug="labf")
    other = make_batch(slug="labo")
    good = lab_token(b, "ann")
    payload, _, sig = good.rpartition(":")
    token = {
        "tampered signature": payload + ":" + ("A" if sig[0] != "A" else "B") + sig[1:],
        "edited name": lab_token(b, "bob").rpartition(":")[0] + ":" + sig,   # bob's payload, ann's signature
        "other batch": lab_token(other, "ann"),
        "other key": signing.Signer(salt=f"groundtalk.lab:{b.pk}:guessed", algorithm="sha256").sign_object({"p": "x"}),
        "made up": "eyJwIjoiYW5uIn0:not-a-signature",
        "unsigned name": "ann",
        "empty": "",
    }[how]
    r = Client().get(f"/b/{b.slug}/", {"lab": token})
    body = r.content.decode()
    assert r.status_code in (400, 403) and "This link does not work" in body and "/static/gt/style.css" in body
    assert not Participant.objects.exists()


def test_changing_the_lab_key_revokes_every_link():
    b = make_batch(slug="labk")
    url = lab_url(b, "ann")
    Batch.objects.filter(pk=b.pk).update(lab_key="rotated")
    assert Client().get(url).status_code == 403
    assert Client().get(lab_url(Batch.objects.get(pk=b.pk), "ann")).status_code == 302


# ------------------------------------------------------------------------------- entry kinds
@pytest.mark.parametrize("kinds,url,status", [
    (["lab"], MTURK.format(slug="k", a="A1"), 403),
    (["lab"], f"/b/k/?PROLIFIC_PID={PID}&STUDY_ID={STUDY}&SESSION_ID={SESSION}", 403),
    (["lab"], "/b/k/?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE", 403),
    (["mturk"], f"/b/k/?PROLIFIC_PID={PID}&STUDY_ID={STUDY}&SESSION_ID={SESSION}", 403),
    (["mturk"], MTURK.format(slug="k", a="A1"), 302),
    (["prolific"], f"/b/k/?PROLIFIC_PID={PID}&STUDY_ID={STUDY}&SESSION_ID={SESSION}", 302),
    (["mturk", "prolific", "lab"], "/b/k/?worker=anyone", 403),   # open names: never in a live study
    (["demo"], "/b/k/?worker=anyone", 403),                       # not even a demo batch, unless embedded
    ([], f"/b/k/?PROLIFIC_PID={PID}&STUDY_ID={STUDY}&SESSION_ID={SESSION}", 403),
])
def test_each_batch_takes_only_its_entry_kinds(kinds, url, status):
    make_batch(slug="k", entry_kinds=kinds)
    r = Client().get(url)
    assert r.status_code == status, r.content.decode()[:300]
    if status == 403:
        assert "This link does not work" in r.content.decode()
        assert not Participant.objects.exists()


def test_lab_kind_refused_when_the_batch_takes_only_mturk():
    b = make_batch(slug="k2", entry_kinds=["mturk"])
    assert Client().get(lab_url(b, "ann")).status_code == 403


def test_demo_links_work_only_embedded(settings):
    make_batch(slug="demo", entry_kinds=["demo"])
    settings.EMBEDDED = True
    assert Client().get("/b/demo/?worker=visitor").status_code == 302
    assert Participant.objects.get().platform == "demo"


def test_the_home_page_lists_demo_batches_only_when_embedded(settings):
    make_batch(slug="live-study", title="Live study", entry_kinds=["mturk", "lab"])
    make_batch(slug="demo-one", title="Demo one", entry_kinds=["demo"])
    settings.EMBEDDED = False
    home = Client().get("/").content.decode()
    assert "live-study" not in home and "Live study" not in home and "demo-one" not in home
    settings.EMBEDDED = True
    home = Client().get("/").content.decode()
    assert "/b/demo-one/demo/" in home and "live-study" not in home and "Live study" not in home


def test_the_mturk_preview_shows_task_pay_and_time():
    make_batch(slug="prev", title="Colour game", pay_cents=150, bonus_cents=50, expected_minutes=12,
               games_per_worker=2)
    r = Client().get("/b/prev/?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=H")
    body = r.content.decode()
    assert r.status_code == 200 and "Colour game" in body and "Accept the HIT" in body
    assert "$1.50" in body and "$0.50" in body and "12 minutes" in body and "2 short cooperative games" in body
    assert not Participant.objects.exists()


# ------------------------------------------------------------------------------- another device
def test_moving_to_another_device_with_a_one_time_code():
    b = human_agent(slug="move", allow_device_change=True)
    first, second = Client(), Client()
    entry = lab_url(b, "ann")
    url = first.get(entry).url
    p = Participant.objects.get(batch=b)
    seat = play_to_match(first, url)
    page = refused(second.get(entry))
    assert 'name="ticket"' in page and p.token not in page
    ticket = page.split('name="ticket" value="')[1].split('"')[0]
    # no code asked for yet: nothing to type
    r = second.post("/continue/", {"ticket": ticket, "code": "AAAAAAAA"})
    assert r.status_code == 403 and "no valid code" in r.content.decode()
    shown = first.post(f"/p/{p.token}/device/").content.decode()
    code = shown.split('id="transfer-code-shown">')[1].split("<")[0]
    assert len(code) == 8
    r = second.post("/continue/", {"ticket": ticket, "code": "WRONG123"})
    assert r.status_code == 403 and "not right" in r.content.decode()
    r = second.post("/continue/", {"ticket": ticket, "code": code.lower()})
    assert r.status_code == 302 and urlsplit(r.url).path == f"/p/{p.token}/"
    # the new browser has the study and its seat; the first one has lost both
    assert second.get(f"/m/{seat.match_id}/?seat={seat.token}").status_code == 200
    refused(first.get(f"/p/{p.token}/"))
    refused(first.get(f"/m/{seat.match_id}/?seat={seat.token}"))
    # the code worked once
    r = Client().post("/continue/", {"ticket": ticket, "code": code})
    assert r.status_code == 403


def test_a_transfer_code_expires_and_five_wrong_codes_end_it():
    b = make_batch(slug="move2", allow_device_change=True)
    c = Client()
    c.get(lab_url(b, "ann"))
    p = Participant.objects.get(batch=b)
    ticket = identity.transfer_ticket(p)
    code = identity.transfer_start(participant_id=p.pk).transfer_code
    for _ in range(identity.TRANSFER_MAX_MISSES):
        assert Client().post("/continue/", {"ticket": ticket, "code": "XXXXXXXX"}).status_code == 403
    r = Client().post("/continue/", {"ticket": ticket, "code": code})
    assert r.status_code == 403 and "no valid code" in r.content.decode()
    code = identity.transfer_start(participant_id=p.pk).transfer_code
    Participant.objects.filter(pk=p.pk).update(transfer_expires_at=timezone.now() - timedelta(seconds=1))
    assert Client().post("/continue/", {"ticket": ticket, "code": code}).status_code == 403
    assert Client().post("/continue/", {"ticket": "forged", "code": code}).status_code == 400


def test_without_the_batch_option_there_is_no_way_to_move():
    b = make_batch(slug="stay")
    c = Client()
    c.get(lab_url(b, "ann"))
    p = Participant.objects.get(batch=b)
    assert c.get(f"/p/{p.token}/device/").status_code == 403
    assert c.post(f"/p/{p.token}/device/").status_code == 403
    page = refused(Client().get(lab_url(b, "ann")))
    assert 'name="ticket"' not in page and "does not allow moving" in page
    with pytest.raises(identity.TransferError):
        identity.transfer_start(participant_id=p.pk)


# ------------------------------------------------------------------------------- lab links page
def test_staff_download_signed_lab_links_that_work(admin_client):
    b = make_batch(slug="class", entry_kinds=["lab"])
    assert Client().get("/research/batches/class/lab-links/").status_code == 302   # staff only (login)
    assert admin_client.get("/research/batches/class/lab-links/").status_code == 200
    r = admin_client.post("/research/batches/class/lab-links/", {"count": "3", "prefix": "S"})
    assert r.status_code == 200 and r["Content-Type"].startswith("text/csv")
    assert 'filename="class-lab-links.csv"' in r["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(r.content.decode())))
    assert [row["name"] for row in rows] == ["S001", "S002", "S003"]
    for row in rows:
        link = urlsplit(row["link"])
        assert link.netloc == "testserver" and link.path == "/b/class/"
        assert Client().get(f"{link.path}?{link.query}").status_code == 302
    assert sorted(Participant.objects.filter(batch=b).values_list("worker_id", flat=True)) == ["S001", "S002", "S003"]
    r = admin_client.post("/research/batches/class/lab-links/", {"names": "ann\nbob, cy"})
    assert [row["name"] for row in csv.DictReader(io.StringIO(r.content.decode()))] == ["ann", "bob", "cy"]
    for bad in ({"names": "ann\nann"}, {"names": "<script>"}, {"count": "0"}, {"count": "x"}, {"count": "99999"}):
        r = admin_client.post("/research/batches/class/lab-links/", bad)
        assert r.status_code == 400 and 'id="lab-error"' in r.content.decode(), bad


def test_seat_pages_of_participantless_seats_still_open_by_token():
    """Seats made by code (simulate, benchmark, tests) have no participant: their token is enough."""
    from tests.support.factories import colors_match

    match, seats = colors_match()
    assert Client().get(f"/m/{match.id}/?seat={seats['listener'].token}").status_code == 200
    assert Match.objects.filter(pk=match.pk).exists()


@pytest.mark.django_db(transaction=True)   # the image view reads in a worker thread of its own
def test_a_seats_images_go_only_to_its_browser():
    b = make_batch(slug="gw-own", game_id="guesswhich_v1", pairing=Batch.Pairing.HUMAN_AGENT,
                   human_roles=["questioner"], agents={"answerer": "alice_exact"}, config={"rounds": 2})
    owner = Client()
    seat = play_to_match(owner, owner.get(lab_url(b, "ann")).url)
    image = seat.match.state["pool_ids"][0]
    url = f"/m/{seat.match_id}/img/{image}.png?seat={seat.token}&size=thumb"
    r = owner.get(url)
    assert r.status_code == 200, r.content
    r = Client().get(url)   # the address copied into another browser: as if there were no such seat
    assert r.status_code == 404 and r.content == owner.get(url.replace(seat.token, "nope")).content


def test_a_browser_without_the_cookie_is_told_it_may_be_blocking_cookies():
    b = make_batch(slug="nocookie")
    owner = Client()
    url = owner.get(lab_url(b, "ann")).url
    assert 'id="no-cookie"' in refused(Client().get(url))          # no session cookie at all
    other = Client()
    other.get(lab_url(b, "bob"))                                     # a browser with a session of its own
    assert 'id="no-cookie"' not in refused(other.get(url))


def test_the_refusal_of_a_kind_names_what_the_batch_takes():
    b = make_batch(slug="kinds", entry_kinds=["mturk", "prolific"])
    body = Client().get(lab_url(b, "ann")).content.decode()
    assert "This study does not accept lab links (it accepts: MTurk, Prolific)." in body
