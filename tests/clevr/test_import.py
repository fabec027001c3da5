"""Importing CLEVR's scenes file (the official ``{"info", "scenes"}`` shape) as GuessWhich and
visual-dialog content: pools and captions from the imported scenes, the real renders when they lie
beside the file as CLEVR ships them, the import command, and a round trip through a played match
and the VisDial export."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from PIL import Image

from clevr.alice import Alice
from clevr.captions import caption_holds
from clevr.dataset import find_images_folder, load_dataset
from clevr.scenes import SceneFormatError, generate_scene
from games.guesswhich import content as gw_content
from games.guesswhich import rules as gw_rules
from live.models import Batch, Content, Seat
from live.services import SeatSpec, match_create
from games.visdial import content as vd_content
from games.visdial import exports as vd_exports
from games.visdial import rules as vd_rules

# One scene written out by hand in the released shape (CLEVR_v1.0 scenes: key order and value types
# as the release has them: image_index, objects, relationships, image_filename, split, directions).
HAND_SCENE = {
    "image_index": 0,
    "objects": [
        {"color": "brown", "size": "large", "rotation": 178.92, "shape": "cylinder",
         "3d_coords": [-1.4937, -1.9495, 0.7], "material": "rubber", "pixel_coords": [119, 131, 10.0]},
        {"color": "gray", "size": "large", "rotation": 243.41, "shape": "cube",
         "3d_coords": [1.5555, -2.8217, 0.7], "material": "rubber", "pixel_coords": [198, 190, 8.4]},
        {"color": "green", "size": "small", "rotation": 230.39, "shape": "cylinder",
         "3d_coords": [-2.3426, 0.0479, 0.35], "material": "rubber", "pixel_coords": [161, 118, 12.6]},
    ],
    "relationships": {
        "right": [[1], [], [0, 1]],
        "behind": [[2], [0, 2], []],
        "front": [[1], [], [0]],
        "left": [[2], [0, 2], []],
    },
    "image_filename": "CLEVR_val_000000.png",
    "split": "val",
    "directions": {
        "right": [0.6563112735748291, 0.7544902563095093, -0.0],
        "behind": [-0.754490315914154, 0.6563112735748291, 0.0],
        "above": [0.0, 0.0, 1.0],
        "below": [-0.0, -0.0, -1.0],
        "left": [-0.6563112735748291, -0.7544902563095093, 0.0],
        "front": [0.754490315914154, -0.6563112735748291, -0.0],
    },
}
INFO = {"split": "val", "license": "Creative Commons Attribution (CC BY 4.0)", "version": "1.0",
        "date": "2/14/2017"}


def released_scene(k: int) -> dict:
    """Scene ``k`` of the fixture in the released shape (the hand scene, then generated scenes
    re-keyed as CLEVR writes them)."""
    if k == 0:
        return json.loads(json.dumps(HAND_SCENE))
    g = generate_scene(500 + k)
    objects = [{"color": o["color"], "size": o["size"], "rotation": o["rotation"], "shape": o["shape"],
                "3d_coords": o["3d_coords"], "material": o["material"], "pixel_coords": o["pixel_coords"]}
               for o in g["objects"]]
    return {"image_index": k, "objects": objects, "relationships": g["relationships"],
            "image_filename": f"CLEVR_val_{k:06d}.png", "split": "val", "directions": g["directions"]}


def write_clevr(root, n: int, *, images: bool) -> "Path":  # noqa: F821
    """``root/CLEVR_v1.0/scenes/CLEVR_val_scenes.json`` (and ``images/val/*.png`` when asked), as
    CLEVR v1.0 is laid out."""
    base = root / "CLEVR_v1.0"
    (base / "scenes").mkdir(parents=True)
    scenes = [released_scene(k) for k in range(n)]
    path = base / "scenes" / "CLEVR_val_scenes.json"
    path.write_text(json.dumps({"info": INFO, "scenes": scenes}))
    if images:
        folder = base / "images" / "val"
        folder.mkdir(parents=True)
        for k, s in enumerate(scenes):
            Image.new("RGB", (480, 320), (40 + 8 * k, 90, 140)).save(folder / s["image_filename"])
    return path


def test_the_hand_written_released_scene_imports_unchanged(tmp_path):
    path = write_clevr(tmp_path, 1, images=False)
    scenes, folder = load_dataset(path)
    assert folder is None
    (s,) = scenes
    assert s["objects"][1]["color"] == "gray" and s["objects"][1]["3d_coords"] == [1.5555, -2.8217, 0.7]
    assert s["relationships"] == HAND_SCENE["relationships"] and s["split"] == "val"
    assert s["provenance"]["info"] == INFO and s["provenance"]["file"] == "CLEVR_val_scenes.json"


def test_visdial_items_from_a_scenes_file_without_renders(tmp_path):
    path = write_clevr(tmp_path, 6, images=False)
    items = vd_content.import_file(path)
    assert [i["image_id"] for i in items] == list(range(6))
    assert [i["image_filename"] for i in items] == [f"CLEVR_val_{k:06d}.png" for k in range(6)]
    for k, item in enumerate(items):
        assert "image_path" not in item
        assert caption_holds(item["caption"], item["scene"]) is True
        assert item["scene"]["objects"] == [{key: o[key] for key in vd_content.OBJECT_KEYS}
                                            for o in released_scene(k)["objects"]]
        assert item["provenance"]["source"] == "clevr" and item["provenance"]["key"] == item["image_filename"]
    # the same file gives the same content
    assert vd_content.import_file(path) == items
    assert [i["image_id"] for i in vd_content.import_file(path, start=2, limit=3)] == [2, 3, 4]


def test_renders_beside_the_file_are_found_and_required_for_every_scene(tmp_path):
    path = write_clevr(tmp_path, 5, images=True)
    folder = tmp_path / "CLEVR_v1.0" / "images" / "val"
    assert find_images_folder(path, load_dataset(path)[0]) == folder
    items = vd_content.import_file(path)
    assert [i["image_path"] for i in items] == [str(folder / f"CLEVR_val_{k:06d}.png") for k in range(5)]
    # --images elsewhere
    other = tmp_path / "renders"
    other.mkdir()
    for k in range(5):
        (other / f"CLEVR_val_{k:06d}.png").write_bytes((folder / f"CLEVR_val_{k:06d}.png").read_bytes())
    assert vd_content.import_file(path, images=other)[4]["image_path"] == str(other / "CLEVR_val_000004.png")
    # a missing render is an error naming it, not a silent mix of renders and drawings
    (folder / "CLEVR_val_000003.png").unlink()
    with pytest.raises(SceneFormatError, match="CLEVR_val_000003.png"):
        vd_content.import_file(path)
    (folder / "CLEVR_val_000003.png").write_text("not a png")
    with pytest.raises(SceneFormatError, match="not a readable image"):
        vd_content.import_file(path)
    with pytest.raises(SceneFormatError, match="not a folder"):
        vd_content.import_file(path, images=tmp_path / "nowhere")


def test_guesswhich_pools_are_built_from_the_imported_scenes(tmp_path):
    path = write_clevr(tmp_path, 24, images=True)
    items = gw_content.import_file(path, limit=3, pool_size=8, difficulty="hard")
    assert len(items) == 3
    names = {f"CLEVR_val_{k:06d}.png" for k in range(24)}
    for k, item in enumerate(items):
        pool_ids = [p["id"] for p in item["pool"]]
        assert len(pool_ids) == 8 and item["secret_id"] in pool_ids
        secret_src = item["sources"][item["secret_id"]]
        assert secret_src["image_filename"] == f"CLEVR_val_{k:06d}.png"
        assert {s["image_filename"] for s in item["sources"].values()} <= names
        assert all(s["image_path"].endswith(s["image_filename"]) for s in item["sources"].values())
        secret_scene = next(p["scene"] for p in item["pool"] if p["id"] == item["secret_id"])
        assert caption_holds(item["caption"], secret_scene) is True
        assert item["coarse_rank"][item["secret_id"]] == 1
        # the players' scenes say nothing of where they came from
        text = json.dumps(item["pool"])
        assert "CLEVR_val" not in text and "image_path" not in text and "provenance" not in text
        assert item["provenance"]["difficulty"] == "hard" and item["provenance"]["pool_size"] == 8
        state = gw_rules.initial_state(item, 1, {"rounds": 3})
        assert gw_rules.view_for(state, "questioner")["caption"] == item["caption"]
    assert gw_content.import_file(path, limit=3, pool_size=8, difficulty="hard") == items
    with pytest.raises(ValueError, match="needs 30 scenes"):
        gw_content.import_file(path, pool_size=30)


@pytest.mark.django_db
def test_import_content_command(tmp_path):
    path = write_clevr(tmp_path, 12, images=False)
    batch = Batch.objects.create(slug="gw-clevr", title="gw", game_id="guesswhich_v1")
    out = io.StringIO()
    call_command("import_content", "guesswhich", str(path), "--limit", "4", "--pool-size", "6",
                 "--batch", "gw-clevr", stdout=out)
    assert "imported 4 guesswhich_v1 items (4 new)" in out.getvalue()
    rows = Content.objects.filter(game_id="guesswhich_v1")
    assert rows.count() == 4
    batch.refresh_from_db()
    assert sorted(batch.content_pool) == sorted(r.pk for r in rows)
    call_command("import_content", "guesswhich", str(path), "--limit", "4", "--pool-size", "6", stdout=out)
    assert Content.objects.filter(game_id="guesswhich_v1").count() == 4        # same items, updated
    call_command("import_content", "visdial", str(path), "--start", "10", stdout=out)
    assert sorted(r.data["image_id"] for r in Content.objects.filter(game_id="visdial_v1")) == [10, 11]
    with pytest.raises(CommandError, match="needs 20 scenes"):
        call_command("import_content", "guesswhich", str(path))
    with pytest.raises(CommandError, match="does not take --pool-size"):
        call_command("import_content", "visdial", str(path), "--pool-size", "5")
    bad = tmp_path / "bad.json"
    bad.write_text('{"info": {}, "scenes": [{"objects": [{"shape": "pyramid"}]}]}')
    with pytest.raises(CommandError, match="shape must be one of"):
        call_command("import_content", "visdial", str(bad))
    with pytest.raises(CommandError, match="Batch gw-clevr plays guesswhich_v1"):
        call_command("import_content", "visdial", str(path), "--batch", "gw-clevr")
    assert Content.objects.filter(game_id="visdial_v1").count() == 2            # nothing half-done


def _play(match, alice, questions):
    from live.services import match_apply_action

    for k, q in enumerate(questions):
        match.refresh_from_db()
        match_apply_action(match_id=match.id, role="questioner", action={"type": "ask", "text": q},
                           client_action_id=f"q{k}", expected_seq=match.seq)
        match.refresh_from_db()
        action = alice.act(vd_rules.view_for(match.state, "answerer"))
        match_apply_action(match_id=match.id, role="answerer", action=action, client_action_id=f"a{k}",
                           expected_seq=match.seq)
    match.refresh_from_db()
    return match


@pytest.mark.django_db(transaction=True)
def test_round_trip_import_play_export_with_the_real_render(tmp_path, settings):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    from research.records import match_record

    path = write_clevr(tmp_path, 3, images=True)
    item = vd_content.import_file(path, start=0, limit=1)[0]
    human = SeatSpec(Seat.Kind.HUMAN)
    matches = [match_create(game_id="visdial_v1", seed=0, config={"rounds": 10}, content=item,
                            seats={"questioner": human, "answerer": human}) for _ in range(2)]
    questions = ["how many cylinders are there?", "what color is the cube?", "is there a green thing?",
                 "what size is the green cylinder?", "what is the cube made of?", "how many large things?",
                 "is the brown cylinder left of the cube?", "what shape is the leftmost thing?",
                 "are there any metal things?", "how many things are there?"]
    played = [_play(m, Alice(), questions) for m in matches]
    assert all(m.status == "finished" for m in played)
    # the answerer is served the real render
    seat = Seat.objects.get(match=played[0], role="answerer")
    r = Client().get(f"/m/{played[0].id}/img/{played[0].state['image_id']}.png?seat={seat.token}&size=large")
    assert r.status_code == 200
    assert r.content == (tmp_path / "CLEVR_v1.0" / "images" / "val" / "CLEVR_val_000000.png").read_bytes()
    records = [match_record(m) for m in played]
    data = vd_exports.to_visdial(records)
    side = vd_exports.image_id_map(records)
    assert len({d["image_id"] for d in data["data"]["dialogs"]}) == 2
    for row in side["images"]:
        assert row["scene_image_id"] == 0 and row["image_filename"] == "CLEVR_val_000000.png"
        assert row["image_path"].endswith("CLEVR_val_000000.png")
    answers = [data["data"]["answers"][t["answer"]] for t in data["data"]["dialogs"][0]["dialog"]]
    assert answers[:4] == ["2", "gray", "yes", "small"]


@pytest.mark.django_db(transaction=True)
def test_guesswhich_pool_of_real_renders_is_served_as_files(tmp_path, settings):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    path = write_clevr(tmp_path, 8, images=True)
    item = gw_content.import_file(path, limit=1, pool_size=6)[0]
    human = SeatSpec(Seat.Kind.HUMAN)
    match = match_create(game_id="guesswhich_v1", seed=0, config={"rounds": 2}, content=item,
                         seats={"questioner": human, "answerer": human})
    seat = Seat.objects.get(match=match, role="questioner")
    c = Client()
    for pool_item in item["pool"]:
        src = item["sources"][pool_item["id"]]
        r = c.get(f"/m/{match.id}/img/{pool_item['id']}.png?seat={seat.token}&size=thumb")
        assert r.status_code == 200 and r.content == open(src["image_path"], "rb").read()
    # the questioner's view names no file
    view = gw_rules.view_for(match.state, "questioner")
    assert "CLEVR_val" not in json.dumps(view) and "image_path" not in json.dumps(view)
