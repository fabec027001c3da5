"""Render a CLEVR scene (see :mod:`clevr.scenes`) to an image, deterministically.

A small numpy ray caster drawn through :data:`clevr.camera.CLEVR_CAMERA` (so objects land
on their ``pixel_coords`` at 480x320):

* ground: the plane z = 0, matte gray, darkening with distance;
* objects: analytic hits of spheres, capped vertical cylinders and rotated boxes (sizes as in the
  scene format), with bevelled normals on cube edges and cylinder rims like CLEVR's smooth
  meshes;
* light: a key light with soft shadows (each supersample uses its own point on the light's disc,
  so the average is a penumbra), a fill light, a rim light from behind and a sky ambient;
* rubber: Lambert diffuse and a faint broad highlight; metal: dark diffuse, one reflection bounce
  (other objects, the ground, a sky gradient) tinted by the object color with Schlick Fresnel,
  and a sharp white highlight;
* a thin dark outline on silhouettes keeps small objects readable at thumbnail size;
* shading in linear light, output sRGB; ``supersample`` x ``supersample`` samples per pixel.

Public API: ``render_png(scene, width=480, height=320, *, supersample=None) -> bytes``,
``render_image(...) -> PIL.Image.Image``, ``object_id_map(scene, width, height) -> np.ndarray``,
``visible_pixel_counts(scene, width, height) -> list[int]``.
"""
from __future__ import annotations

import io
import math

import numpy as np
from PIL import Image

from clevr.camera import CLEVR_CAMERA, COLOR_RGB, IMAGE_WIDTH, SIZE_RADIUS

EPS = 1e-4
_INF = np.inf

# Light directions (towards the light), in the camera-aligned ground frame of CLEVR's directions.
_RIGHT = np.array([0.6563112735748291, 0.7544902563095093, 0.0])
_FRONT = np.array([0.7544902563095093, -0.6563112735748291, 0.0])
_UP = np.array([0.0, 0.0, 1.0])


def _unit(v):
    v = np.asarray(v, dtype=float)
    return v / np.linalg.norm(v)


KEY_DIR = _unit(-0.55 * _RIGHT + 0.45 * _FRONT + 1.0 * _UP)    # upper left, towards the camera
FILL_DIR = _unit(0.8 * _RIGHT + 0.5 * _FRONT + 0.6 * _UP)
RIM_DIR = _unit(0.2 * _RIGHT - 1.0 * _FRONT + 0.7 * _UP)
KEY_SOFTNESS = 0.09      # angular radius (radians) of the key light's disc
SHADOW_RAYS = 3          # shadow rays per sample (each sample's own points on the light's disc)

KEY, FILL, RIM, AMBIENT = 1.15, 0.30, 0.30, 0.22
GROUND_ALBEDO = np.array([0.27, 0.27, 0.28])
SKY_HORIZON = np.array([0.40, 0.41, 0.44])
SKY_ZENITH = np.array([0.95, 0.96, 1.0])
GROUND_REFLECT = np.array([0.16, 0.16, 0.17])
OUTLINE = 0.45           # silhouette pixels keep this fraction of their light


_LUMA = np.array([0.2126, 0.7152, 0.0722])


def _srgb_to_linear(c):
    c = np.asarray(c, dtype=float) / 255.0
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def _linear_to_srgb(c):
    c = np.clip(c, 0.0, 1.0)
    return np.where(c <= 0.0031308, 12.92 * c, 1.055 * np.power(c, 1 / 2.4) - 0.055)


class _Obj:
    __slots__ = ("index", "shape", "c", "r", "rot", "albedo", "metal", "bound")

    def __init__(self, index: int, o: dict):
        self.index = index
        self.shape = o["shape"]
        self.r = SIZE_RADIUS[o["size"]]
        x, y = float(o["3d_coords"][0]), float(o["3d_coords"][1])
        self.c = np.array([x, y, self.r])       # the object's centre (it stands on the ground)
        self.rot = math.radians(float(o.get("rotation", 0.0)))
        self.albedo = _srgb_to_linear(COLOR_RGB[o["color"]])
        self.metal = o["material"] == "metal"
        self.bound = self.r * {"sphere": 1.0, "cylinder": math.sqrt(2), "cube": math.sqrt(3)}[self.shape]

    # ---- ray hits: o (N,3) or (3,), d (N,3) unit -> t (N,), inf where missed ----
    def hit(self, o, d):
        o = np.broadcast_to(o, d.shape)
        if self.shape == "sphere":
            oc = o - self.c
            b = np.einsum("ij,ij->i", oc, d)
            disc = b * b - (np.einsum("ij,ij->i", oc, oc) - self.r * self.r)
            with np.errstate(invalid="ignore"):
                t = -b - np.sqrt(disc)
            return np.where((disc > 0) & (t > EPS), t, _INF)
        if self.shape == "cylinder":
            ox, oy, oz = o[:, 0] - self.c[0], o[:, 1] - self.c[1], o[:, 2]
            dx, dy, dz = d[:, 0], d[:, 1], d[:, 2]
            a = dx * dx + dy * dy
            b = ox * dx + oy * dy
            disc = b * b - a * (ox * ox + oy * oy - self.r * self.r)
            with np.errstate(invalid="ignore", divide="ignore"):
                ts = (-b - np.sqrt(disc)) / a
                z = oz + ts * dz
                side = (disc > 0) & (a > 1e-12) & (ts > EPS) & (z >= 0) & (z <= 2 * self.r)
                tt = (2 * self.r - oz) / dz
                px, py = ox + tt * dx, oy + tt * dy
                top = (np.abs(dz) > 1e-12) & (tt > EPS) & (px * px + py * py <= self.r * self.r)
            return np.minimum(np.where(side, ts, _INF), np.where(top, tt, _INF))
        # cube: slab test in the object's frame, one axis at a time (no (N, 3) temporaries)
        cs, sn = math.cos(self.rot), math.sin(self.rot)
        px, py = o[:, 0] - self.c[0], o[:, 1] - self.c[1]
        axes = ((cs * px + sn * py, cs * d[:, 0] + sn * d[:, 1]),
                (-sn * px + cs * py, -sn * d[:, 0] + cs * d[:, 1]),
                (o[:, 2] - self.c[2], d[:, 2]))
        tn = tf = None
        for ol, dl in axes:
            inv = 1.0 / np.where(np.abs(dl) < 1e-12, 1e-12, dl)
            t1 = (-self.r - ol) * inv
            t2 = (self.r - ol) * inv
            lo, hi = np.minimum(t1, t2), np.maximum(t1, t2)
            tn = lo if tn is None else np.maximum(tn, lo)
            tf = hi if tf is None else np.minimum(tf, hi)
        return np.where((tn <= tf) & (tn > EPS), tn, _INF)

    def normal(self, p):
        """Outward unit normals at surface points ``p`` (N,3), with rounded edges."""
        q = p - self.c
        if self.shape == "sphere":
            return q / np.linalg.norm(q, axis=1, keepdims=True)
        bevel = 0.16 * self.r
        if self.shape == "cylinder":
            rho = np.hypot(q[:, 0], q[:, 1])
            radial = np.maximum(rho - (self.r - bevel), 0.0)
            up = np.maximum(q[:, 2] - (self.r - bevel), 0.0)   # q_z = z - r; top at +r
            up = np.where(radial + up == 0, 1.0, up)
            with np.errstate(invalid="ignore", divide="ignore"):
                ux = np.where(rho > 0, q[:, 0] / rho, 0.0)
                uy = np.where(rho > 0, q[:, 1] / rho, 0.0)
            n = np.stack([ux * radial, uy * radial, up], axis=1)
            return n / np.linalg.norm(n, axis=1, keepdims=True)
        cs, sn = math.cos(self.rot), math.sin(self.rot)
        ql = np.stack([cs * q[:, 0] + sn * q[:, 1], -sn * q[:, 0] + cs * q[:, 1], q[:, 2]], axis=1)
        nl = np.sign(ql) * np.maximum(np.abs(ql) - (self.r - bevel), 0.0)
        flat = ~np.any(nl != 0, axis=1)
        if flat.any():  # numerically inside the bevel band on no axis: use the dominant face
            ax = np.argmax(np.abs(ql[flat]), axis=1)
            f = np.zeros((flat.sum(), 3))
            f[np.arange(len(ax)), ax] = np.sign(ql[flat][np.arange(len(ax)), ax])
            nl[flat] = f
        n = np.stack([cs * nl[:, 0] - sn * nl[:, 1], sn * nl[:, 0] + cs * nl[:, 1], nl[:, 2]], axis=1)
        return n / np.linalg.norm(n, axis=1, keepdims=True)


def _objects(scene: dict) -> list[_Obj]:
    return [_Obj(i, o) for i, o in enumerate(scene.get("objects") or [])]


def _camera_rays(width: int, height: int, ss: int):
    cam = CLEVR_CAMERA
    f = cam.focal * width / IMAGE_WIDTH
    u = (np.arange(width * ss) + 0.5) / ss
    v = (np.arange(height * ss) + 0.5) / ss
    x = (u - width / 2) / f
    y = (v - height / 2) / f
    d = (np.asarray(cam.forward)[None, None, :] + x[None, :, None] * np.asarray(cam.right)[None, None, :]
         + y[:, None, None] * np.asarray(cam.down)[None, None, :])
    d /= np.linalg.norm(d, axis=2, keepdims=True)
    return np.asarray(cam.position, dtype=float), d, f * ss


def _primary(objs: list[_Obj], origin, d, fpx: float):
    """Nearest object hit per ray on the (H, W, 3) ray grid: (ids (-1: none), t)."""
    H, W, _ = d.shape
    t = np.full((H, W), _INF)
    ids = np.full((H, W), -1, dtype=np.int32)
    cam = CLEVR_CAMERA
    fwd, right, down = (np.asarray(v) for v in (cam.forward, cam.right, cam.down))
    for ob in objs:
        v = ob.c - origin
        depth = v @ fwd
        if depth <= ob.bound:
            y0, y1, x0, x1 = 0, H, 0, W
        else:
            cx = W / 2 + fpx * (v @ right) / depth
            cy = H / 2 + fpx * (v @ down) / depth
            rad = fpx * ob.bound / math.sqrt(max(depth * depth - ob.bound * ob.bound, 1e-9)) + 2
            x0, x1 = max(0, int(cx - rad)), min(W, int(cx + rad) + 1)
            y0, y1 = max(0, int(cy - rad)), min(H, int(cy + rad) + 1)
            if x0 >= x1 or y0 >= y1:
                continue
        block = d[y0:y1, x0:x1].reshape(-1, 3)
        tk = ob.hit(origin, block).reshape(y1 - y0, x1 - x0)
        sub_t = t[y0:y1, x0:x1]
        closer = tk < sub_t
        sub_t[closer] = tk[closer]
        ids[y0:y1, x0:x1][closer] = ob.index
    return ids, t


def _occluded(objs: list[_Obj], p, L, skip):
    """Whether the ray from each point ``p`` (N,3) along ``L`` (N,3) hits an object other than
    ``skip[i]``. Bounding-sphere culling first, exact hit test on the candidates."""
    out = np.zeros(len(p), dtype=bool)
    for ob in objs:
        oc = ob.c - p
        tca = np.einsum("ij,ij->i", oc, L)
        d2 = np.einsum("ij,ij->i", oc, oc) - tca * tca
        cand = (skip != ob.index) & ~out & (tca > -ob.bound) & (d2 < ob.bound * ob.bound)
        if cand.any():
            idx = np.nonzero(cand)[0]
            out[idx] |= np.isfinite(ob.hit(p[idx], L[idx]))
    return out


def _trace(objs: list[_Obj], p, d, skip):
    """Nearest object along rays from ``p`` (N,3) in directions ``d``: (ids, t)."""
    t = np.full(len(p), _INF)
    ids = np.full(len(p), -1, dtype=np.int32)
    for ob in objs:
        oc = ob.c - p
        tca = np.einsum("ij,ij->i", oc, d)
        d2 = np.einsum("ij,ij->i", oc, oc) - tca * tca
        cand = (skip != ob.index) & (tca > -ob.bound) & (d2 < ob.bound * ob.bound)
        if cand.any():
            idx = np.nonzero(cand)[0]
            tk = ob.hit(p[idx], d[idx])
            closer = tk < t[idx]
            t[idx[closer]] = tk[closer]
            ids[idx[closer]] = ob.index
    return ids, t


def _key_dirs(n: int) -> np.ndarray:
    """``n`` fixed directions spread over the key light's disc (golden-angle spiral)."""
    a = np.cross(KEY_DIR, _UP)
    a /= np.linalg.norm(a)
    b = np.cross(KEY_DIR, a)
    k = np.arange(n)
    rad = KEY_SOFTNESS * np.sqrt((k + 0.5) / n)
    ang = k * math.pi * (3 - math.sqrt(5))
    dirs = KEY_DIR[None, :] + rad[:, None] * (np.cos(ang)[:, None] * a + np.sin(ang)[:, None] * b)
    return dirs / np.linalg.norm(dirs, axis=1, keepdims=True)


def _lit_fraction(objs, p, sample, key_dirs, skip):
    """Share of the key light's disc seen from points ``p``: :data:`SHADOW_RAYS` rays each, to
    the disc points ``sample + j * n_samples`` (so a pixel's samples cover the whole disc)."""
    n_samples = len(key_dirs) // SHADOW_RAYS
    lit = np.zeros(len(p))
    for j in range(SHADOW_RAYS):
        lit += ~_occluded(objs, p, key_dirs[sample + j * n_samples], skip)
    return lit / SHADOW_RAYS


def _sky(d):
    up = np.clip(d[:, 2], 0.0, 1.0)[:, None]
    sky = SKY_HORIZON + (SKY_ZENITH - SKY_HORIZON) * np.sqrt(up)
    return np.where(d[:, 2:3] > 0, sky, GROUND_REFLECT)


def _ground_color(p, lit):
    """Ground radiance at points ``p`` given the key light visibility ``lit`` (0..1)."""
    dist = np.hypot(p[:, 0], p[:, 1])
    fade = 1.0 - 0.45 * np.clip((dist - 5.0) / 15.0, 0.0, 1.0)
    light = AMBIENT + KEY * KEY_DIR[2] * lit + FILL * FILL_DIR[2]
    return GROUND_ALBEDO * (light * fade)[:, None]


def _contact_ao(objs, p):
    """Contact darkening of ground points ``p`` near each object's footprint (0..1 factor)."""
    ao = np.ones(len(p))
    for ob in objs:
        dist = np.hypot(p[:, 0] - ob.c[0], p[:, 1] - ob.c[1]) - ob.r * (1.2 if ob.shape == "cube" else 1.0)
        ao *= 1.0 - 0.35 * np.exp(-np.clip(dist, 0, None) / (0.25 * ob.r + 0.05))
    return ao


def _simple_object_color(objs, ids, p):
    """Cheap shading (no shadows, no reflections) for what a metal surface reflects."""
    out = np.zeros((len(ids), 3))
    for ob in objs:
        m = ids == ob.index
        if m.any():
            n = ob.normal(p[m])
            lam = np.clip(n @ KEY_DIR, 0, None) * KEY + np.clip(n @ FILL_DIR, 0, None) * FILL
            albedo = ob.albedo * (0.55 if ob.metal else 1.0)
            out[m] = albedo * (AMBIENT + lam)[:, None]
    return out


def _shade_objects(objs, ids, p, view, key_dirs, sample):
    """Radiance of object hit points. ``view`` is the ray direction (towards the surface)."""
    out = np.zeros((len(ids), 3))
    for ob in objs:
        m = np.nonzero(ids == ob.index)[0]
        if len(m) == 0:
            continue
        pm, vm = p[m], view[m]
        n = ob.normal(pm)
        Lk = key_dirs[sample[m]]
        ndl = np.einsum("ij,ij->i", n, Lk)
        facing = ndl > 0
        lit = np.zeros(len(m))
        if facing.any():
            fi = np.nonzero(facing)[0]
            lit[fi] = _lit_fraction(objs, pm[fi] + n[fi] * 1e-3, sample[m][fi], key_dirs,
                                    np.full(len(fi), ob.index))
        key = KEY * np.clip(ndl, 0, None) * lit
        fill = FILL * np.clip(n @ FILL_DIR, 0, None)
        rim = RIM * np.clip(n @ RIM_DIR, 0, None)
        amb = AMBIENT * (0.6 + 0.4 * n[:, 2])
        to_eye = -vm
        h = Lk + to_eye
        h /= np.linalg.norm(h, axis=1, keepdims=True)
        ndh = np.clip(np.einsum("ij,ij->i", n, h), 0, None)
        if not ob.metal:
            diffuse = ob.albedo[None, :] * (amb + key + fill + rim)[:, None]
            spec = 0.06 * ndh ** 12 * lit * KEY
            out[m] = diffuse + spec[:, None]
            continue
        # metal: reflect the scene (one bounce), tinted by the albedo with Schlick Fresnel
        cos_t = np.clip(np.einsum("ij,ij->i", n, to_eye), 0, 1)
        refl_d = vm - 2 * np.einsum("ij,ij->i", vm, n)[:, None] * n
        start = pm + n * 1e-3
        rid, rt = _trace(objs, start, refl_d, np.full(len(m), ob.index))
        env = _sky(refl_d)
        hit_ground = (rid < 0) & (refl_d[:, 2] < 0)
        if hit_ground.any():
            gi = np.nonzero(hit_ground)[0]
            tg = -start[gi, 2] / refl_d[gi, 2]
            pg = start[gi] + tg[:, None] * refl_d[gi]
            glit = (~_occluded(objs, pg, np.broadcast_to(KEY_DIR, pg.shape), np.full(len(gi), -1))).astype(float)
            env[gi] = _ground_color(pg, glit) * _contact_ao(objs, pg)[:, None]
        hit_obj = rid >= 0
        if hit_obj.any():
            # other objects show in the reflection by brightness only, so a metal object never
            # seems to carry a second color (players name colors)
            oi = np.nonzero(hit_obj)[0]
            seen = _simple_object_color(objs, rid[oi], start[oi] + rt[oi, None] * refl_d[oi])
            env[oi] = (seen @ _LUMA)[:, None] * np.ones(3)
        # saturated like the albedo, brightened halfway to full (dark colors stay darker)
        tint = np.minimum(0.95 * ob.albedo / math.sqrt(max(float(ob.albedo.max()), 1e-6)), 1.0)
        fres = tint[None, :] + (1 - tint[None, :]) * (0.6 * (1 - cos_t) ** 5)[:, None]
        diffuse = 0.12 * ob.albedo[None, :] * (amb + key + fill)[:, None]
        sharp = 3.0 * ndh ** 90 * lit * KEY            # the light's own small reflection
        broad = 0.25 * ndh ** 12 * lit * KEY
        # a tall soft-box streak: the key light seen in vertical faces (cylinder sides, cubes)
        nh = n[:, :2] / np.maximum(np.linalg.norm(n[:, :2], axis=1, keepdims=True), 1e-9)
        hh = h[:, :2] / np.maximum(np.linalg.norm(h[:, :2], axis=1, keepdims=True), 1e-9)
        streak = np.clip(np.einsum("ij,ij->i", nh, hh), 0, None) ** 40 * (1 - n[:, 2] ** 2)
        # a cube's flat face would light up whole and lose its color: keep its streak weak
        broad = broad + (1.3 if ob.shape == "cylinder" else 0.3) * streak * lit
        fill_h = FILL_DIR + to_eye
        fill_h /= np.linalg.norm(fill_h, axis=1, keepdims=True)
        broad = broad + 0.8 * np.clip(np.einsum("ij,ij->i", n, fill_h), 0, None) ** 60
        # colored metal tints its reflections: broad sheen fully, the small sharp highlight
        # mostly white (so wide areas keep the object's color)
        out[m] = (diffuse + fres * env + broad[:, None] * tint[None, :]
                  + sharp[:, None] * (0.6 + 0.4 * tint)[None, :])
    return out


def _outline_mask(ids: np.ndarray, radius: int) -> np.ndarray:
    """Pixels within ``radius`` of a silhouette edge of some object (on either side)."""
    edge = np.zeros(ids.shape, dtype=bool)
    for dy, dx in ((0, 1), (1, 0)):
        a = ids[: ids.shape[0] - dy, : ids.shape[1] - dx]
        b = ids[dy:, dx:]
        e = (a != b)
        edge[: ids.shape[0] - dy, : ids.shape[1] - dx] |= e
        edge[dy:, dx:] |= e
    if radius > 1:
        grown = edge.copy()
        for s in range(1, radius):
            grown[s:, :] |= edge[:-s, :]
            grown[:-s, :] |= edge[s:, :]
            grown[:, s:] |= edge[:, :-s]
            grown[:, :-s] |= edge[:, s:]
        edge = grown
    return edge


def _ground_rect(x0: float, x1: float, y0: float, y1: float, W: int, H: int):
    """Pixel rectangle (rows, cols) of the image of a ground rectangle, or None if off-screen."""
    pts = [CLEVR_CAMERA.project((x, y, 0.0), W, H) for x in (x0, x1) for y in (y0, y1)]
    us, vs = [q[0] for q in pts], [q[1] for q in pts]
    c0, c1 = max(0, int(min(us)) - 1), min(W, int(max(us)) + 2)
    r0, r1 = max(0, int(min(vs)) - 1), min(H, int(max(vs)) + 2)
    return (r0, r1, c0, c1) if r0 < r1 and c0 < c1 else None


def _ground_light(objs, pg, ground, sample, key_dirs, W, H):
    """Key-light visibility (soft shadows) and contact darkening of the ground pixels.

    Each object is tested only on the pixels of the ground rectangle its shadow (from any point
    of the light's disc) and its contact darkening can reach."""
    n_samples = len(key_dirs) // SHADOW_RAYS
    occluded = np.zeros((SHADOW_RAYS,) + ground.shape, dtype=bool)
    ao = np.ones(ground.shape)
    reach = 1.0 / KEY_DIR[2]
    for ob in objs:
        top = 2 * ob.r
        tip = ob.c[:2] - KEY_DIR[:2] * top * reach          # where the top's shadow falls
        pad = ob.bound + top * reach * 2.5 * KEY_SOFTNESS + 1.2
        rect = _ground_rect(min(ob.c[0], tip[0]) - pad, max(ob.c[0], tip[0]) + pad,
                            min(ob.c[1], tip[1]) - pad, max(ob.c[1], tip[1]) + pad, W, H)
        if rect is None:
            continue
        r0, r1, c0, c1 = rect
        block = ground[r0:r1, c0:c1]
        idx = np.nonzero(block.reshape(-1))[0]
        if len(idx) == 0:
            continue
        p = pg[r0:r1, c0:c1].reshape(-1, 3)[idx]
        s = sample[r0:r1, c0:c1].reshape(-1)[idx]
        for j in range(SHADOW_RAYS):
            hit = np.isfinite(ob.hit(p, key_dirs[s + j * n_samples]))
            occ = occluded[j, r0:r1, c0:c1].reshape(-1)
            occ[idx] |= hit
            occluded[j, r0:r1, c0:c1] = occ.reshape(r1 - r0, c1 - c0)
        sub = ao[r0:r1, c0:c1].reshape(-1)
        sub[idx] *= _contact_ao([ob], p)
        ao[r0:r1, c0:c1] = sub.reshape(r1 - r0, c1 - c0)
    lit = 1.0 - occluded.sum(axis=0, dtype=np.float64) / SHADOW_RAYS
    return lit, ao


def render_linear(scene: dict, width: int, height: int, ss: int) -> np.ndarray:
    """The supersampled linear-light radiance, shape (height*ss, width*ss, 3)."""
    objs = _objects(scene)
    origin, d, fpx = _camera_rays(width, height, ss)
    H, W = d.shape[:2]
    ids, t = _primary(objs, origin, d, fpx)
    key_dirs = _key_dirs(ss * ss * SHADOW_RAYS)
    sample = ((np.arange(H)[:, None] % ss) * ss + (np.arange(W)[None, :] % ss)).astype(np.int64)
    sample = (sample * 7) % (ss * ss) if ss > 1 else sample   # decorrelate neighbours a little
    flat_d = d.reshape(-1, 3)
    flat_ids = ids.reshape(-1)
    flat_s = sample.reshape(-1)
    color = np.zeros((H * W, 3))

    # ground (everything the camera sees that is not an object: the camera looks down)
    ground = (ids < 0) & (d[:, :, 2] < 0)
    with np.errstate(divide="ignore"):
        pg = origin + (-origin[2] / np.where(ground, d[:, :, 2], -1.0))[:, :, None] * d
    lit, ao = _ground_light(objs, pg, ground, sample, key_dirs, W, H)
    g = np.nonzero(ground.reshape(-1))[0]
    color[g] = _ground_color(pg.reshape(-1, 3)[g], lit.reshape(-1)[g]) * ao.reshape(-1)[g, None]

    hit = np.nonzero(flat_ids >= 0)[0]
    if len(hit):
        ph = origin + t.reshape(-1)[hit, None] * flat_d[hit]
        color[hit] = _shade_objects(objs, flat_ids[hit], ph, flat_d[hit], key_dirs, flat_s[hit])
    color = color.reshape(H, W, 3)
    if objs:
        edge = _outline_mask(ids, max(1, ss // 2))
        color[edge] *= OUTLINE
    return color


def render_image(scene: dict, width: int = 480, height: int = 320, *,
                 supersample: int | None = None) -> Image.Image:
    """The scene as an RGB :class:`PIL.Image.Image` of ``width`` x ``height``."""
    if not (isinstance(width, int) and isinstance(height, int) and 8 <= width <= 4096 and 8 <= height <= 4096):
        raise ValueError("width and height must be ints in 8..4096")
    ss = supersample or (3 if width <= 320 else 2)
    if not 1 <= ss <= 6:
        raise ValueError("supersample must be in 1..6")
    lin = render_linear(scene, width, height, ss)
    lin = lin.reshape(height, ss, width, ss, 3).mean(axis=(1, 3))
    # gentle highlight roll-off before clipping
    lin = np.where(lin > 0.8, 0.8 + 0.2 * np.tanh((lin - 0.8) / 0.2), lin)
    rgb = np.round(_linear_to_srgb(lin) * 255).astype(np.uint8)
    return Image.fromarray(rgb, mode="RGB")


def render_png(scene: dict, width: int = 480, height: int = 320, *, supersample: int | None = None) -> bytes:
    """The scene as PNG bytes (deterministic: the same scene gives the same bytes)."""
    buf = io.BytesIO()
    render_image(scene, width, height, supersample=supersample).save(buf, format="PNG", optimize=False)
    return buf.getvalue()


def object_id_map(scene: dict, width: int = 480, height: int = 320) -> np.ndarray:
    """(height, width) int array: the index of the object seen at each pixel centre, -1 for the
    ground. Also answers "which object is at this click?"."""
    origin, d, fpx = _camera_rays(width, height, 1)
    ids, _ = _primary(_objects(scene), origin, d, fpx)
    return ids


def visible_pixel_counts(scene: dict, width: int = 480, height: int = 320) -> list[int]:
    """How many pixels of each object the camera sees (one ray per pixel) at this size."""
    ids = object_id_map(scene, width, height)
    n = len(scene.get("objects") or [])
    counts = np.bincount(ids[ids >= 0].ravel(), minlength=n)
    return [int(c) for c in counts[:n]]
