"""Visual-dialog content: one CLEVR scene (:func:`games.clevr.scenes.generate_scene`) and a
CLEVR-Dialog caption of it (:func:`games.clevr.captions.generate_caption`).

Content shape::

    {"format": "visdial/v1", "image_id": int, "image_filename": str, "scene": {...},
     "caption": str, "caption_kind": str, "provenance": {...}}
"""
from __future__ import annotations

from games.clevr.captions import generate_caption
from games.clevr.scenes import generate_scene

OBJECT_KEYS = ("shape", "color", "size", "material", "3d_coords", "pixel_coords", "rotation")


def generate(seed: int, config: dict | None = None) -> dict:
    scene = generate_scene(seed)
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
