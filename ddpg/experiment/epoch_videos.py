"""``ddpg-train --video-every N``: a video of one deterministic episode after every N-th
epoch, in the run folder (``videos/epoch_N.mp4``) and, with ``--tensorboard``, as an
animated image in TensorBoard (tag ``video``, at the run's environment steps).

The episode runs on an environment of its own, made like the training one but rendering
``rgb_array`` frames, and seeded the same way before every video (the run's evaluation
seed): every video starts from the same state, so videos of different epochs differ by
the policy alone. Before each episode the training environment's observation statistics
are copied in, as for the run's evaluation. Nothing the run draws from a random generator
is touched, so a run with videos trains exactly as one without; without the flag nothing
here runs at all.
"""
import os

from ddpg import options
from ddpg.envs import seed_env
from ddpg.experiment.build import build_env
from ddpg.experiment.evaluate import RenderError, render_frame, run_episode
from ddpg.experiment.script import UsageError
from ddpg.rendering import frame_rate, video_problem, write_video

__all__ = ["EpochVideos", "epoch_videos", "chain_callbacks", "VIDEO_FOLDER"]

#: The run folder's subfolder for the videos.
VIDEO_FOLDER = "videos"


class EpochVideos(object):
    """The epoch callback that records the videos (see the module's docstring)."""

    def __init__(self, args, every, seed):
        self.every = int(every)
        self.seed = int(seed)
        self.env, self.max_path_length = build_env(
            args, render_mode="rgb_array", camera=getattr(args, "video_camera", None),
            camera_flag="--video-camera", render_flag="--video-every")
        self.fps = frame_rate(self.env)
        self.folder = os.path.join(args.log_dir, VIDEO_FOLDER)

    def check(self):
        """Render one frame now, so that a machine where nothing renders is told before
        training (a :class:`UsageError` naming what to install)."""
        seed_env(self.env, self.seed)
        self.env.reset()
        try:
            render_frame(self.env)
        except RenderError as error:
            raise UsageError("--video-every: %s" % error) from error
        return self

    def record(self, algo):
        """The frames of one deterministic episode of ``algo``'s current policy."""
        options.sync_running_statistics(algo.env, self.env)
        seed_env(self.env, self.seed)
        frames = []
        run_episode(self.env, algo.policy, self.max_path_length, frames)
        return frames

    def after_epoch(self, algo, epoch):
        """After every ``every``-th epoch: ``videos/epoch_<epoch>.mp4`` (epochs count from 0,
        as in progress.csv) and the TensorBoard image."""
        if (epoch + 1) % self.every:
            return
        frames = self.record(algo)
        os.makedirs(self.folder, exist_ok=True)
        path = os.path.join(self.folder, "epoch_%d.mp4" % epoch)
        # written under another name, then renamed: a run killed while encoding leaves no
        # half-written epoch_N.mp4
        partial = os.path.join(self.folder, ".epoch_%d.partial.mp4" % epoch)
        write_video(frames, partial, self.fps)
        os.replace(partial, path)
        algo.logger.record_animation("video", frames, self.fps, algo.total_env_steps)
        algo.logger.log("Recorded %d frames of a deterministic episode in %s" % (len(frames), path))


def epoch_videos(args, seed):
    """The :class:`EpochVideos` callback ``--video-every`` asks for, checked, or None;
    a :class:`UsageError` when videos cannot be written here."""
    every = getattr(args, "video_every", 0) or 0
    if not every:
        return None
    if every < 0:
        raise UsageError("--video-every must be a positive number of epochs (0: no videos)")
    if not args.log_dir:
        raise UsageError("--video-every writes its videos into the run's folder: leave out "
                         "--no-log-dir")
    problem = video_problem("epoch.mp4")
    if problem:
        raise UsageError("--video-every: %s" % problem)
    return EpochVideos(args, every, seed).check()


def chain_callbacks(*callbacks):
    """One epoch callback calling each of ``callbacks`` (None ones left out) in turn."""
    present = [callback for callback in callbacks if callback is not None]
    if not present:
        return None

    def after_epoch(algo, epoch):
        for callback in present:
            callback(algo, epoch)
    return after_epoch
