"""A picture of the cart-pole drawn from its state, in numpy (rllab drew its Box2D bodies
with pygame; our port has no Box2D world to draw).

The geometry is rllab's ``cartpole.xml``: a cart of 4/sqrt(12) x 3/sqrt(12) m standing on the
track (its centre at half its height), a 0.1 x 1.0 m pole hinged at the middle of the cart's
top, a track whose top is at height 0, and red marks at the limits x = +-2.4 where an
episode ends. Positive theta leans the pole's top toward -x, as in the dynamics
(:class:`ddpg.envs.CartpoleEnv`). The view spans x in [-3, 3] m.
"""
import functools

import numpy as np

__all__ = ["draw_cartpole", "CART_WIDTH", "CART_HEIGHT", "POLE_WIDTH", "POLE_LENGTH",
           "VIEW_X", "VIEW_Y"]

CART_WIDTH = 4.0 / np.sqrt(12.0)
CART_HEIGHT = 3.0 / np.sqrt(12.0)
POLE_WIDTH = 0.1
POLE_LENGTH = 1.0
TRACK_DEPTH = 0.2
X_LIMIT = 2.4
#: The world's visible rectangle in metres: (left, right) and (bottom, top).
VIEW_X = (-3.0, 3.0)
VIEW_Y = (-0.6, 2.4)

BACKGROUND = (255, 255, 255)
TRACK = (128, 128, 128)
CART = (77, 128, 204)
POLE = (204, 128, 51)
LIMIT = (220, 30, 30)
HINGE = (40, 40, 40)


@functools.lru_cache(maxsize=4)
def _pixel_centres(width, height):
    """World coordinates (x, y) of every pixel's centre, each of shape (height, width)."""
    scale_x = (VIEW_X[1] - VIEW_X[0]) / width
    scale_y = (VIEW_Y[1] - VIEW_Y[0]) / height
    xs = VIEW_X[0] + (np.arange(width) + 0.5) * scale_x
    ys = VIEW_Y[1] - (np.arange(height) + 0.5) * scale_y
    return np.meshgrid(xs, ys)


def _paint(image, width, height, corners, colour):
    """Paint the convex polygon ``corners`` (counter-clockwise, in metres) in ``colour``,
    testing only the pixels of its bounding box (a frame costs about a millisecond)."""
    px, py = _pixel_centres(width, height)
    corners = np.asarray(corners, dtype=np.float64)
    columns = np.flatnonzero((px[0] >= corners[:, 0].min()) & (px[0] <= corners[:, 0].max()))
    rows = np.flatnonzero((py[:, 0] >= corners[:, 1].min()) & (py[:, 0] <= corners[:, 1].max()))
    if not len(columns) or not len(rows):
        return
    box = (slice(rows[0], rows[-1] + 1), slice(columns[0], columns[-1] + 1))
    x, y = px[box], py[box]
    mask = np.ones(x.shape, dtype=bool)
    for (x0, y0), (x1, y1) in zip(corners, np.roll(corners, -1, axis=0)):
        mask &= (x1 - x0) * (y - y0) - (y1 - y0) * (x - x0) >= 0
    image[box][mask] = colour


def _box(left, bottom, right, top):
    return np.array([(left, bottom), (right, bottom), (right, top), (left, top)])


@functools.lru_cache(maxsize=4)
def _background(width, height):
    """The picture without the cart and pole: the track and the limit marks."""
    image = np.empty((height, width, 3), dtype=np.uint8)
    image[:] = BACKGROUND
    _paint(image, width, height, _box(VIEW_X[0], -TRACK_DEPTH, VIEW_X[1], 0.0), TRACK)
    for limit in (-X_LIMIT, X_LIMIT):
        _paint(image, width, height, _box(limit - 0.02, 0.0, limit + 0.02, 0.5), LIMIT)
    image.flags.writeable = False
    return image


def draw_cartpole(state, width=480, height=240):
    """An ``(height, width, 3)`` uint8 RGB picture of the cart-pole in ``state``
    (``[x, x_dot, theta, theta_dot]``; only ``x`` and ``theta`` show)."""
    x, theta = float(state[0]), float(state[2])
    image = _background(width, height).copy()
    _paint(image, width, height,
           _box(x - CART_WIDTH / 2, 0.0, x + CART_WIDTH / 2, CART_HEIGHT), CART)
    # the pole: a box along the unit vector (-sin theta, cos theta) from the hinge
    along = np.array([-np.sin(theta), np.cos(theta)])
    across = np.array([along[1], -along[0]]) * (POLE_WIDTH / 2)
    hinge = np.array([x, CART_HEIGHT])
    top = hinge + POLE_LENGTH * along
    _paint(image, width, height,
           [hinge + across, top + across, top - across, hinge - across], POLE)
    # the hinge: a small octagon
    angles = np.arange(8) * np.pi / 4
    _paint(image, width, height,
           hinge + 0.04 * np.stack([np.cos(angles), np.sin(angles)], axis=1), HINGE)
    return image
