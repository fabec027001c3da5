"""Visual-dialog content: one CLEVR scene (:func:`clevr.scenes.generate_scene`) and a
CLEVR-Dialog caption of it (:func:`clevr.captions.generate_caption`).

Content shape::

    {"format": "visdial/v1", "image_id": int, "image_filename": str, "scene": {...},
     "caption": str, "caption_kind": str, "provenance": {...}, "image_path": str (real renders only)}

Imported CLEVR scenes (``manage.py import_content visdial CLEVR_val_scenes.json``,
:func:`import_file`): one item per scene (``image_id`` = CLEVR's ``image_index``), captioned from
its scene graph; with the real renders beside the file (:mod:`clevr.dataset`) the item
carries ``image_path`` and the answerer sees the real image.
"""
from __future__ import annotations

from clevr.captions import generate_caption
from clevr.dataset import item_seed, load_dataset
from clevr.scenes import generate_scene

OBJECT_KEYS = ("shape", "color", "size", "material", "3d_coords", "pixel_coords", "rotation")


def generate(seed: int, config: dict | None = None) -> dict:
    scene = generate_scene(seed)
    return _content(scene, seed)


def _content(scene: dict, seed: int) -> dict:
    caption = generate_caption(scene, seed)
    return {
        "format": "visdial/v1",
        "image_id": scene["image_index"],
        "image_filename": scene["image_filename"],
        "scene": {"image_index": scene["image_index"], "image_filename": scene["image_filename"],
                  "objects": [{k: o[k] for k in OBJECT_KEYS if k in o} for o in scene["objects"]],
                  "relationships": scene["relationships"], "directions": scene.get("directions")},
        "caption": caption["text"],
        "caption_kind": caption["kind"],
        "provenance": scene.get("provenance"),
    }


def import_file(path, *, images=None, start: int = 0, limit: int | None = None, seed: int = 0) -> list[dict]:
    """Visual-dialog items from a CLEVR scenes file (see the module docstring)."""
    scenes, folder = load_dataset(path, images=images, start=start, limit=limit)
    items = []
    for scene in scenes:
        item = _content(scene, item_seed(scene, seed))
        prov = scene.get("provenance") or {}
        item["provenance"] = {**prov, "key": scene.get("image_filename"), "images": str(folder) if folder else None}
        if scene.get("image_path"):
            item["image_path"] = scene["image_path"]
        items.append(item)
    return items
