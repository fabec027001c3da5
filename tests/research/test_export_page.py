"""The staff export page (/research/export/) and ``manage.py export --status``: staff only, every
format streams a parseable file, finished matches by default (never active ones unless asked)."""
from __future__ import annotations

import copy
import csv
import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.urls import reverse

from games.registry import GAMES
from research.exports import export_formats
from live.models import Match, Seat
from live.services import SeatSpec, match_apply_action, match_create
from tests.support.staff_users import staff_user

pytestmark = pytest.mark.django_db(transaction=True)   # the stream's writer reads in a thread of its own

URL = "/research/export/"


_POOLS: dict = {}


def guesswhich_content(config: dict, seed: int) -> dict:
    """A GuessWhich match's content (its pool of scenes: about 0.6 s of CPU, and the ``matches``
    fixture makes two for every test that takes it), generated once per module as match_create
    would, a copy each time."""
    key = (json.dumps(config, sort_keys=True), seed)
    if key not in _POOLS:
        spec = GAMES["guesswhich_v1"]
        _POOLS[key] = spec.content.generate(seed, {**spec.default_config, **config})
    return copy.deepcopy(_POOLS[key])


def human_match(game_id: str, roles, config: dict, seed: int = 3) -> Match:
    seats = {role: SeatSpec(Seat.Kind.HUMAN) for role in roles}
    content = guesswhich_content(config, seed) if game_id == "guesswhich_v1" else None
    return match_create(game_id=game_id, seats=seats, seed=seed, config=config, content=content)


def set_status(match: Match, status: str) -> Match:
    Match.objects.filter(pk=match.pk).update(status=status)
    return Match.objects.get(pk=match.pk)


def colors_played(status="finished") -> Match:
    m = human_match("colors_v1", ("speaker", "listener"), {"rounds": 2})
    match_apply_action(match_id=m.id, role="speaker", action={"type": "chat", "text": "the blue one"})
    match_apply_action(match_id=m.id, role="listener", action={"type": "click", "position": 1, "round": 1})
    return set_status(m, status)


def codraw_played(status="finished") -> Match:
    m = human_match("codraw_v1", ("teller", "drawer"), {})
    match_apply_action(match_id=m.id, role="teller", action={"type": "chat", "text": "a tree on the left"})
    match_apply_action(match_id=m.id, role="drawer", action={"type": "chat", "text": "ok"})
    return set_status(m, status)


def dialog_played(game_id: str, status="finished") -> Match:
    m = human_match(game_id, ("questioner", "answerer"), {"rounds": 1})
    match_apply_action(match_id=m.id, role="questioner", action={"type": "ask", "text": "is it a dog?"})
    match_apply_action(match_id=m.id, role="answerer", action={"type": "answer", "text": "yes it is"})
    return set_status(m, status)


@pytest.fixture
def matches():
    """One finished match of each game, plus an active and an aborted colors match."""
    return {"colors": colors_played(), "codraw": codraw_played(), "visdial": dialog_played("visdial_v1"),
            "guesswhich": dialog_played("guesswhich_v1"), "colors_active": colors_played("active"),
            "colors_aborted": colors_played("aborted"), "gw_active": dialog_played("guesswhich_v1", "active")}


@pytest.fixture
def staff(client):
    user = staff_user("staff", None)   # force_login: no password to hash (0.2 s of CPU a test)
    client.force_login(user)
    return client


def body(response) -> str:
    assert response.status_code == 200, response.status_code
    assert response.streaming
    return b"".join(response.streaming_content).decode("utf-8")


def download(client, fmt: str, **params) -> str:
    query = {"format": fmt, "batch": "all", "status": "finished", "pseudonymise": "on", **params}
    return body(client.get(URL, query))


def test_staff_only(client):
    response = client.get(URL)
    assert response.status_code == 302 and "/login/" in response["Location"]
    user = get_user_model().objects.create_user("worker", password="pw", is_staff=False)
    client.force_login(user)
    response = client.get(URL, {"format": "jsonl", "batch": "all", "status": "all"})
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_page_renders_and_home_links_it(staff):
    page = staff.get(URL)
    assert page.status_code == 200
    html = page.content.decode()
    for fmt in export_formats():
        assert f'value="{fmt}"' in html
    assert reverse("research_export") in staff.get("/research/").content.decode()


def test_every_format_streams_a_parseable_file(staff, matches):
    # the platform's formats and every format a registered game declares (GameSpec.exports)
    assert set(export_formats()) == {"jsonl", "questionnaire-csv"} | {fmt for spec in GAMES.values() for fmt in spec.exports}
    assert {"colors-csv", "codraw", "visdial", "visdial-image-ids", "guesswhich", "guesswhich-visdial",
            "guesswhich-visdial-image-ids"} <= set(export_formats())
    response = staff.get(URL, {"format": "jsonl", "batch": "all", "status": "finished", "pseudonymise": "on"})
    assert response["Content-Type"].startswith("application/x-ndjson")
    assert response["Content-Disposition"] == 'attachment; filename="groundtalk-jsonl-all-finished.jsonl"'
    assert response["X-Export-Matches"] == "4"
    records = [json.loads(line) for line in body(response).splitlines()]
    assert {r["match_id"] for r in records} == {str(matches[k].id) for k in ("colors", "codraw", "visdial", "guesswhich")}
    assert all(w["worker"] is None or w["worker"].startswith("W") for r in records for w in r["seats"].values())

    response = staff.get(URL, {"format": "colors-csv", "batch": "all", "status": "finished"})
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(body(response))))
    assert [r["contents"] for r in rows] == ["the blue one"] and rows[0]["gameid"] == str(matches["colors"].id)

    # no questionnaire answered in these matches: the header only (tests/crowd/test_questionnaire.py has the rows)
    assert download(staff, "questionnaire-csv").splitlines() == [
        '"match_id","batch","game_id","role","worker","question_id","about","kind","question","answer","asked_in"']

    codraw = json.loads(download(staff, "codraw"))
    assert len(codraw["data"]) == 1

    visdial = json.loads(download(staff, "visdial"))
    assert set(visdial) == {"version", "split", "data"} and len(visdial["data"]["dialogs"]) == 1
    side = json.loads(download(staff, "visdial-image-ids"))   # the side file maps the image id back
    assert [(r["image_id"], r["match_id"]) for r in side["images"]] == \
        [(visdial["data"]["dialogs"][0]["image_id"], str(matches["visdial"].id))]

    guesswhich = [json.loads(line) for line in download(staff, "guesswhich").splitlines()]
    assert [g["match_id"] for g in guesswhich] == [str(matches["guesswhich"].id)]
    assert guesswhich[0]["rounds"][0]["question"] == "is it a dog?"

    gw_visdial = json.loads(download(staff, "guesswhich-visdial"))
    gw_side = json.loads(download(staff, "guesswhich-visdial-image-ids"))
    assert [(r["image_id"], r["match_id"]) for r in gw_side["images"]] == \
        [(d["image_id"], str(matches["guesswhich"].id)) for d in gw_visdial["data"]["dialogs"]]


@pytest.mark.parametrize("fmt, file", [(fmt, file) for spec in GAMES.values() for fmt, file in spec.exports.items()])
def test_each_game_format_downloads_as_the_file_type_its_game_declares(staff, matches, fmt, file):
    response = staff.get(URL, {"format": fmt, "batch": "all", "status": "finished"})
    assert response.status_code == 200
    assert response["Content-Type"].startswith(file.content_type)
    assert response["Content-Disposition"] == f'attachment; filename="groundtalk-{fmt}-all-finished.{file.extension}"'
    body(response)


def test_status_filter(staff, matches):
    def ids(status, fmt="jsonl"):
        return {json.loads(line)["match_id"] for line in download(staff, fmt, status=status).splitlines()}

    finished = ids("finished")
    assert str(matches["colors_active"].id) not in finished and str(matches["colors_aborted"].id) not in finished
    assert ids("aborted") == {str(matches["colors_aborted"].id)}
    every = ids("all")
    assert {str(m.id) for m in matches.values()} == every            # all: active ones too
    assert ids("finished", "guesswhich") == {str(matches["guesswhich"].id)}   # no active GuessWhich match
    count = staff.get(URL, {"format": "jsonl", "batch": "all", "status": "aborted", "count": "1"}).json()
    assert count["matches"] == 1 and count["filename"].endswith(".jsonl")
    preview = staff.get(URL, {"format": "colors-csv", "batch": "all", "status": "all", "preview": "1"})
    assert preview.status_code == 200 and "3 matches selected" in preview.content.decode()


@pytest.mark.parametrize("params, field", [
    ({"format": "xml", "batch": "all", "status": "finished"}, "format"),
    ({"format": "jsonl", "batch": "no-such-batch", "status": "finished"}, "batch"),
    ({"format": "jsonl", "batch": "all", "status": "active"}, "status"),
    ({"format": "jsonl", "batch": "all", "status": "finished", "since": "yesterday"}, "since"),
    ({"format": "jsonl", "batch": "all", "status": "finished", "since": "2026-11-02", "until": "2026-11-01"}, "until"),
])
def test_bad_input_gives_the_form_with_errors(staff, params, field):
    response = staff.get(URL, params)
    assert response.status_code == 400 and not response.streaming
    assert f'id="errors-{field}"' in response.content.decode()
    assert staff.get(URL, {**params, "count": "1"}).json()["errors"][field]


def run_command(*args) -> str:
    out = io.StringIO()
    call_command("export", *args, stdout=out)
    return out.getvalue()


def test_command_status(matches):
    def ids(*args):
        return {json.loads(line)["match_id"] for line in run_command(*args).splitlines()}

    assert ids("--format", "jsonl") == ids("--format", "jsonl", "--status", "finished")
    assert str(matches["colors_active"].id) not in ids("--format", "jsonl")
    assert ids("--format", "jsonl", "--status", "aborted") == {str(matches["colors_aborted"].id)}
    assert len(ids("--format", "jsonl", "--status", "all")) == len(matches)
    assert ids("--format", "guesswhich") == {str(matches["guesswhich"].id)}
    assert ids("--format", "guesswhich", "--status", "all") == {str(matches["guesswhich"].id),
                                                                 str(matches["gw_active"].id)}
    with pytest.raises(Exception):
        run_command("--format", "jsonl", "--status", "active")


async def test_asgi_streams_asynchronously(async_client, matches):
    """Under ASGI the response is an async iterator (a sync one would be read whole before sending)."""
    from asgiref.sync import sync_to_async

    user = await sync_to_async(staff_user)("astaff", None)
    await async_client.aforce_login(user)
    response = await async_client.get(URL, {"format": "guesswhich", "batch": "all", "status": "all"})
    assert response.status_code == 200 and response.is_async
    text = b"".join([chunk async for chunk in response.streaming_content]).decode()
    assert {json.loads(line)["match_id"] for line in text.splitlines()} == {
        str(matches["guesswhich"].id), str(matches["gw_active"].id)}


def test_stream_is_chunked_and_a_closed_download_stops_the_writer(matches):
    from research.exports import ExportStream

    chunks = list(ExportStream("jsonl", status="all", chunk_bytes=100))
    assert len(chunks) > 3 and all(chunks)
    assert len(b"".join(chunks).decode().splitlines()) == len(matches)
    stream = ExportStream("jsonl", status="all", chunk_bytes=100, depth=1)
    it = iter(stream)
    assert next(it)
    it.close()                                 # the client went away
    stream.thread.join(5)
    assert not stream.thread.is_alive() and stream.count is None


def test_a_format_of_another_game_warns_of_an_empty_file(staff):
    from tests.support.factories import batch as make_batch

    b = make_batch(slug="exp-colors", game_id="colors_v1")
    m = colors_played()
    Match.objects.filter(pk=m.pk).update(batch=b)
    base = {"batch": b.slug, "status": "finished", "pseudonymise": "on"}
    wrong = staff.get(URL, {**base, "format": "codraw", "count": "1"}).json()
    assert wrong["matches"] == 0
    assert "codraw matches" not in wrong["warning"] and "exports codraw_v1 matches" in wrong["warning"]
    assert "batch exp-colors plays colors_v1" in wrong["warning"] and "colors-csv" in wrong["warning"]
    assert staff.get(URL, {**base, "format": "colors-csv", "count": "1"}).json() == {
        "matches": 1, "filename": "groundtalk-colors-csv-exp-colors-finished.csv", "warning": ""}
    page = staff.get(URL, {**base, "format": "codraw", "preview": "1"}).content.decode()
    assert 'id="export-warning" role="alert">The file would be empty' in page
    assert "no match fits these filters" in staff.get(URL, {**base, "format": "colors-csv", "status": "aborted",
                                                             "count": "1"}).json()["warning"]


def test_codraw_split_choice_and_its_key_file(staff):
    """The page offers the command's CoDraw split: the file's keys carry it (the authors' code
    selects train_/val_/test_ keys) and the codraw-keys download maps each key to its match."""
    played = [codraw_played() for _ in range(3)]
    ids = {str(m.id) for m in played}
    response = staff.get(URL, {"format": "codraw", "batch": "all", "status": "finished", "codraw_split": "val"})
    assert response["Content-Disposition"] == 'attachment; filename="groundtalk-codraw-all-finished-splitval.json"'
    document = json.loads(body(response))
    assert sorted(document["data"]) == ["val_00000", "val_00001", "val_00002"]
    rows = list(csv.DictReader(io.StringIO(download(staff, "codraw-keys", codraw_split="val"))))
    assert [r["key"] for r in rows] == sorted(document["data"]) and {r["match_id"] for r in rows} == ids
    assert {r["split"] for r in rows} == {"val"}
    # the default: a hash of the match id, 80/10/10, the same in the file and the key file
    from games.codraw.exports import hash_split
    hashed = json.loads(download(staff, "codraw"))
    rows = list(csv.DictReader(io.StringIO(download(staff, "codraw-keys"))))
    assert sorted(r["key"] for r in rows) == sorted(hashed["data"])
    assert all(r["key"].startswith(hash_split(r["match_id"]) + "_") for r in rows)
    count = staff.get(URL, {"format": "codraw-keys", "batch": "all", "status": "finished", "count": "1",
                            "codraw_ratios": "1,0,0"}).json()
    assert count["matches"] == 3 and count["filename"].endswith("-splithash-1-0-0.csv")
    # bad ratios: the form again with the error, no traceback
    page = staff.get(URL, {"format": "codraw", "batch": "all", "status": "finished", "codraw_ratios": "80,20"})
    assert page.status_code == 400 and "three numbers" in page.content.decode()
