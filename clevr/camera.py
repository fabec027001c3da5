"""CLEVR's camera and the scene constants an image needs (sizes, colors, image size): what
:mod:`clevr.scenes` places objects with and :mod:`clevr.render` draws with."""
from __future__ import annotations

import math
from dataclasses import dataclass

# CLEVR's properties.json: sRGB albedo per color name, and object radius per size name.
COLOR_RGB = {
    "gray": (87, 87, 87), "red": (173, 35, 35), "blue": (42, 75, 215), "green": (29, 105, 20),
    "brown": (129, 74, 25), "purple": (129, 38, 192), "cyan": (41, 208, 208),
    "yellow": (255, 238, 51),
}
SIZE_RADIUS = {"large": 0.7, "small": 0.35}

IMAGE_WIDTH, IMAGE_HEIGHT = 480, 320   # CLEVR v1.0 image size; pixel_coords live here


# --------------------------------------------------------------------------------------------
# Camera
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Camera:
    """A pinhole camera. ``focal`` is in pixels for an image :data:`IMAGE_WIDTH` wide; other
    widths scale it, and the principal point is the image centre."""

    position: tuple[float, float, float]
    forward: tuple[float, float, float]
    right: tuple[float, float, float]
    down: tuple[float, float, float]
    focal: float

    def project(self, point, width: int = IMAGE_WIDTH, height: int = IMAGE_HEIGHT):
        """World point -> (px, py, depth) as floats; depth is along the viewing axis."""
        v = [point[k] - self.position[k] for k in range(3)]
        depth = sum(v[k] * self.forward[k] for k in range(3))
        f = self.focal * width / IMAGE_WIDTH
        px = width / 2 + f * sum(v[k] * self.right[k] for k in range(3)) / depth
        py = height / 2 + f * sum(v[k] * self.down[k] for k in range(3)) / depth
        return px, py, depth


def _make_clevr_camera() -> Camera:
    # Fitted (scipy least squares over position, yaw, pitch, roll and focal; residual < 0.25 px
    # and < 0.05 depth) to the released pixel_coords of the 5 objects of CLEVR_val_000000. The
    # optical axis meets the ground at the origin; focal 523.4 px ~ Blender's 35 mm lens on a
    # 32 mm sensor at 480 px (525). The image's horizontal axis is 2.6 degrees off CLEVR's
    # "directions" (as in CLEVR itself); relationships always use "directions".
    yaw, pitch, roll = math.radians(141.6196), math.radians(26.2662), math.radians(-0.0856)
    cy, sy, cp, sp = math.cos(yaw), math.sin(yaw), math.cos(pitch), math.sin(pitch)
    fwd = (cy * cp, sy * cp, -sp)
    right0 = (sy, -cy, 0.0)
    down0 = (fwd[1] * right0[2] - fwd[2] * right0[1],
             fwd[2] * right0[0] - fwd[0] * right0[2],
             fwd[0] * right0[1] - fwd[1] * right0[0])
    cr, sr = math.cos(roll), math.sin(roll)
    right = tuple(cr * a + sr * b for a, b in zip(right0, down0))
    down = tuple(-sr * a + cr * b for a, b in zip(right0, down0))
    return Camera(position=(7.8257, -6.1978, 4.9286), forward=fwd, right=right, down=down,
                  focal=523.45)


CLEVR_CAMERA = _make_clevr_camera()


def project(point) -> list:
    """``pixel_coords`` of a world point: ``[int px, int py, depth]`` in the 480x320 image."""
    px, py, depth = CLEVR_CAMERA.project(point)
    return [int(round(px)), int(round(py)), round(depth, 4)]
