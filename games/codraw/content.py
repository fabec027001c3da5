"""CoDraw content: a target scene plus the Drawer's palette, generated from a seed or imported.

A content item (a plain JSON dict, stored with its match)::

    {"kind": "codraw_scene", "version": 1,
     "abs_t": target scene string (see scenes.py),
     "palette": [idx, ...]           clip arts the Drawer may use, in the palette's display order,
     "image_id": int | None, "key": str | None     (the CoDraw file's ids when imported),
     "dialog": [round, ...]          (imported only: the recorded rounds, for script Tellers
                                      and replays),
     "socketId": str, "stat": {...}  (imported only: the dialog's socket id and its ``stat`` entry),
     "layout": canvas string         the Drawer's palette as the original interface laid it out
                                     (see :func:`make_layout`), every piece unplaced,
     "provenance": {"source": "generated", "generator", "seed"}
                 | {"source": "import", "file", "key"}}

The palette is what the paper's interface gave human Drawers: Mike, Jenny and 18 other clip arts
chosen at random from the library, always including every piece the target needs. The 18 follow
the original interface's per-group slots (3 sky, 4 large, 2 animals, 3 clothing, 2 food, 4 toys);
needed pieces take their group's slots first, and if they overflow a group the random picks of
other groups give way so the total stays 18 (it exceeds 18 only if the target alone needs more).
``config["full_palette"]`` gives the whole library instead (the paper's models' condition).

Config keys read by :func:`generate`: ``scenes`` (a list of imported content items or scene
strings to draw the target from; default: generate one), ``full_palette`` (bool),
``min_pieces``/``max_pieces`` (generator bounds, 6..17).

The layout. The original interface (``Abs.js``) writes every canvas string over 28 palette slots:
3 sky, 4 large objects, 5 Mike and 5 Jenny (each a fixed pose and expression), 2 animals, 3
clothing, 2 food, 4 toys, in group order, shuffled within a group with the sun moved to the first
slot, each slot with a random flip even while unplaced. :func:`make_layout` lays out a palette the
same way (a target's Mike and Jenny get a slot with their own look); an imported item's layout is
its recorded Drawer's first canvas string, kept exactly. The rules write every canvas string over
the layout (rules.canvas_scene).
"""
from __future__ import annotations

import random
from pathlib import Path

from games.codraw import clipart as ca
from games.codraw.scenes import (GENERATOR_ID, MAX_PIECES, MIN_PIECES, Piece, Scene, SceneFormatError,
                                 format_scene, generate_scene, parse_scene, read_codraw_document)

CONTENT_KIND = "codraw_scene"
CONTENT_VERSION = 2              # 2: items carry a "layout" (version 1 items get one derived)
PALETTE_OTHERS = 18
HUMAN_SLOTS = 5                  # Mike and Jenny slots of the original palette (typeCt 5, 5)


def make_palette(needed: set[int] | frozenset[int], rng: random.Random, *, full: bool = False) -> list[int]:
    """Mike, Jenny and 18 other clip arts (or the whole library), always including ``needed``.

    Returned in display order: by group, then idx (the order the palette's scene string uses).
    """
    for idx in needed:
        ca.get(idx)
    if full:
        return list(range(ca.N_CLIPARTS))
    chosen: set[int] = set(needed) | set(ca.HUMAN_IDXS)
    fills: dict[int, list[int]] = {}
    for type_idx, slots in enumerate(ca.PALETTE_SLOTS):
        if type_idx in (2, 3):
            continue
        members = [ca.GROUP_OFFSETS[type_idx] + n for n in range(ca.GROUP_SIZES[type_idx])]
        have = [idx for idx in members if idx in chosen]
        spare = [idx for idx in members if idx not in chosen]
        fills[type_idx] = rng.sample(spare, max(0, min(slots - len(have), len(spare))))
    others = len([idx for idx in chosen if not ca.is_human(idx)])
    extra = others + sum(len(f) for f in fills.values()) - PALETTE_OTHERS
    while extra > 0 and any(fills.values()):
        groups = [g for g, f in fills.items() if f]
        fills[rng.choice(groups)].pop()
        extra -= 1
    for picks in fills.values():
        chosen.update(picks)
    return sorted(chosen)


def make_layout(palette: list[int], target: Scene, rng: random.Random) -> str:
    """The palette laid out in slots as ``Abs.js`` does (see the module docstring): group order,
    shuffled within a group, the sun first, Mike and Jenny five slots each with distinct looks (the
    target's own look among them), every slot unplaced with a random flip."""
    looks = {piece.idx: piece.subtype for piece in target.placed if piece.is_human}
    slots: list[Piece] = []
    for type_idx in range(len(ca.GROUP_PREFIXES)):
        members = [idx for idx in palette if ca.type_of(idx) == type_idx]
        if type_idx in (2, 3):
            if not members:
                continue
            idx = members[0]
            subtypes = [looks[idx]] if idx in looks else []
            spare = [s for s in range(ca.N_SUBTYPES) if s not in subtypes]
            subtypes += rng.sample(spare, HUMAN_SLOTS - len(subtypes))
            rng.shuffle(subtypes)
            group = [Piece(idx=idx, subtype=s, flip=rng.randint(0, 1)) for s in subtypes]
        else:
            rng.shuffle(members)
            if ca.SUN in members:
                members.remove(ca.SUN)
                members.insert(0, ca.SUN)
            group = [Piece(idx=idx, flip=rng.randint(0, 1)) for idx in members]
        slots.extend(group)
    return format_scene(Scene(tuple(slots)), trailing_comma=True)


def layout_of(content: dict, seed: int = 0) -> str:
    """The item's layout: its ``layout``, else (items made before layouts) the first recorded
    canvas string of its dialog, else (or if those hold clip arts the palette lacks: a palette
    edited by hand) one made from its palette with a seeded random source."""
    palette = set(content["palette"])
    for text in (content.get("layout") or "", _first_canvas(content.get("dialog") or [])):
        if text and {piece.idx for piece in parse_scene(text).pieces} <= palette:
            return text
    return make_layout(list(content["palette"]), parse_scene(content["abs_t"]),
                       random.Random(f"codraw-layout:{seed}"))


def palette_scene_string(palette: list[int]) -> str:
    """The palette as an unplaced canvas string (every piece at -10000), as ``Abs.js`` writes it."""
    return format_scene(Scene(tuple(Piece(idx=idx) for idx in palette)), trailing_comma=True)


def _item_from_scene(abs_t: str, palette: list[int], provenance: dict, **extra) -> dict:
    item = {"kind": CONTENT_KIND, "version": CONTENT_VERSION, "abs_t": abs_t, "palette": palette,
            "image_id": extra.get("image_id"), "key": extra.get("key"),
            "dialog": extra.get("dialog", []), "provenance": provenance}
    for name in ("socketId", "stat"):
        if extra.get(name) is not None:
            item[name] = extra[name]
    item["layout"] = extra.get("layout") or make_layout(
        palette, parse_scene(abs_t), random.Random(f"codraw-layout:{extra.get('layout_seed')}"))
    return item


def generate(seed: int, config: dict | None = None) -> dict:
    """A content item for one match, the same for the same seed and config."""
    config = config or {}
    rng = random.Random(f"codraw-content:{seed}")
    full = bool(config.get("full_palette", False))
    pool = config.get("scenes") or []
    if pool:
        choice = pool[rng.randrange(len(pool))]
        item = dict(choice) if isinstance(choice, dict) else {"abs_t": choice}
        target = parse_scene(item["abs_t"])
        palette = item.get("palette")
        if full or not palette or not target.idxs <= set(palette):
            palette = make_palette(target.idxs, rng, full=full)
        provenance = dict(item.get("provenance") or {"source": "config", "index": pool.index(choice)})
        provenance["chosen_with_seed"] = seed
        layout = item.get("layout")
        if layout and {p.idx for p in parse_scene(layout).pieces} != set(palette):
            layout = None                           # the palette was redrawn: lay it out anew
        return _item_from_scene(item["abs_t"], list(palette), provenance, image_id=item.get("image_id"),
                                key=item.get("key"), dialog=item.get("dialog", []),
                                socketId=item.get("socketId"), stat=item.get("stat"),
                                layout=layout, layout_seed=seed)
    scene = generate_scene(rng, min_pieces=int(config.get("min_pieces", MIN_PIECES)),
                           max_pieces=int(config.get("max_pieces", MAX_PIECES)))
    palette = make_palette(scene.idxs, rng, full=full)
    return _item_from_scene(format_scene(scene), palette,
                            {"source": "generated", "generator": GENERATOR_ID, "seed": seed},
                            layout_seed=seed)


def _first_canvas(dialog: list[dict]) -> str:
    """The dialog's first non-empty canvas string (the recorded Drawer's palette slots)."""
    for round_ in dialog:
        for text in (round_.get("abs_b") or "", round_.get("abs_d") or ""):
            if parse_scene(text).pieces:
                return text
    return ""


def _palette_from_dialog(dialog: list[dict]) -> list[int]:
    """The unique idx of the Drawer's recorded palette (all slots of the first canvas string)."""
    for round_ in dialog:
        text = round_.get("abs_b") or round_.get("abs_d") or ""
        scene = parse_scene(text)
        if scene.pieces:
            return sorted({piece.idx for piece in scene.pieces})
    return []


def import_codraw_json(path: str | Path, *, keep_dialog: bool = True) -> list[dict]:
    """Content items for every non-empty scene of a ``CoDraw_1_0.json`` file, in the file's order.

    The target string is kept exactly; the palette is the one the recorded Drawer had (the unique
    clip arts of the dialog's first canvas string) plus anything the target needs, or, without a
    dialog, a palette drawn with a seed made from the file name and key. The layout is the
    recorded first canvas string (exactly), the dialog's ``socketId`` and its entry of the file's
    ``stat`` are kept, so that a replay exports them again (exports.py).
    """
    document = read_codraw_document(path)
    data = document["data"]
    stats = document.get("stat")
    stats = stats if isinstance(stats, dict) else {}
    name = Path(path).name
    items = []
    for key, entry in data.items():
        target = parse_scene(entry["abs_t"])
        if not target.placed:
            continue
        dialog = [dict(round_) for round_ in entry.get("dialog", [])] if keep_dialog else []
        palette = set(_palette_from_dialog(entry.get("dialog", [])))
        if palette:
            palette |= target.idxs | set(ca.HUMAN_IDXS)
            palette_list = sorted(palette)
        else:
            palette_list = make_palette(target.idxs, random.Random(f"codraw-import:{name}:{key}"))
        image_id = entry.get("image_id")
        first = _first_canvas(entry.get("dialog", []))
        socket = entry.get("socketId")
        items.append(_item_from_scene(entry["abs_t"], palette_list,
                                      {"source": "import", "file": name, "key": key},
                                      image_id=image_id, key=key, dialog=dialog, socketId=socket,
                                      stat=stats.get(socket) if isinstance(socket, str) else None,
                                      layout=first if parse_scene(first).pieces else None,
                                      layout_seed=f"{name}:{key}"))
    return items


def check_content(content: dict) -> None:
    """Raise ``ValueError`` unless ``content`` is a playable item (target pieces all in the palette)."""
    if content.get("kind") != CONTENT_KIND:
        raise ValueError(f"not a CoDraw content item: kind {content.get('kind')!r}")
    try:
        target = parse_scene(content["abs_t"])
    except (KeyError, SceneFormatError) as exc:
        raise ValueError(f"bad target scene: {exc}") from None
    palette = content.get("palette") or []
    if len(set(palette)) != len(palette) or not all(ca.is_valid_idx(idx) for idx in palette):
        raise ValueError("the palette must list distinct clip-art idx 0..57")
    missing = target.idxs - set(palette)
    if missing:
        raise ValueError(f"the palette lacks target pieces {sorted(missing)}")
    if content.get("layout"):
        try:
            layout = parse_scene(content["layout"])
        except SceneFormatError as exc:
            raise ValueError(f"bad layout: {exc}") from None
        del layout


# ``manage.py simulate codraw --content-file CoDraw_1_0.json`` and ``manage.py import_content``
import_file = import_codraw_json
