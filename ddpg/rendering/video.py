"""Frames (``H x W x 3`` uint8 arrays) to a video file: MP4 through imageio and the ffmpeg
that the ``imageio-ffmpeg`` wheel carries, GIF through Pillow.

Both come with the ``video`` extra (``pip install "mxnet-ddpg[video]"``), with pygame,
which gymnasium's classic-control environments draw with. :func:`video_problem` says before
a run whether a file can be written, so that a missing package is a one-line error at the
start instead of a failure after training.
"""
import io
import os

import numpy as np

__all__ = ["VIDEO_INSTALL", "VIDEO_FORMATS", "VideoError", "video_problem", "write_video",
           "gif_bytes", "rgb_frames", "scale_frames", "frame_rate", "DEFAULT_FPS"]

#: How to get the packages that write videos.
VIDEO_INSTALL = 'pip install "mxnet-ddpg[video]"'

#: Frames a second when the environment does not say.
DEFAULT_FPS = 30

#: The file extensions written, with the packages each needs.
VIDEO_FORMATS = {".mp4": ("imageio", "imageio_ffmpeg"), ".gif": ("PIL",)}


class VideoError(RuntimeError):
    """A video cannot be written (a missing package, an unknown format, no frames)."""


def _extension(path):
    return os.path.splitext(str(path))[1].lower()


def video_problem(path):
    """Why ``path`` cannot be written as a video here (one line naming the fix), or None."""
    extension = _extension(path)
    if extension not in VIDEO_FORMATS:
        return ("a video file ends in %s, not %r"
                % (" or ".join(sorted(VIDEO_FORMATS)), extension or os.path.basename(path)))
    missing = []
    for module in VIDEO_FORMATS[extension]:
        try:
            __import__(module)
        except ImportError:
            missing.append(module)
    if missing:
        return ("writing %s files needs %s, which %s not installed: %s"
                % (extension, ", ".join(missing), "is" if len(missing) == 1 else "are",
                   VIDEO_INSTALL))
    return None


def rgb_frames(frames, even=False):
    """``frames`` as uint8 RGB arrays of one size; with ``even``, of even height and width
    (H.264's 4:2:0 colour needs both even: an odd last row or column is repeated)."""
    images = []
    for frame in frames:
        image = np.asarray(frame)
        if image.ndim != 3 or image.shape[-1] not in (3, 4):
            raise VideoError("a frame is an H x W x 3 (or 4) array, not shape %s"
                             % (image.shape,))
        images.append(np.ascontiguousarray(image[..., :3], dtype=np.uint8))
    if not images:
        raise VideoError("no frames to write")
    if any(image.shape != images[0].shape for image in images):
        raise VideoError("the frames differ in size (%s and %s)"
                         % (images[0].shape, next(image.shape for image in images
                                                  if image.shape != images[0].shape)))
    height, width = images[0].shape[:2]
    if even and (height % 2 or width % 2):
        pad = ((0, height % 2), (0, width % 2), (0, 0))
        images = [np.pad(image, pad, mode="edge") for image in images]
    return images


def write_video(frames, path, fps):
    """Write ``frames`` to ``path`` (``.mp4`` or ``.gif``) at ``fps`` frames a second;
    a :class:`VideoError` when it cannot be written."""
    problem = video_problem(path)
    if problem:
        raise VideoError(problem)
    if _extension(path) == ".gif":
        data = gif_bytes(frames, fps)
        with open(path, "wb") as handle:
            handle.write(data)
        return path
    images = rgb_frames(frames, even=True)
    import imageio  # pylint: disable=import-outside-toplevel
    # macro_block_size=1: imageio would otherwise scale frames to multiples of 16
    writer = imageio.get_writer(path, fps=fps, codec="libx264", macro_block_size=1,
                                ffmpeg_log_level="error")
    try:
        for image in images:
            writer.append_data(image)
    finally:
        writer.close()
    return path


def gif_bytes(frames, fps):
    """The frames as a looping animated GIF, in memory (Pillow).

    Each frame gets its own palette of up to 256 colours from Pillow's fast octree
    quantiser, which also makes rendered episodes smaller than the median-cut palette Pillow
    uses by default (150 frames of HalfCheetah at 160 x 160: 585 KB against 870 KB)."""
    from PIL import Image  # pylint: disable=import-outside-toplevel
    pictures = [Image.fromarray(image).quantize(256, method=Image.Quantize.FASTOCTREE)
                for image in rgb_frames(frames)]
    buffer = io.BytesIO()
    pictures[0].save(buffer, format="GIF", save_all=True, append_images=pictures[1:],
                     duration=max(1, int(round(1000.0 / fps))), loop=0)
    return buffer.getvalue()


def scale_frames(frames, width):
    """``frames`` scaled to ``width`` pixels wide, keeping their aspect ratio (Pillow's
    area averaging, which keeps thin lines visible); unchanged when ``width`` is None."""
    if width is None:
        return list(frames)
    from PIL import Image  # pylint: disable=import-outside-toplevel
    images = rgb_frames(frames)
    height, old_width = images[0].shape[:2]
    size = (int(width), max(1, int(round(height * float(width) / old_width))))
    return [np.asarray(Image.fromarray(image).resize(size, Image.BOX)) for image in images]


def frame_rate(env):
    """Frames a second that play ``env``'s episodes at their real speed: the
    ``metadata["render_fps"]`` of the environment ``normalize`` wraps (gymnasium's, or the
    cart-pole's one frame per 0.05 s step), else :data:`DEFAULT_FPS`."""
    inner = getattr(env, "wrapped_env", env)
    metadata = getattr(getattr(inner, "env", inner), "metadata", None) or {}
    fps = metadata.get("render_fps")
    return int(fps) if isinstance(fps, (int, float)) and fps >= 1 else DEFAULT_FPS
