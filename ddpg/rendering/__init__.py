"""Pictures of episodes: the rendering backend MuJoCo uses on a machine without a screen
(:mod:`~ddpg.rendering.backend`), the cart-pole's own renderer
(:mod:`~ddpg.rendering.cartpole`) and writing frames to video files
(:mod:`~ddpg.rendering.video`)."""
from .backend import (RENDER_INSTALL, choose_mujoco_gl, mujoco_cameras, opengl_failure,
                      opengl_problem)
from .cartpole import draw_cartpole
from .video import (VIDEO_INSTALL, VideoError, frame_rate, gif_bytes, scale_frames,
                    video_problem, write_video)

__all__ = ["RENDER_INSTALL", "choose_mujoco_gl", "mujoco_cameras", "opengl_failure",
           "opengl_problem", "draw_cartpole",
           "VIDEO_INSTALL", "VideoError", "frame_rate", "gif_bytes", "scale_frames",
           "video_problem", "write_video"]
