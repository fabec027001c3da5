"""(c) /m/<match>/img/<id>.png: only a seat of the match, only images that seat's view shows, only
the sizes of its role; rendered once and cached on disk; the same URL scheme and headers for every
pool image (nothing singles out the secret); a researcher's real image files served as they are."""
from __future__ import annotations

import io

import pytest
from django.test import Client
from PIL import Image

from live import scene_images
from clevr.scenes import load_image_folder
from live.models import Match, Seat
from live.services import SeatSpec, match_create

pytestmark = pytest.mark.django_db(transaction=True)

HUMAN = SeatSpec("human")


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    return tmp_path / "media"


def gw_match(seed=5, **kw):
    match = match_create(game_id="guesswhich_v1", seed=seed, config={"rounds": 2},
                         seats={"questioner": HUMAN, "answerer": HUMAN}, **kw)
    return match, {s.role: s for s in Seat.objects.filter(match=match)}


def url(match, image_id, token, size="thumb"):
    return f"/m/{match.id}/img/{image_id}.png?seat={token}&size={size}"


def test_questioner_gets_every_pool_image_the_same_way(media):
    match, seats = gw_match()
    c = Client()
    tok = seats["questioner"].token
    secret = match.state["secret_id"]
    other = next(i for i in match.state["pool_ids"] if i != secret)
    got = {}
    for image_id in (secret, other):
        r = c.get(url(match, image_id, tok))
        assert r.status_code == 200 and r["Content-Type"] == "image/png"
        assert Image.open(io.BytesIO(r.content)).size == (240, 160)
        got[image_id] = r
    a, b = got[secret], got[other]
    # same headers (names and, except the ETag and length, values) for the secret and a distractor
    assert sorted(k.lower() for k in a.headers) == sorted(k.lower() for k in b.headers)
    for key in ("Cache-Control", "Content-Type", "X-Content-Type-Options", "Referrer-Policy"):
        assert a[key] == b[key]
    assert "private" in a["Cache-Control"] and "max-age" in a["Cache-Control"]
    assert a["ETag"] != b["ETag"]
    # full size for the hover preview
    r = c.get(url(match, other, tok, "full"))
    assert r.status_code == 200 and Image.open(io.BytesIO(r.content)).size == (480, 320)
    # cached on disk, keyed by the scene and size; a revalidation is answered 304
    files = sorted(p.name for p in (media / "clevr").rglob("*.png"))
    assert len(files) == 3 and not list((media / "clevr").rglob(".tmp-*"))
    assert c.get(url(match, other, tok), HTTP_IF_NONE_MATCH=got[other]["ETag"]).status_code == 304
    scene = next(p["scene"] for p in match.state["pool"] if p["id"] == other)
    key = scene_images.scene_key(scene, "thumb")
    assert (media / "clevr" / key[:2] / f"{key}.png").read_bytes() == got[other].content
    # a second request is served from the file, byte for byte
    assert c.get(url(match, other, tok)).content == got[other].content


def test_foreign_seat_token_is_refused():
    match, seats = gw_match(seed=5)
    other_match, other_seats = gw_match(seed=6)
    c = Client()
    image_id = match.state["pool_ids"][0]
    for token in (other_seats["questioner"].token, "", "not-a-token", "x" * 80):
        r = c.get(url(match, image_id, token))
        assert r.status_code == 404
        assert b"No such seat in this match." in r.content
    assert c.get(f"/m/{match.id}/img/{image_id}.png?size=thumb").status_code == 404   # no token at all


def test_foreign_image_ids_and_sizes_are_refused():
    match, seats = gw_match()
    c = Client()
    q, a = seats["questioner"].token, seats["answerer"].token
    secret = match.state["secret_id"]
    other = next(i for i in match.state["pool_ids"] if i != secret)
    # an id that is not in the pool, and a path-like id: the same 404 as any unknown image
    for image_id in ("img99", "img01.png", secret + "x", "%3Cb%3E"):
        r = c.get(url(match, image_id, q))
        assert r.status_code == 404 and b"No such image for this seat." in r.content
    # the answerer sees only its own image (the secret), and only large
    r = c.get(url(match, other, a, "large"))
    assert r.status_code == 404 and b"No such image for this seat." in r.content
    r = c.get(url(match, secret, a, "large"))
    assert r.status_code == 200 and Image.open(io.BytesIO(r.content)).size == (720, 480)
    for size in ("thumb", "full"):    # sizes a questioner may fetch: an answerer never warms them
        assert c.get(url(match, secret, a, size)).status_code == 404
    # the questioner may not fetch the answerer's size, nor an unknown size
    assert c.get(url(match, other, q, "large")).status_code == 404
    r = c.get(url(match, other, q, "huge"))
    assert r.status_code == 404 and b"Unknown size" in r.content
    # a pool id of another match is not this match's
    other_match, _ = gw_match(seed=6)
    assert c.get(f"/m/{other_match.id}/img/{other}.png?seat={q}&size=thumb").status_code == 404
    assert c.post(url(match, other, q)).status_code == 405


def test_visual_dialog_image_is_the_answerers_only():
    match = match_create(game_id="visdial_v1", seed=3, config={"rounds": 2}, seats={"questioner": HUMAN, "answerer": HUMAN})
    seats = {s.role: s for s in Seat.objects.filter(match=match)}
    image_id = match.state["image_id"]
    c = Client()
    assert c.get(url(match, image_id, seats["questioner"].token, "large")).status_code == 404
    assert c.get(url(match, image_id, seats["questioner"].token, "thumb")).status_code == 404
    r = c.get(url(match, image_id, seats["answerer"].token, "large"))
    assert r.status_code == 200 and r["Content-Type"] == "image/png"


def test_real_image_items_are_served_as_files(tmp_path):
    folder = tmp_path / "pool"
    folder.mkdir()
    colors = ["red", "green", "blue", "yellow"]
    for k, color in enumerate(colors):
        Image.new("RGB", (64, 48), color).save(folder / f"photo{k}.jpg" if k % 2 else folder / f"photo{k}.png")
    items = load_image_folder(folder)
    content = {"format": "guesswhich/v1", "pool": [{"id": f"img{k + 1:02d}", "scene": item} for k, item in enumerate(items)],
               "secret_id": "img03", "caption": "a plain blue picture", "coarse_rank": {}}
    match, seats = gw_match(content=content)
    c = Client()
    for k, item in enumerate(items):
        r = c.get(url(match, f"img{k + 1:02d}", seats["questioner"].token))
        assert r.status_code == 200
        assert r.content == (folder / item["image_filename"]).read_bytes()
        assert r["Content-Type"] == ("image/jpeg" if item["image_filename"].endswith(".jpg") else "image/png")
        assert r["Cache-Control"] == scene_images.CACHE_CONTROL
    r = c.get(url(match, "img03", seats["answerer"].token, "large"))
    assert r.status_code == 200 and r.content == (folder / items[2]["image_filename"]).read_bytes()
    (folder / items[0]["image_filename"]).unlink()
    r = c.get(url(match, "img01", seats["questioner"].token))
    assert r.status_code == 404 and b"image file of this item is missing" in r.content


def test_the_game_page_renders_the_pool_into_the_cache_before_it_is_asked_for(media):
    """Issue 10: serving the questioner's page starts rendering its thumbnails, then its hover
    previews, into the disk cache (one background thread), so the page's requests find them."""
    match = match_create(game_id="guesswhich_v1", seed=9, config={"rounds": 2, "pool_size": 4},
                         seats={"questioner": HUMAN, "answerer": HUMAN})
    seat = Seat.objects.get(match=match, role="questioner")
    view_pool = match.state["pool_ids"]
    assert len(view_pool) == 4
    r = Client().get(f"/m/{match.id}/?seat={seat.token}")
    assert r.status_code == 200
    scene_images._warm_executor.submit(lambda: None).result(timeout=120)   # the warm-ups queued before it are done
    from games.registry import get_game

    view = get_game("guesswhich_v1").rules.view_for(Match.objects.get(pk=match.pk).state, "questioner")
    for item in view["pool"]:
        for size in ("thumb", "full"):
            key = scene_images.scene_key(item["scene"], size)
            assert (media / "clevr" / key[:2] / f"{key}.png").is_file(), (item["id"], size)
    # the answerer's large image is not warmed by the questioner's page (sizes do not overlap)
    secret = next(i for i in view["pool"] if i["id"] == match.state["secret_id"])
    key = scene_images.scene_key(secret["scene"], "large")
    assert not (media / "clevr" / key[:2] / f"{key}.png").exists()
