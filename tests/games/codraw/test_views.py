"""CoDraw's server side of the UI: the scene renderer, the art configuration and the original-PNG
folder (GT_CODRAW_ART_DIR) with its path checks, and the staff-only round snapshots."""
from __future__ import annotations

import struct
import xml.dom.minidom
import zlib

import pytest
from django.test import override_settings

from games.codraw import clipart as ca
from games.codraw.render import scene_svg, scenes_row_svg
from games.codraw.scenes import Piece, Scene, format_scene
from live.services import SeatSpec, match_apply_action, match_create
from tests.support.staff_users import staff_user


def png_bytes(width: int, height: int, rgba=(200, 40, 40, 255)) -> bytes:
    """A solid-colour PNG, built by hand (no imaging library needed)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    row = b"\x00" + bytes(rgba) * width
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(row * height)) + chunk(b"IEND", b""))


# ----------------------------------------------------------------------------------- render.py
def test_scene_svg_draws_pieces_in_codraw_order_with_scale_and_flip():
    pieces = [Piece(idx=ca.JENNY, x=300, y=250, depth=1, flip=1, subtype=13),
              Piece(idx=16, x=100, y=200, depth=2),          # oak tree, small
              Piece(idx=2, x=200, y=60),                     # cloud
              Piece(idx=ca.SUN, x=420, y=50, depth=0),       # the sun goes to the back
              Piece(idx=47)]                                 # not on the canvas (-10000)
    svg = scene_svg(Scene(tuple(pieces)))
    doc = xml.dom.minidom.parseString(svg)
    root = doc.documentElement
    assert (root.getAttribute("width"), root.getAttribute("height"), root.getAttribute("viewBox")) == \
        ("500", "400", "0 0 500 400")
    groups = [g for g in doc.getElementsByTagName("g") if g.getAttribute("data-idx")]
    assert [int(g.getAttribute("data-idx")) for g in groups] == [ca.SUN, 2, 16, ca.JENNY]
    jenny = groups[-1]
    assert jenny.getAttribute("data-subtype") == "13" and jenny.getAttribute("data-flip") == "1"
    w, h, _ = ca.geometry(ca.JENNY, 13)
    left, top = 300 - w * 0.7 / 2, 250 - h * 0.7 / 2
    assert jenny.getAttribute("transform") == f"translate({left + w * 0.7:g} {top:g}) scale(-0.7 0.7)"
    tree = groups[2]
    assert tree.getAttribute("transform").endswith("scale(0.49)")
    assert "park background" not in svg                      # the art's own titles are dropped
    assert "<title>Jenny (kicking, sad)</title>" in svg


def test_scene_svg_accepts_strings_and_dicts_and_scales():
    text = format_scene(Scene((Piece(idx=20, x=250, y=300), Piece(idx=44))))
    svg = scene_svg(text, scale=0.5, background=False)
    assert 'width="250" height="200"' in svg and 'data-idx="20"' in svg and 'data-idx="44"' not in svg
    assert scene_svg([{"idx": 20, "x": 250, "y": 300}]).count("data-idx=") == 1
    row = scenes_row_svg([("target", text), ("empty <canvas>", [])])
    xml.dom.minidom.parseString(row)
    assert "empty &lt;canvas&gt;" in row


# ------------------------------------------------------------------------- art config and PNGs
def test_art_config_is_svg_by_default_and_png_with_a_folder(client, tmp_path):
    body = client.get("/codraw/art-config.js").content.decode()
    assert body.startswith("window.GT_CODRAW_ART = ") and '"mode":"svg"' in body
    assert '"background":"/static/codraw/art/background.svg"' in body
    with override_settings(GT_CODRAW_ART_DIR=str(tmp_path)):
        body = client.get("/codraw/art-config.js").content.decode()
    assert '"mode":"png"' in body and '"background":"/codraw/art/background.png"' in body
    assert '"hb1_13s.png"' in body
    with override_settings(GT_CODRAW_ART_DIR=str(tmp_path / "missing")):
        assert '"mode":"svg"' in client.get("/codraw/art-config.js").content.decode()


def test_png_folder_serves_only_library_files(client, tmp_path):
    art = tmp_path / "Pngs"
    art.mkdir()
    (art / "hb1_13s.png").write_bytes(png_bytes(4, 6))
    (art / "background.png").write_bytes(png_bytes(5, 4))
    (art / "secret.png").write_bytes(b"not for you")
    (tmp_path / "outside.png").write_bytes(b"not for you")
    assert client.get("/codraw/art/hb1_13s.png").status_code == 404          # setting empty
    with override_settings(GT_CODRAW_ART_DIR=str(art)):
        ok = client.get("/codraw/art/hb1_13s.png")
        assert ok.status_code == 200 and ok["Content-Type"] == "image/png"
        assert b"".join(ok.streaming_content) == png_bytes(4, 6)
        assert client.get("/codraw/art/background.png").status_code == 200
        for bad in ("secret.png", "s_99s.png", "hb1_13s.PNG", "..%2Foutside.png", "../outside.png",
                    "%2e%2e/outside.png", "t_0s.png"):   # t_0s.png: allowed but missing
            assert client.get(f"/codraw/art/{bad}").status_code == 404, bad
        assert client.get("/codraw/art/hb1_13s.png%00").status_code == 400   # NUL: refused before any view


# ---------------------------------------------------------------------- staff round snapshots
@pytest.fixture
def played_match(db):
    match = match_create(game_id="codraw_v1", seed=5, config={"time_limit_s": 1200},
                         seats={"teller": SeatSpec("human"), "drawer": SeatSpec("human")})
    steps = [("teller", {"type": "chat", "text": "a girl in the middle"}),
             ("drawer", {"type": "place", "idx": ca.JENNY, "x": 250, "y": 250, "pose": 1, "expression": 2}),
             ("drawer", {"type": "chat", "text": "ok"}),
             ("teller", {"type": "chat", "text": "make her small"}),
             ("drawer", {"type": "update", "idx": ca.JENNY, "depth": 2}),
             ("drawer", {"type": "chat", "text": "done"})]
    for i, (role, action) in enumerate(steps):
        match_apply_action(match_id=match.id, role=role, action=action, client_action_id=f"a{i}")
    return match


@pytest.fixture
def staff(client, db):
    user = staff_user("staff", "x")
    client.force_login(user)
    return client


def test_round_snapshots_are_staff_only(client, played_match):
    for url in (f"/research/matches/{played_match.id}/codraw/round/0.svg",
                f"/research/matches/{played_match.id}/codraw/target.svg"):
        response = client.get(url)
        assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_round_snapshots_show_the_drawers_canvas_after_each_round(staff, played_match):
    base = f"/research/matches/{played_match.id}/codraw"
    first = staff.get(f"{base}/round/0.svg")
    assert first.status_code == 200 and first["Content-Type"].startswith("image/svg+xml")
    svg = first.content.decode()
    xml.dom.minidom.parseString(svg)
    assert 'data-idx="19" data-subtype="7" data-depth="0"' in svg            # pose 1, smile
    second = staff.get(f"{base}/round/1.svg").content.decode()
    assert 'data-idx="19" data-subtype="7" data-depth="2"' in second
    before = staff.get(f"{base}/round/1.svg?before=1").content.decode()
    assert 'data-depth="0"' in before and 'data-depth="2"' not in before
    assert staff.get(f"{base}/round/2.svg").status_code == 404
    assert staff.get(f"{base}/final.svg").status_code == 404                 # not ended yet
    target = staff.get(f"{base}/target.svg?scale=0.5").content.decode()
    assert 'width="250" height="200"' in target
    page = staff.get(f"/research/matches/{played_match.id}/").content.decode()
    assert f"{base}/round/0.svg" in page and f"{base}/round/1.svg" in page and f"{base}/target.svg" in page
    match_apply_action(match_id=played_match.id, role="teller", action={"type": "end"}, client_action_id="end")
    final = staff.get(f"{base}/final.svg")
    assert final.status_code == 200 and 'data-depth="2"' in final.content.decode()
    assert f"{base}/final.svg" in staff.get(f"/research/matches/{played_match.id}/").content.decode()


def test_snapshots_of_other_games_are_404(staff, db):
    match = match_create(game_id="colors_v1", seed=1, config={"rounds": 1},
                         seats={"speaker": SeatSpec("human"), "listener": SeatSpec("human")})
    assert staff.get(f"/research/matches/{match.id}/codraw/target.svg").status_code == 404
