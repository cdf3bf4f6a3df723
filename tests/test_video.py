"""Videos of episodes: the cart-pole's picture, writing MP4 and GIF files, ``ddpg-evaluate
--video`` and ``ddpg-train --video-every``, MuJoCo's rendering backend."""
import argparse
import csv
import io
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from ddpg.envs import CartpoleEnv, GymEnv, normalize
from ddpg.experiment import epoch_videos, evaluate
from ddpg.experiment.script import UsageError
from ddpg.rendering import (RENDER_INSTALL, VIDEO_INSTALL, VideoError, backend, cartpole,
                            choose_mujoco_gl, draw_cartpole, frame_rate, gif_bytes,
                            scale_frames, video_problem, write_video)
from ddpg.rendering.video import rgb_frames

imageio = pytest.importorskip("imageio")
pytest.importorskip("imageio_ffmpeg")

TESTS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(TESTS)
SCRIPT = os.path.join(REPO, "examples", "run_ddpg.py")
EVALUATE = os.path.join(REPO, "examples", "evaluate.py")
SMALL_RUN = ["--epoch-length", "60", "--memory-start-size", "30", "--eval-samples", "20",
             "--batch-size", "16", "--ctx", "cpu", "--seed", "3", "--no-progress-bar",
             "--policy-hidden-sizes", "8", "--qfunc-hidden-sizes", "8", "8"]


def run(args, timeout=300, check=True):
    result = subprocess.run([sys.executable] + args, capture_output=True, text=True,
                            timeout=timeout, cwd=TESTS)
    if check:
        assert result.returncode == 0, result.stderr[-3000:]
    return result


def read_frames(path):
    return [np.asarray(frame) for frame in imageio.v2.mimread(path, memtest=False)]


# ---------------------------------------------------------------------------------------------
# the cart-pole's picture


def pixel(world_x, world_y, width=480, height=240):
    """(row, column) of a point of the world in a picture of the 6 x 3 m view
    x in [-3, 3], y in [-0.6, 2.4] (computed here from the view alone)."""
    return (int((2.4 - world_y) / 3.0 * height), int((world_x + 3.0) / 6.0 * width))


def colour_at(image, world_x, world_y):
    return tuple(int(v) for v in image[pixel(world_x, world_y)])


@pytest.mark.parametrize("x, theta", [(0.0, 0.0), (1.0, 0.15), (-1.5, -0.3), (0.4, 1.2)])
def test_cartpole_picture_draws_cart_and_pole_where_the_state_puts_them(x, theta):
    image = draw_cartpole([x, 5.0, theta, -3.0])
    assert image.shape == (240, 480, 3) and image.dtype == np.uint8
    cart_height = 3.0 / np.sqrt(12.0)
    white, grey, red = (255, 255, 255), (128, 128, 128), (220, 30, 30)
    assert colour_at(image, x, cart_height / 2) == (77, 128, 204)  # the cart's middle
    # the pole, 0.1 m wide, from the top of the cart; positive theta leans it toward -x
    for along in (0.3, 0.6, 0.95):
        point = (x - along * np.sin(theta), cart_height + along * np.cos(theta))
        assert colour_at(image, *point) == (204, 128, 51), along
    # beside the pole, on both sides (0.15 m from its axis, half way up): background
    for side in (-1, 1):
        point = (x - 0.5 * np.sin(theta) + side * 0.15 * np.cos(theta),
                 cart_height + 0.5 * np.cos(theta) + side * 0.15 * np.sin(theta))
        assert colour_at(image, *point) == white
    # the cart's width: 4 / sqrt(12) m = 1.155 m
    assert colour_at(image, x + 0.55, 0.2) != white and colour_at(image, x + 0.62, 0.2) == white
    assert colour_at(image, 2.6, -0.1) == grey  # the track
    for limit in (-2.4, 2.4):
        if abs(limit - x) > 0.7:
            assert colour_at(image, limit, 0.3) == red


def test_the_track_is_the_band_of_rows_from_height_0_down_to_minus_0_2():
    # row j's centre is at y = 2.4 - (j + 0.5) * 3 / 240: rows 192 (-0.00625) to 207
    # (-0.19375) lie in [-0.2, 0], rows 191 and 208 outside
    image = draw_cartpole([2.0, 0.0, 0.0, 0.0])
    grey = np.array([128, 128, 128], np.uint8)
    assert (image[192:208] == grey).all()
    assert not (image[191] == grey).all(axis=-1).any()
    assert not (image[208] == grey).all(axis=-1).any()


def test_pixels_whose_centres_lie_on_a_polygons_edges_are_painted():
    # in a 12 x 6 picture of the 6 x 3 m view, pixel centres are 0.5 m apart: column i at
    # x = -3 + 0.5 * (i + 0.5), row j at y = 2.4 - 0.5 * (j + 0.5); a box whose edges pass
    # through the centres of columns 3 and 8 and rows 1 and 4 paints those and all between
    image = np.zeros((6, 12, 3), np.uint8)
    left, right = -3.0 + 0.5 * 3.5, -3.0 + 0.5 * 8.5
    top, bottom = 2.4 - 0.5 * 1.5, 2.4 - 0.5 * 4.5
    cartpole._paint(image, 12, 6, cartpole._box(left, bottom, right, top), (7, 8, 9))
    expected = np.zeros((6, 12), bool)
    expected[1:5, 3:9] = True
    assert np.array_equal((image == (7, 8, 9)).all(axis=-1), expected)
    assert not image[~expected].any()


def test_a_picture_one_pixel_wide_is_the_middle_column_of_the_view():
    # its one column's centre is at x = 0; in 6 rows 0.5 m high, row j's centre is at
    # y = 2.15 - 0.5 * j: above the pole's top (1.866), on the pole (1.65, 1.15), on the cart
    # (0.65, 0.15) and below the track's bottom (-0.35)
    image = draw_cartpole([0.0, 0.0, 0.0, 0.0], width=1, height=6)
    white, pole, cart = (255, 255, 255), (204, 128, 51), (77, 128, 204)
    assert image.shape == (6, 1, 3)
    assert [tuple(int(v) for v in row[0]) for row in image] == [white, pole, pole, cart, cart,
                                                                white]


@pytest.mark.parametrize("x, theta", [(0.3, 0.4), (-1.1, -1.0)])
def test_the_hinge_is_an_octagon_of_radius_4_cm_at_the_middle_of_the_carts_top(x, theta):
    # a regular octagon of circumradius 0.04 m holds every point nearer its centre than its
    # inradius 0.04 * cos(pi / 8) = 0.03696 m and no point farther than 0.04 m
    image = draw_cartpole([x, 0.0, theta, 0.0])
    hinge = (x, 3.0 / np.sqrt(12.0))
    columns, rows = np.meshgrid(np.arange(480), np.arange(240))
    distance = np.hypot(-3.0 + (columns + 0.5) * 6.0 / 480 - hinge[0],
                        2.4 - (rows + 0.5) * 3.0 / 240 - hinge[1])
    dark = (image == (40, 40, 40)).all(axis=-1)
    assert (distance < 0.0369).sum() >= 20
    assert dark[distance < 0.0369].all()
    assert not dark[distance > 0.0401].any()


def pixel_centres(width=480, height=240):
    """World coordinates (x, y) of every pixel's centre in a picture of the 6 x 3 m view."""
    return np.meshgrid(-3.0 + (np.arange(width) + 0.5) * 6.0 / width,
                       2.4 - (np.arange(height) + 0.5) * 3.0 / height)


@pytest.mark.parametrize("x", [0.7, -1.3])
def test_an_upright_cart_pole_is_rllabs_boxes_pixel_for_pixel(x):
    # theta 0: the cart covers |px - x| <= 2 / sqrt(12), 0 <= py <= 3 / sqrt(12); the pole
    # |px - x| <= 0.05 from the cart's top up 1 m; the limit marks ||px| - 2.4| <= 0.02 up to
    # 0.5 m; the track -0.2 <= py <= 0; no pixel centre lies on one of these edges. Pixels
    # within 5 cm of the hinge (its octagon, checked above) are left out
    image = draw_cartpole([x, 1.0, 0.0, 2.0])
    px, py = pixel_centres()
    cart_height = 3.0 / np.sqrt(12.0)
    expected = np.empty((240, 480, 3), np.uint8)
    expected[:] = (255, 255, 255)
    expected[(py >= -0.2) & (py <= 0.0)] = (128, 128, 128)
    expected[(np.abs(np.abs(px) - 2.4) <= 0.02) & (py >= 0.0) & (py <= 0.5)] = (220, 30, 30)
    expected[(np.abs(px - x) <= 2.0 / np.sqrt(12.0)) & (py >= 0.0)
             & (py <= cart_height)] = (77, 128, 204)
    expected[(np.abs(px - x) <= 0.05) & (py >= cart_height)
             & (py <= cart_height + 1.0)] = (204, 128, 51)
    away = np.hypot(px - x, py - cart_height) > 0.05
    assert (~away).sum() < 60
    assert np.array_equal(image[away], expected[away])


@pytest.mark.parametrize("x", [4.0, -4.0])
def test_a_cart_beyond_the_view_leaves_the_track_and_the_limits(x):
    # the cart (1.155 m wide), the pole and the hinge all lie beyond x = +-3: no column of the
    # picture shows them. Column i's centre is at -3 + (i + 0.5) / 80, row j's at
    # 2.4 - (j + 0.5) / 80: the marks (|x| in [2.38, 2.42], y in [0, 0.5]) are columns 46-49
    # and 430-433 of rows 152-191, the track rows 192-207
    image = draw_cartpole([x, 0.0, 0.3, 0.0])
    expected = np.full((240, 480, 3), 255, np.uint8)
    expected[192:208] = (128, 128, 128)
    expected[152:192, 46:50] = expected[152:192, 430:434] = (220, 30, 30)
    assert np.array_equal(image, expected)


def test_a_picture_one_pixel_high_is_the_row_at_0_9_m():
    # its one row's centre is at y = 0.9, above the cart's top (0.866); in 12 columns 0.5 m
    # wide, column i's centre is at x = -2.75 + 0.5 * i. A cart at x = 0.25 puts its pole
    # (0.2 to 0.3) and its hinge (0.034 m below that point: within the octagon's inradius
    # 0.037) on column 6 only; the hinge is drawn last
    image = draw_cartpole([0.25, 0.0, 0.0, 0.0], width=12, height=1)
    white, hinge = (255, 255, 255), (40, 40, 40)
    assert image.shape == (1, 12, 3)
    assert [tuple(int(v) for v in colour) for colour in image[0]] == (
        [white] * 6 + [hinge] + [white] * 5)


def test_cartpole_picture_follows_the_episode():
    env = CartpoleEnv(render_mode="rgb_array")
    env.seed(0)
    env.reset()
    first = env.render()
    for _ in range(5):
        env.step([10.0])
    moved = env.render()
    assert first.shape == moved.shape == (240, 480, 3)
    assert not np.array_equal(first, moved)
    assert np.array_equal(moved, draw_cartpole(env.state))


def test_cartpole_render_modes():
    env = CartpoleEnv()
    with pytest.raises(RuntimeError, match="reset"):
        env.render()
    env.reset()
    assert env.render().startswith("x=")  # the text view, as before
    with pytest.raises(ValueError, match="rgb_array"):
        CartpoleEnv(render_mode="human")
    assert frame_rate(normalize(CartpoleEnv())) == 20


class Metadata(object):
    def __init__(self, render_fps):
        self.metadata = {"render_fps": render_fps}


def test_frame_rate_takes_any_rate_from_one_frame_a_second():
    assert frame_rate(Metadata(1)) == 1 and frame_rate(Metadata(12.0)) == 12
    assert frame_rate(Metadata(0.5)) == 30 and frame_rate(Metadata("20")) == 30


class GymLike(object):
    """Where GymEnv keeps the metadata: on the gymnasium environment it wraps."""

    def __init__(self, render_fps):
        self.env = Metadata(render_fps)


class NormalizedLike(object):
    def __init__(self, env):
        self.wrapped_env = env


def test_frame_rate_is_the_gymnasium_environments_own():
    # Hopper's 125 frames a second (a step of 4 x 0.002 s), not the default 30
    assert frame_rate(GymLike(125)) == 125
    assert frame_rate(NormalizedLike(GymLike(125))) == 125
    assert frame_rate(NormalizedLike(Metadata(20))) == 20


# ---------------------------------------------------------------------------------------------
# writing videos


def coloured_frames(n, height=24, width=32):
    return [np.full((height, width, 3), (40 * i % 256, 255 - 30 * i, 100), dtype=np.uint8)
            for i in range(n)]


def test_mp4_is_read_back_with_its_frames(tmp_path):
    frames = coloured_frames(7)
    path = write_video(frames, str(tmp_path / "a.mp4"), fps=10)
    back = read_frames(path)
    assert len(back) == 7 and back[0].shape == (24, 32, 3)
    for written, read in zip(frames, back):  # lossy, but the colours survive
        assert np.abs(read.astype(int) - written.astype(int)).mean() < 12
    assert imageio.v2.get_reader(path).get_meta_data()["fps"] == 10


def test_mp4_writing_prints_none_of_ffmpegs_warnings(tmp_path, capfd):
    # large frames at a MuJoCo environment's rate (Hopper's 125 frames a second) make ffmpeg
    # warn that it cannot estimate the input's rate; it is told to print errors only (its log
    # lines name their source: "[in#0/rawvideo @ 0x...] ...")
    frames = [np.zeros((1000, 1000, 3), np.uint8)] * 2
    assert len(read_frames(write_video(frames, str(tmp_path / "a.mp4"), 125))) == 2
    err = capfd.readouterr().err
    assert not [line for line in err.splitlines() if " @ 0x" in line], err


def test_odd_sizes_are_padded_for_mp4_only(tmp_path):
    frames = coloured_frames(3, height=25, width=31)
    assert read_frames(write_video(frames, str(tmp_path / "a.mp4"), 5))[0].shape == (26, 32, 3)
    gif = read_frames(write_video(frames, str(tmp_path / "a.gif"), 5))
    assert len(gif) == 3 and gif[0].shape[:2] == (25, 31)
    assert np.array_equal(gif[1][..., :3], frames[1])  # a GIF of few colours is exact


def test_video_errors(tmp_path, monkeypatch):
    assert video_problem("a.mp4") is None and video_problem("b.GIF") is None
    assert video_problem("a.avi") == "a video file ends in .gif or .mp4, not '.avi'"
    assert video_problem("out") == "a video file ends in .gif or .mp4, not 'out'"
    with pytest.raises(VideoError) as error:
        write_video([], str(tmp_path / "a.mp4"), 10)
    assert str(error.value) == "no frames to write"
    with pytest.raises(VideoError) as error:  # refused before anything is written
        write_video(coloured_frames(2), str(tmp_path / "a.avi"), 10)
    assert str(error.value) == "a video file ends in .gif or .mp4, not '.avi'"
    assert not os.path.exists(str(tmp_path / "a.avi"))
    with pytest.raises(VideoError) as error:
        write_video(coloured_frames(1) + coloured_frames(2, 8, 8), str(tmp_path / "b.gif"), 10)
    assert str(error.value) == "the frames differ in size ((24, 32, 3) and (8, 8, 3))"
    with pytest.raises(VideoError, match="H x W x 3"):
        write_video([np.zeros((4, 4))], str(tmp_path / "c.gif"), 10)
    monkeypatch.setitem(sys.modules, "imageio_ffmpeg", None)  # as if not installed
    assert video_problem("a.mp4") == ("writing .mp4 files needs imageio_ffmpeg, which is not "
                                      "installed: " + VIDEO_INSTALL)
    assert video_problem("a.gif") is None
    with pytest.raises(VideoError, match="needs imageio_ffmpeg"):
        write_video(coloured_frames(2), str(tmp_path / "d.mp4"), 10)
    assert not os.path.exists(str(tmp_path / "d.mp4"))


@pytest.mark.parametrize("shape, padded", [((25, 32), (26, 32)), ((24, 27), (24, 28)),
                                           ((25, 27), (26, 28)), ((24, 32), (24, 32)),
                                           ((27, 32), (28, 32)), ((23, 30), (24, 30))])
def test_frames_are_made_even_by_repeating_their_last_row_and_column(shape, padded):
    frame = (np.arange(shape[0] * shape[1] * 4).reshape(shape + (4,)) % 251).astype(np.uint8)
    (plain,) = rgb_frames([frame])
    assert np.array_equal(plain, frame[..., :3])  # the alpha channel dropped, nothing padded
    (even,) = rgb_frames([frame], even=True)
    rows = np.minimum(np.arange(padded[0]), shape[0] - 1)
    columns = np.minimum(np.arange(padded[1]), shape[1] - 1)
    assert even.shape == padded + (3,) and even.dtype == np.uint8
    assert np.array_equal(even, frame[rows][:, columns, :3])


def test_frames_are_refused_whole_and_converted_to_uint8():
    for shape in ((4, 4), (4, 4, 2), (4, 4, 5), (2, 4, 4, 3)):
        with pytest.raises(VideoError) as error:
            rgb_frames([np.zeros((4, 4, 3), np.uint8), np.zeros(shape, np.uint8)])
        assert str(error.value) == "a frame is an H x W x 3 (or 4) array, not shape %s" % (
            shape,)
    # frames built with numpy's default integer or float dtypes
    (frame,) = rgb_frames([np.full((2, 3, 3), 200)])
    assert frame.dtype == np.uint8 and (frame == 200).all()
    (frame,) = rgb_frames([np.full((2, 3, 4), 17.0)])
    assert frame.dtype == np.uint8 and frame.shape == (2, 3, 3) and (frame == 17).all()


def test_video_problem_names_every_missing_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "imageio", None)
    monkeypatch.setitem(sys.modules, "imageio_ffmpeg", None)
    assert video_problem("a.mp4") == ("writing .mp4 files needs imageio, imageio_ffmpeg, "
                                      "which are not installed: " + VIDEO_INSTALL)
    monkeypatch.setitem(sys.modules, "PIL", None)
    assert video_problem("a.gif") == ("writing .gif files needs PIL, which is not "
                                      "installed: " + VIDEO_INSTALL)
    assert video_problem(os.path.join("some", "where")) == (
        "a video file ends in .gif or .mp4, not 'where'")


def gif_frames(data):
    """The frames of a GIF as RGB arrays, with each one's duration in ms (Pillow)."""
    from PIL import Image
    picture = Image.open(io.BytesIO(data))
    frames, durations = [], []
    for index in range(picture.n_frames):
        picture.seek(index)
        frames.append(np.asarray(picture.convert("RGB")))
        durations.append(picture.info.get("duration"))
    return frames, durations


def test_gif_frames_of_few_colours_are_exact():
    frames = coloured_frames(4)
    checks = np.indices((6, 10)).sum(axis=0) % 2  # a black and white checkerboard
    frames.append(np.repeat(checks[..., None] * 255, 3, axis=-1).astype(np.uint8))
    frames = [np.asarray(frame)[:6, :10] for frame in frames]
    back, durations = gif_frames(gif_bytes(frames, 10))
    assert len(back) == 5 and durations == [100] * 5
    for written, read in zip(frames, back):
        assert np.array_equal(read, written)


def test_gif_frames_are_quantised_one_by_one_by_pillows_fast_octree():
    # each frame gets its own palette of 256 colours, chosen by Pillow's fast octree (the
    # fastest of its quantisers), and each pixel the palette colour its own colour maps to:
    # equal pixels stay equal. A 24 x 32 block of 768 random colours,
    # tiled 2 x 2, then a frame of 3 colours: exact with its own palette
    from PIL import Image
    rng = np.random.RandomState(0)
    noise = np.tile(rng.randint(0, 256, (24, 32, 3)).astype(np.uint8), (2, 2, 1))
    few = np.zeros((48, 64, 3), np.uint8)
    few[:, 20:] = (250, 10, 10)
    few[:, 40:] = (10, 250, 10)
    back, durations = gif_frames(gif_bytes([noise, few], 20))
    assert durations == [50, 50]
    expected = np.asarray(Image.fromarray(noise).quantize(
        256, method=Image.Quantize.FASTOCTREE).convert("RGB"))
    assert np.array_equal(back[0], expected)
    assert len(np.unique(back[0].reshape(-1, 3), axis=0)) == 256
    assert np.array_equal(back[0][:24, :32], back[0][24:, 32:])
    assert np.abs(back[0].astype(int) - noise).max() < 64
    assert np.array_equal(back[1], few)


@pytest.mark.parametrize("fps, duration", [(20, 50), (30, 30), (51, 20), (3, 330), (1, 1000)])
def test_gif_frames_last_the_frame_rates_period_in_whole_centiseconds(fps, duration):
    # a GIF counts in hundredths of a second: 1000 / fps ms rounded, then cut to 10 ms
    # (51 frames a second: 19.6 ms rounds to 20, 2 centiseconds)
    frames = coloured_frames(3, 4, 4)
    assert gif_frames(gif_bytes(frames, fps))[1] == [duration] * 3


def test_scaling_keeps_at_least_one_row():
    # 40 x 2 pixels to 8 wide: 2 * 8 / 40 = 0.4 rows rounds to 0, kept at 1; each pixel
    # averages a block of 5 columns and 2 rows (values 30 * block and 30 * block + 10)
    frame = np.zeros((2, 40, 3), np.uint8)
    frame[:] = (30 * (np.arange(40) // 5))[None, :, None]
    frame[1] += 10
    (scaled,) = scale_frames([frame], 8)
    assert scaled.shape == (1, 8, 3)
    assert scaled[0, :, 0].tolist() == [30 * block + 5 for block in range(8)]


def test_gif_bytes_and_scaling():
    frames = [np.zeros((240, 480, 3), np.uint8), np.full((240, 480, 4), 255, np.uint8)]
    assert gif_bytes(frames, 20)[:6] == b"GIF89a"
    # the NETSCAPE2.0 block's loop count, 0: the animation repeats forever
    assert b"NETSCAPE2.0\x03\x01\x00\x00\x00" in gif_bytes(frames, 20)
    scaled = scale_frames(frames, 120)
    assert [frame.shape for frame in scaled] == [(60, 120, 3), (60, 120, 3)]
    assert scaled[1].min() == 255 and scaled[0].max() == 0
    assert scale_frames(frames, None) == frames


def test_scaling_averages_the_area_each_pixel_covers():
    # scaled 4 times down, a 1-pixel black line on white leaves its 4 x 4 block at
    # 255 * 12 / 16 = 191.25 and the next block white, wherever it lies in its block
    for column in range(4):
        frame = np.full((4, 8, 3), 255, np.uint8)
        frame[:, column] = 0
        (scaled,) = scale_frames([frame], 2)
        assert scaled[..., 0].tolist() == [[191, 255]], column


# ---------------------------------------------------------------------------------------------
# MuJoCo's backend


def test_backend_choice_keeps_the_users_and_prefers_a_gpu():
    assert choose_mujoco_gl({"MUJOCO_GL": "glfw"}) == "glfw"
    environ = {}
    assert choose_mujoco_gl(environ, gpu=True) == "egl"
    assert environ == {"MUJOCO_GL": "egl", "PYOPENGL_PLATFORM": "egl",
                       "SDL_VIDEODRIVER": "dummy"}
    environ = {"DISPLAY": ":0"}
    assert choose_mujoco_gl(environ, gpu=False) == "osmesa"
    assert environ == {"DISPLAY": ":0", "MUJOCO_GL": "osmesa", "PYOPENGL_PLATFORM": "osmesa"}
    environ = {"WAYLAND_DISPLAY": "wayland-0"}  # a Wayland display: SDL keeps its driver
    assert choose_mujoco_gl(environ, gpu=False) == "osmesa"
    assert "SDL_VIDEODRIVER" not in environ
    # a driver counts when its device file and its EGL library are both there
    assert backend.gpu_driver_present(lambda name: "libEGL_nvidia.so.0",
                                      lambda path: path == "/dev/nvidia0")
    libraries = {"EGL_nvidia": "libEGL_nvidia.so.0"}  # the library NVIDIA's EGL is named
    assert backend.gpu_driver_present(libraries.get, lambda path: True)
    assert not backend.gpu_driver_present(lambda name: None, lambda path: True)
    assert not backend.gpu_driver_present(lambda name: "libEGL_nvidia.so.0",
                                          lambda path: False)


def test_backend_choice_sets_the_process_environment_from_the_driver_found(monkeypatch):
    for name in ("MUJOCO_GL", "PYOPENGL_PLATFORM", "SDL_VIDEODRIVER", "DISPLAY",
                 "WAYLAND_DISPLAY"):
        monkeypatch.setenv(name, "x")  # so that the test's end restores it, set or not
        monkeypatch.delenv(name)
    monkeypatch.setenv("DISPLAY", ":1")
    monkeypatch.setattr(backend, "gpu_driver_present", lambda: True)
    assert choose_mujoco_gl() == "egl"
    assert os.environ["MUJOCO_GL"] == os.environ["PYOPENGL_PLATFORM"] == "egl"
    assert "SDL_VIDEODRIVER" not in os.environ
    monkeypatch.setattr(backend, "gpu_driver_present", lambda: False)
    environ = {}
    assert choose_mujoco_gl(environ) == "osmesa"
    assert environ == {"MUJOCO_GL": "osmesa", "PYOPENGL_PLATFORM": "osmesa",
                       "SDL_VIDEODRIVER": "dummy"}
    assert choose_mujoco_gl() == "egl"  # now set, so kept


class Holder(object):
    """A plain object with the given attributes (no ``unwrapped`` unless given)."""

    def __init__(self, **attributes):
        self.__dict__.update(attributes)


def test_mujoco_cameras_are_the_models_camera_names():
    pytest.importorskip("mujoco")
    cheetah = GymEnv("HalfCheetah-v5").env  # gymnasium's TimeLimit around the MuJoCo env
    assert not hasattr(cheetah, "model")  # the wrapper does not pass the model on
    assert backend.mujoco_cameras(cheetah) == ["track"]
    assert backend.mujoco_cameras(cheetah.unwrapped) == ["track"]
    model = cheetah.unwrapped.model
    assert model.ncam == 1
    assert backend.mujoco_cameras(Holder(model=model)) == ["track"]  # no `unwrapped`
    assert backend.mujoco_cameras(GymEnv("Reacher-v5").env) == []  # a model without cameras
    assert backend.mujoco_cameras(GymEnv("Pendulum-v1").env) is None
    assert backend.mujoco_cameras(object()) is None
    assert backend.mujoco_cameras(Holder(model=None)) is None
    assert backend.mujoco_cameras(Holder(unwrapped=Holder(model="a model of another kind"),
                                         model=model)) is None


class NoOpenGL(object):
    def render(self):
        raise ImportError("('Unable to load OpenGL library', 'OSMesa: cannot open shared "
                          "object file')")


def test_a_rendering_failure_says_what_to_install():
    with pytest.raises(evaluate.RenderError) as error:
        evaluate.render_frame(NoOpenGL())
    assert str(error.value).endswith(RENDER_INSTALL)
    env = CartpoleEnv()  # renders text, not frames
    env.reset()
    with pytest.raises(evaluate.RenderError, match="does not render rgb_array frames"):
        evaluate.render_frame(env)


def mujoco_rendering_problem():
    """Why MuJoCo cannot render here (then the test says so when it skips), or None."""
    code = ("from ddpg.rendering import choose_mujoco_gl; choose_mujoco_gl(); "
            "from ddpg.envs import GymEnv; env = GymEnv('HalfCheetah-v5', "
            "render_mode='rgb_array', width=64, height=48); env.reset(); env.render()")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=300)
    if result.returncode:
        return (result.stderr.strip().splitlines() or ["no output"])[-1]
    return None


def test_mujoco_episode_video(tmp_path):
    pytest.importorskip("mujoco")
    problem = mujoco_rendering_problem()
    if problem:
        pytest.skip("MuJoCo cannot render on this machine (%s): %s" % (problem, RENDER_INSTALL))
    folder = str(tmp_path / "hc")
    run([SCRIPT, "--env", "HalfCheetah-v5", "--n-epochs", "1", "--max-path-length", "12",
         "--log-dir", folder, "--video-every", "1", "--video-camera", "track"] + SMALL_RUN)
    back = read_frames(os.path.join(folder, "videos", "epoch_0.mp4"))
    assert len(back) == 13 and back[0].shape == (480, 480, 3)
    assert back[0].std() > 10  # a picture, not a blank frame
    params = os.path.join(folder, "params")
    views = {}
    for camera in (None, "track"):
        out = str(tmp_path / ("hc-%s.gif" % camera))
        run([EVALUATE, params, "--episodes", "1", "--video", out, "--video-width", "96",
             "--max-path-length", "5"] + (["--camera", camera] if camera else []))
        views[camera] = read_frames(out)
        assert [frame.shape[:2] for frame in views[camera]] == [(96, 96)] * 6
    # the same episode seen from the model's tracking camera, not gymnasium's default view
    assert np.abs(views[None][0].astype(int) - views["track"][0].astype(int)).mean() > 5
    result = run([EVALUATE, params, "--video", str(tmp_path / "x.gif"), "--camera", "side"],
                 check=False)
    assert result.returncode == 2 and result.stderr.strip().endswith(
        "--camera side: HalfCheetah-v5 has no camera 'side'; its cameras: track")


# ---------------------------------------------------------------------------------------------
# ddpg-evaluate --video


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    """One-epoch runs on the cart-pole and on Pendulum-v1."""
    folder = tmp_path_factory.mktemp("videos")
    runs = {}
    for env in ("cartpole", "Pendulum-v1"):
        runs[env] = str(folder / env)
        run([SCRIPT, "--env", env, "--n-epochs", "1", "--max-path-length", "15",
             "--log-dir", runs[env]] + SMALL_RUN)
    return runs


@pytest.mark.parametrize("env, extension, size", [("Pendulum-v1", ".mp4", (500, 500)),
                                                  ("cartpole", ".gif", (240, 480))])
def test_evaluate_video_records_every_episode_and_changes_no_return(checkpoints, tmp_path,
                                                                    env, extension, size):
    params = os.path.join(checkpoints[env], "params")
    common = [EVALUATE, params, "--episodes", "3", "--max-path-length", "6"]
    video = str(tmp_path / ("episodes" + extension))
    with_video = run(common + ["--video", video, "--json", str(tmp_path / "a.json")])
    run(common + ["--json", str(tmp_path / "b.json")])
    frames = read_frames(video)
    with open(str(tmp_path / "a.json")) as a, open(str(tmp_path / "b.json")) as b:
        recorded, plain = json.load(a), json.load(b)
    lengths = recorded["mean_length"] * 3
    assert len(frames) == lengths + 3  # each episode: its first observation and every step
    assert frames[0].shape[:2] == size
    assert recorded["returns"] == plain["returns"]
    assert "wrote %d frames to %s" % (len(frames), video) in with_video.stdout


FAKE_OPENGL = """
class HalfMadeViewer(object):
    def __init__(self):
        self.context = make_context()

    def __del__(self):
        raise AttributeError("'HalfMadeViewer' object has no attribute 'context'")


def make_context():
    raise AttributeError("'NoneType' object has no attribute 'glGetError'")


def make_env(*args, **kwargs):
    HalfMadeViewer()
"""


def test_evaluate_without_opengl_says_nothing_renders_and_what_to_install(
        checkpoints, tmp_path, monkeypatch, capsys):
    """As MuJoCo fails where OSMesa is missing: inside PyOpenGL, with a message that names
    no OpenGL, leaving a half-made viewer whose __del__ fails."""
    import gc
    import importlib.util
    from ddpg.experiment import build
    from ddpg.experiment.script import run_script
    (tmp_path / "OpenGL").mkdir()
    (tmp_path / "OpenGL" / "fake_gl.py").write_text(FAKE_OPENGL)
    spec = importlib.util.spec_from_file_location("fake_gl", str(tmp_path / "OpenGL" /
                                                                  "fake_gl.py"))
    fake_gl = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fake_gl)
    monkeypatch.setattr(build, "make_env", fake_gl.make_env)
    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    video = str(tmp_path / "out.mp4")
    with pytest.raises(SystemExit) as exit_info:
        run_script(evaluate.main, [os.path.join(checkpoints["Pendulum-v1"], "params"),
                                   "--video", video], prog="ddpg-evaluate")
    code = exit_info.value.code
    del exit_info  # it holds the errors, and they what failed
    gc.collect()
    assert code == 2 and unraisable == []
    assert capsys.readouterr().err == (
        "ddpg-evaluate: error: --video %s: nothing could render the environment's frames "
        "(AttributeError: 'NoneType' object has no attribute 'glGetError'): %s\n"
        % (video, RENDER_INSTALL))
    assert "apt-get install libosmesa6" in RENDER_INSTALL
    assert not os.path.exists(video)


def test_evaluate_video_errors_name_the_flag(checkpoints, tmp_path):
    params = os.path.join(checkpoints["cartpole"], "params")
    result = run([EVALUATE, params, "--video", str(tmp_path / "a.webm")], check=False)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().endswith("--video %s: a video file ends in .gif or .mp4, not "
                                          "'.webm'" % (tmp_path / "a.webm"))
    assert not os.path.exists(str(tmp_path / "a.webm"))
    result = run([EVALUATE, params, "--video-width", "100"], check=False)
    assert result.returncode == 2 and "--video-width scales the frames of --video" in result.stderr
    result = run([EVALUATE, params, "--camera", "track"], check=False)
    assert result.returncode == 2 and "--camera chooses the view of --video" in result.stderr
    for env, reason in (("cartpole", "the cart-pole has no cameras"),
                        ("Pendulum-v1", "Pendulum-v1 is not a MuJoCo environment")):
        result = run([EVALUATE, os.path.join(checkpoints[env], "params"), "--video",
                      str(tmp_path / "a.gif"), "--camera", "track"], check=False)
        assert result.returncode == 2 and "--camera track: " + reason in result.stderr
    result = run([SCRIPT, "--n-epochs", "1", "--log-dir", str(tmp_path / "run"), "--video-every",
                  "1", "--video-camera", "track"] + SMALL_RUN, check=False)
    assert result.returncode == 2 and result.stderr.strip().endswith(
        "--video-camera track: the cart-pole has no cameras: its picture is drawn from the state")
    assert not os.path.exists(str(tmp_path / "run"))  # refused before the folder is made


# ---------------------------------------------------------------------------------------------
# ddpg-train --video-every


def rows_without_time(path):
    with open(path) as handle:
        return [{key: value for key, value in row.items() if key != "Time"}
                for row in csv.DictReader(handle)]


def test_train_video_every_records_episodes_and_trains_the_same(tmp_path):
    pytest.importorskip("tensorboardX")
    event_accumulator = pytest.importorskip(
        "tensorboard.backend.event_processing.event_accumulator")
    with_videos, plain = str(tmp_path / "videos"), str(tmp_path / "plain")
    common = [SCRIPT, "--n-epochs", "4", "--max-path-length", "30"] + SMALL_RUN
    run(common + ["--log-dir", with_videos, "--video-every", "2", "--tensorboard"])
    run(common + ["--log-dir", plain])
    assert sorted(os.listdir(os.path.join(with_videos, "videos"))) == ["epoch_1.mp4",
                                                                        "epoch_3.mp4"]
    for name in ("epoch_1.mp4", "epoch_3.mp4"):
        frames = read_frames(os.path.join(with_videos, "videos", name))
        assert 2 <= len(frames) <= 31 and frames[0].shape == (240, 480, 3)
    assert rows_without_time(os.path.join(with_videos, "progress.csv")) == rows_without_time(
        os.path.join(plain, "progress.csv"))
    events = event_accumulator.EventAccumulator(with_videos, size_guidance={"images": 0})
    events.Reload()
    images = events.Images("video")
    assert [image.step for image in images] == [120, 240]  # the environment steps
    assert all(image.encoded_image_string[:6] == b"GIF89a" and
               (image.width, image.height) == (480, 240) for image in images)


def test_video_every_is_refused_where_it_cannot_work(monkeypatch):
    args = argparse.Namespace(video_every=2, log_dir=None, env="cartpole")
    with pytest.raises(UsageError, match="--no-log-dir"):
        epoch_videos.epoch_videos(args, seed=1)
    args.log_dir, args.video_every = "somewhere", -1
    with pytest.raises(UsageError, match="--video-every must be a positive"):
        epoch_videos.epoch_videos(args, seed=1)
    args.video_every = 0
    assert epoch_videos.epoch_videos(args, seed=1) is None
    args.video_every = 3
    monkeypatch.setitem(sys.modules, "imageio", None)
    with pytest.raises(UsageError) as error:
        epoch_videos.epoch_videos(args, seed=1)
    assert str(error.value).endswith(VIDEO_INSTALL) and "--video-every" in str(error.value)


def test_chained_callbacks_run_in_order():
    calls = []
    chained = epoch_videos.chain_callbacks(None, lambda algo, epoch: calls.append(("a", epoch)),
                                           lambda algo, epoch: calls.append(("b", epoch)))
    chained(None, 4)
    assert calls == [("a", 4), ("b", 4)]
    assert epoch_videos.chain_callbacks(None, None) is None


def test_gym_frame_rate():
    assert frame_rate(normalize(GymEnv("Pendulum-v1"))) == 30
    assert frame_rate(object()) == 30


def test_sweeps_refuse_video_options():
    from ddpg.experiment.search_space import check_space
    for name in ("video_every", "video-camera"):
        with pytest.raises(ValueError) as error:
            check_space({name: 5})
        assert str(error.value) == ("option %s cannot be set in a sweep: trials record no "
                                    "videos (ddpg-train --video-every records one run's)"
                                    % name.replace("-", "_"))
