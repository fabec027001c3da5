"""Draw a CoDraw scene as one standalone SVG document, from the project's SVG clip art.

For researchers (the research pages' round snapshots, notebooks, papers): ``scene_svg(scene)``
composes ``background.svg`` and every placed piece's ``<idx>_<subtype>.svg`` from
``games/codraw/static/codraw/art`` into one SVG with nothing external to fetch. Placement follows the
authors' renderer (codraw-models ``abs_render.py``) and docs/games/codraw_art.md:

* ``x, y`` is the piece's centre; depth 0/1/2 draws it at 1.0/0.7/0.49 of its natural size;
* ``flip = 1`` mirrors the piece about its vertical centre line;
* draw order: the sun (idx 3) at the very back, then the other sky pieces, then everything
  else by ``(-depth, idx)`` (:func:`games.codraw.clipart.draw_order_key`);
* pieces not on the canvas (``x = y = -10000``) are left out; parts beyond the 500x400 canvas
  are clipped, as on the players' screens.

Pure: no Django; the only I/O is reading the art files (cached). ``scene`` may be a
:class:`~games.codraw.scenes.Scene`, a scene string or a list of piece dicts.
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from xml.sax.saxutils import escape

from games.codraw import clipart as ca
from games.codraw.scenes import as_scene

ART_DIR = Path(__file__).resolve().parent / "static" / "codraw" / "art"

_SIZE_RE = re.compile(r'<svg\b[^>]*?\bwidth="([\d.]+)"[^>]*?\bheight="([\d.]+)"')
_TITLE_RE = re.compile(r"<title>.*?</title>", re.S)


def _n(value: float) -> str:
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


@lru_cache(maxsize=256)
def _art(art_dir: str, name: str) -> tuple[float, float, str]:
    """``(width, height, inner markup)`` of one art file (its ``<title>`` dropped)."""
    text = (Path(art_dir) / name).read_text(encoding="utf-8")
    match = _SIZE_RE.search(text)
    if match is None:
        raise ValueError(f"{name}: an SVG without width/height")
    start = text.index(">", text.index("<svg")) + 1
    inner = _TITLE_RE.sub("", text[start:text.rindex("</svg>")], count=1)
    return float(match.group(1)), float(match.group(2)), inner


def piece_markup(idx: int, subtype: int, x: float, y: float, depth: int, flip: int,
                 art_dir: Path | str | None = None) -> str:
    """One piece as an SVG ``<g>`` on the 500x400 canvas (centre ``x, y``)."""
    art = ca.get(idx)
    subtype = subtype if art.is_human else 0
    width, height, inner = _art(str(art_dir or ART_DIR), f"{idx}_{subtype}.svg")
    scale = ca.DEPTH_SCALES[depth]
    w, h = width * scale, height * scale
    left, top = x - w / 2, y - h / 2
    if flip:
        transform = f"translate({_n(left + w)} {_n(top)}) scale({_n(-scale)} {_n(scale)})"
    else:
        transform = f"translate({_n(left)} {_n(top)}) scale({_n(scale)})"
    label = escape(ca.describe(idx, subtype))
    return (f'<g data-idx="{idx}" data-subtype="{subtype}" data-depth="{depth}" data-flip="{int(bool(flip))}" '
            f'transform="{transform}"><title>{label}</title>{inner}</g>')


def scene_svg(scene, *, art_dir: Path | str | None = None, scale: float = 1.0, background: bool = True,
              title: str | None = None) -> str:
    """The scene as one SVG document, ``500*scale`` by ``400*scale`` pixels."""
    art_dir = str(art_dir or ART_DIR)
    pieces = sorted(as_scene(scene).placed, key=lambda p: ca.draw_order_key(p.idx, p.depth))
    cw, ch = ca.CANVAS_W, ca.CANVAS_H
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_n(cw * scale)}" height="{_n(ch * scale)}" '
             f'viewBox="0 0 {cw} {ch}">']
    if title:
        parts.append(f"<title>{escape(title)}</title>")
    parts.append(f'<defs><clipPath id="canvas"><rect width="{cw}" height="{ch}"/></clipPath></defs>'
                 f'<g clip-path="url(#canvas)">')
    if background:
        parts.append(f"<g>{_art(art_dir, 'background.svg')[2]}</g>")
    else:
        parts.append(f'<rect width="{cw}" height="{ch}" fill="#ffffff"/>')
    for piece in pieces:
        parts.append(piece_markup(piece.idx, piece.subtype, piece.x, piece.y, piece.depth, piece.flip, art_dir))
    parts.append("</g></svg>")
    return "".join(parts)


def scenes_row_svg(scenes: list[tuple[str, object]], *, art_dir: Path | str | None = None,
                   scale: float = 0.5, gap: int = 12) -> str:
    """Several scenes side by side with a caption each, e.g. ``[("target", t), ("round 3", d)]``."""
    cw, ch = ca.CANVAS_W * scale, ca.CANVAS_H * scale
    width = len(scenes) * cw + (len(scenes) + 1) * gap
    height = ch + 2 * gap + 18
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_n(width)}" height="{_n(height)}" '
             f'viewBox="0 0 {_n(width)} {_n(height)}"><rect width="100%" height="100%" fill="#f6f7fb"/>']
    for i, (caption, scene) in enumerate(scenes):
        x = gap + i * (cw + gap)
        inner = scene_svg(scene, art_dir=art_dir, scale=scale).replace('id="canvas"', f'id="canvas{i}"') \
            .replace("url(#canvas)", f"url(#canvas{i})")
        parts.append(f'<text x="{_n(x)}" y="{_n(gap + 12)}" font-family="sans-serif" font-size="13" '
                     f'fill="#1d2433">{escape(caption)}</text>')
        parts.append(f'<g transform="translate({_n(x)} {_n(gap + 18)})">{inner}</g>')
    parts.append("</svg>")
    return "".join(parts)
