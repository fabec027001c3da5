"""A CLEVR dataset on disk: its scenes file and, when the researcher has them, its real renders.

CLEVR v1.0 (Johnson et al. 2017) ships ``CLEVR_v1.0/scenes/CLEVR_<split>_scenes.json`` beside
``CLEVR_v1.0/images/<split>/CLEVR_<split>_<index>.png``; CLEVR's generator
(``image_generation/render_images.py``) writes ``<out>/CLEVR_scenes.json`` (its default
``--output_scene_file``) beside ``<out>/images/``. The scenes file is::

    {"info": {"split", "version", "date", "license"},
     "scenes": [{"split", "image_index", "image_filename", "objects": [{"shape", "color", "size",
                  "material", "3d_coords", "pixel_coords", "rotation"}, ...],
                 "relationships": {"left", "right", "front", "behind"}, "directions": {...}}, ...]}

:func:`load_dataset` reads it with :func:`clevr.scenes.load_clevr_scenes` and looks for the
images folder: ``images`` if given, else the first of these that holds the first scene's
``image_filename``: the file's own folder, ``<folder>/images/<split>``, ``<folder>/images``,
``<folder>/../images/<split>``, ``<folder>/../images``. When a folder is found every scene must
have its image there (a pool mixing real renders and our drawings would give the secret away);
each scene then carries ``image_path``, which the image endpoint serves instead of drawing the
scene. Without a folder the scenes are drawn by :mod:`clevr.render`.

Public API: ``load_dataset(path, *, images=None) -> (scenes, images_folder | None)``,
``find_images_folder(path, scenes) -> Path | None``, ``item_seed(scene, seed) -> int``.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from clevr.scenes import IMAGE_EXTENSIONS, SceneFormatError, load_clevr_scenes


def _split(scenes: list[dict]) -> str | None:
    info = (scenes[0].get("provenance") or {}).get("info") if scenes else None
    split = scenes[0].get("split") if scenes else None
    if not split and isinstance(info, dict):
        split = info.get("split")
    return split if isinstance(split, str) and split and "/" not in split and split not in (".", "..") else None


def find_images_folder(path, scenes: list[dict]) -> Path | None:
    """The folder of the real renders beside a scenes file, or None (see the module docstring)."""
    if not scenes:
        return None
    first = scenes[0].get("image_filename")
    if not isinstance(first, str) or Path(first).name != first:
        return None
    folder = Path(path).resolve().parent
    split = _split(scenes)
    candidates = [folder]
    if split:
        candidates.append(folder / "images" / split)
    candidates.append(folder / "images")
    if split:
        candidates.append(folder.parent / "images" / split)
    candidates.append(folder.parent / "images")
    for c in candidates:
        if (c / first).is_file():
            return c
    return None


def _check_image(path: Path) -> None:
    try:
        with Image.open(path) as im:
            im.verify()
    except (UnidentifiedImageError, OSError, SyntaxError) as exc:
        raise SceneFormatError(f"{path}: not a readable image ({exc})") from None


def attach_images(scenes: list[dict], folder: Path) -> None:
    """Give every scene the ``image_path`` of its render in ``folder``; a missing or unreadable
    image is an error naming the file."""
    for k, scene in enumerate(scenes):
        name = scene.get("image_filename")
        if not isinstance(name, str) or Path(name).name != name or Path(name).suffix.lower() not in IMAGE_EXTENSIONS:
            raise SceneFormatError(f"scene {k}: image_filename {name!r} is not an image file name")
        f = folder / name
        if not f.is_file():
            raise SceneFormatError(f"{folder}: has no {name} (scene {k}); give every scene's image or none")
        _check_image(f)
        scene["image_path"] = str(f)


def load_dataset(path, *, images=None, start: int = 0, limit: int | None = None) -> tuple[list[dict], Path | None]:
    """The scenes of a CLEVR scenes file (``start``/``limit`` pick a slice) and the folder of their
    real renders (None when there is none); see the module docstring."""
    scenes = load_clevr_scenes(path, start=start, limit=limit)
    if not scenes:
        raise SceneFormatError(f"{path}: holds no scenes")
    if images:
        folder = Path(images).resolve()
        if not folder.is_dir():
            raise SceneFormatError(f"{images}: not a folder")
    else:
        folder = find_images_folder(path, scenes)
    if folder is not None:
        attach_images(scenes, folder)
    return scenes, folder


def item_seed(scene: dict, seed: int = 0) -> int:
    """A seed for what is built from an imported scene (its caption, its pool): from the file's
    hash, the scene's position and ``seed``, so re-importing gives the same content."""
    prov = scene.get("provenance") or {}
    key = f"clevr-import:{prov.get('sha256')}:{prov.get('index')}:{seed}"
    return int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) & 0x7FFFFFFF
