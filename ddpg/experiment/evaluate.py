"""``ddpg-evaluate`` (``examples/evaluate.py``): a saved policy's deterministic episodes.

    ddpg-evaluate runs/pendulum/params --episodes 10
    ddpg-evaluate runs/pendulum/params --episodes 3 --video pendulum.mp4
    ddpg-evaluate runs/pendulum/params --episodes 1 --render pendulum.gif

Only the policy is loaded (``policy.params``; the replay memory and optimiser state are not
read), so evaluating is quick whatever the checkpoint's size. The environment and the policy
network are rebuilt from the checkpoint: the arguments ``ddpg-train`` saved in its manifest,
or the description of the environment that ``DDPG.save`` records (a gymnasium id or the
cart-pole); ``--env`` names it for a checkpoint that cannot say (a custom environment, or one
saved by an older ddpg). A normalised environment also gets the
training run's observation/reward statistics, so normalised observations mean what they
meant in training. Only data is read; a checkpoint of the older, pickled format needs
``--trust-pickle`` (see docs/checkpoints.md).

``--video OUT.mp4`` (or ``.gif``) records every episode from the environment's own
``rgb_array`` frames (the cart-pole draws its own: :mod:`ddpg.rendering.cartpole`); recording
changes no return. ``--render OUT.gif`` writes the first episode only, as before ``--video``.
The files of ``--video``, ``--render`` and ``--json`` are checked before the first episode: a
place where nothing can be written is refused, naming the flag, and so is a file that exists,
unless ``--overwrite`` is given (a missing folder is made).

``--onnx FILE`` acts with a policy exported by ``ddpg-export`` instead, run by onnxruntime
on the raw environment (the model normalises observations and rescales actions itself); the
checkpoint still says which environment to build. An exported policy's normalisation
statistics are those of the checkpoint, fixed; ``--freeze-obs-stats`` evaluates the
checkpoint's own policy the same way (by default they keep adapting, as in training):

    ddpg-export runs/pendulum/params -o exported/pendulum
    ddpg-evaluate runs/pendulum/params --onnx exported/pendulum.onnx
"""
import argparse
import os

import numpy as np

import ddpg  # noqa: F401  (before mxnet: ddpg sets MXNet's environment variables)
import mxnet as mx

from ddpg.checkpoint import CheckpointReader
from ddpg.envs import seed_env
from ddpg.errors import CheckpointError
from ddpg.experiment.build import build_env
# shared with ddpg.experiment.export, which rebuilds the environment the same way
from ddpg.experiment.export import apply_normalization, checkpoint_run_args, policy_options
from ddpg.experiment.policy_source import checkpoint_obs_normalizer
from ddpg.experiment.results import write_json
from ddpg.experiment.script import (HelpFormatter, UsageError, add_debug_flag,
                                    add_trust_pickle_flag, check_output, make_output_folder,
                                    run_script)
from ddpg.policies import DeterministicMLPPolicy
from ddpg.rendering import (VIDEO_INSTALL, VideoError, frame_rate, gif_bytes, opengl_problem,
                            scale_frames, video_problem, write_video)

__all__ = ["build_parser", "run_arguments", "load_policy", "OnnxPolicy", "RenderError",
           "render_frame", "run_episode", "run_episodes", "record_episodes", "write_gif",
           "main", "entry",
           "ONNXRUNTIME_INSTALL"]

#: How to get onnxruntime for --onnx.
ONNXRUNTIME_INSTALL = 'pip install "mxnet-ddpg[onnx]"'


def build_parser():
    parser = argparse.ArgumentParser(
        description="Run deterministic episodes with the policy of a DDPG checkpoint and "
                    "report their returns.",
        formatter_class=HelpFormatter)
    parser.add_argument("checkpoint", help="checkpoint folder (e.g. runs/x/params)")
    parser.add_argument("--episodes", type=int, default=10,
                        help="deterministic episodes to run (at least 1)")
    parser.add_argument("--render", default=None, metavar="OUT.gif",
                        help="write the first episode as an animated GIF (needs a gymnasium "
                             "environment that renders rgb_array frames, and Pillow)")
    parser.add_argument("--video", default=None, metavar="OUT.mp4",
                        help="record every episode into this video (.mp4 or .gif; needs "
                             'pip install "mxnet-ddpg[video]")')
    parser.add_argument("--video-width", type=int, default=None, metavar="PIXELS",
                        help="scale --video's frames to this width (default: as rendered)")
    parser.add_argument("--camera", default=None, metavar="NAME",
                        help="MuJoCo environments: record --video and --render through the "
                             "model's camera NAME (HalfCheetah's 'track' follows the body)")
    parser.add_argument("--fps", type=int, default=None,
                        help="frames per second of --video and --render; default: the "
                             "environment's (real time), else 30")
    parser.add_argument("--seed", type=int, default=None,
                        help="seed of the evaluation environment; default: the run's seed + 1 "
                             "(the seed of its evaluation environment)")
    parser.add_argument("--max-path-length", type=int, default=None,
                        help="episode cut-off; default: the run's")
    parser.add_argument("--env", default=None,
                        help="environment ('cartpole' or a gymnasium id) for a checkpoint that "
                             "does not name its own (a custom environment, or one saved by an "
                             "older ddpg), or to evaluate on another one")
    parser.add_argument("--json", default=None, metavar="OUT.json",
                        help="also write the statistics and every episode's return as JSON")
    parser.add_argument("--onnx", default=None, metavar="POLICY.onnx",
                        help="act with this exported policy (ddpg-export) under "
                             "onnxruntime instead of the checkpoint's policy")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace the files of --video, --render and --json when they "
                             "exist (by default an existing file is refused, before any "
                             "episode runs)")
    parser.add_argument("--freeze-obs-stats", action="store_true",
                        help="keep the checkpoint's observation statistics fixed (as an "
                             "exported policy does) instead of updating them while evaluating")
    add_trust_pickle_flag(parser)
    add_debug_flag(parser)
    return parser


def run_arguments(manifest, env_override):
    """ddpg-train's arguments for rebuilding the environment (its defaults where unknown)."""
    try:
        return checkpoint_run_args(manifest, env_override)
    except CheckpointError as error:
        raise UsageError(str(error)) from error


def load_policy(reader, env):
    """A policy network bound for batch 1 on the CPU, with the checkpoint's parameters."""
    manifest = reader.manifest
    spaces = manifest["spaces"]
    if (spaces["obs_dim"], spaces["act_dim"]) != (env.observation_space.flat_dim,
                                                  env.action_space.flat_dim):
        raise CheckpointError(
            "the checkpoint's policy takes %d observation values and gives %d action values; "
            "this environment has %d and %d" % (spaces["obs_dim"], spaces["act_dim"],
                                               env.observation_space.flat_dim,
                                               env.action_space.flat_dim))
    policy = DeterministicMLPPolicy(env.spec, **policy_options(manifest))
    policy.define_exe(ctx=mx.cpu(), init=mx.initializer.Zero(), updater=None,
                      input_shapes={"obs": (1, env.observation_space.flat_dim)})
    values = reader.params("policy")
    current = {name: tuple(array.shape) for name, array in policy.arg_dict.items()
               if name != "obs"}
    saved = {name: tuple(value.shape) for name, value in values.items()}
    if current != saved:
        raise CheckpointError("the checkpoint's policy parameters %s do not fit the rebuilt "
                              "network %s" % (saved, current))
    for name, value in values.items():
        policy.arg_dict[name][:] = value
    # with obs_norm, its normaliser's statistics
    policy.input_normalizer = checkpoint_obs_normalizer(reader, env.observation_space.flat_dim)
    return policy


class OnnxPolicy(object):
    """A policy exported by ``ddpg-export``, run by onnxruntime: raw observations
    in, actions in the environment's units out."""

    def __init__(self, path, obs_dim):
        try:
            import onnxruntime
        except ImportError:
            raise UsageError("--onnx needs onnxruntime: %s" % ONNXRUNTIME_INSTALL)
        try:
            self.session = onnxruntime.InferenceSession(path,
                                                        providers=["CPUExecutionProvider"])
        except Exception as error:  # pylint: disable=broad-except
            raise UsageError("--onnx %s: onnxruntime cannot load it (%s)"
                             % (path, str(error).strip().splitlines()[0])) from error
        model_input, = self.session.get_inputs()
        if model_input.shape[-1] != obs_dim:
            raise UsageError("--onnx %s takes %s observation values; the environment has %d"
                               % (path, model_input.shape[-1], obs_dim))
        self.input_name = model_input.name

    def get_action(self, obs):
        batch = np.asarray(obs, dtype=np.float32).reshape(1, -1)
        return self.session.run(None, {self.input_name: batch})[0][0]


class RenderError(RuntimeError):
    """--render cannot work with this environment or installation."""


def render_frame(env):
    """One rgb_array frame, or a clear error when the environment cannot give one."""
    try:
        frame = env.render()
    except Exception as error:  # pylint: disable=broad-except
        raise RenderError(opengl_problem(error) or "the environment could not render a frame "
                          "(%s: %s)" % (type(error).__name__, error)) from error
    shape = np.shape(frame) if isinstance(frame, np.ndarray) else None
    if shape is None or len(shape) != 3 or shape[-1] not in (3, 4):
        raise RenderError(
            "the environment does not render rgb_array frames (render() gave %s); --render "
            "needs a gymnasium environment that supports render_mode='rgb_array'"
            % ("a %s" % type(frame).__name__ if shape is None else
               "an array of shape %s" % (shape,)))
    return frame


def run_episode(env, policy, max_path_length, frames=None, reward_scale=1.0):
    """Return and length of one deterministic episode; appends frames when given a list.

    ``reward_scale`` multiplies the rewards, as ``normalize(scale_reward=...)`` does: an
    exported policy acts on the raw environment but reports the training run's returns."""
    obs = env.reset()
    if frames is not None:
        frames.append(render_frame(env))
    total, length, done = 0.0, 0, False
    while not done and length < max_path_length:
        action = policy.get_action(obs)
        obs, reward, done, _ = env.step(np.reshape(action, env.action_space.shape))
        total += reward * reward_scale
        length += 1
        if frames is not None:
            frames.append(render_frame(env))
    return total, length


def record_episodes(env, policy, max_path_length, episodes, record=None, reward_scale=1.0):
    """Returns, lengths and frames of ``episodes`` deterministic episodes: ``record`` is
    None (no frames), ``"first"`` (the first episode's) or ``"all"``; the frames are one
    list per recorded episode."""
    returns, lengths, frames = [], [], []
    for episode in range(episodes):
        recording = record == "all" or (record == "first" and episode == 0)
        episode_frames = [] if recording else None
        total, length = run_episode(env, policy, max_path_length, episode_frames,
                                    reward_scale)
        returns.append(total)
        lengths.append(length)
        if recording:
            frames.append(episode_frames)
    return returns, lengths, frames


def run_episodes(env, policy, max_path_length, episodes, render, reward_scale=1.0):
    """Returns, lengths and (when ``render``) the first episode's frames."""
    returns, lengths, frames = record_episodes(env, policy, max_path_length, episodes,
                                               "first" if render else None, reward_scale)
    return returns, lengths, (frames[0] if render else None)


def write_gif(frames, path, fps):
    """Write ``frames`` (H x W x 3 uint8 arrays) as a looping GIF with Pillow, or imageio."""
    try:
        data = gif_bytes(frames, fps)
    except ImportError:  # no Pillow
        try:
            import imageio
        except ImportError:
            raise RenderError("writing a GIF needs Pillow or imageio, which are not "
                               "installed: %s" % VIDEO_INSTALL)
        images = [np.asarray(frame, dtype=np.uint8) for frame in frames]
        imageio.mimsave(path, images, duration=1.0 / fps, loop=0)
        return path
    with open(path, "wb") as handle:
        handle.write(data)
    return path


#: The flags of the files ddpg-evaluate writes.
OUTPUT_FLAGS = ("video", "render", "json")


def check_options(options):
    """The checks argparse cannot make, before the checkpoint is read: a :class:`UsageError`
    naming the flag. The output files must be writable, and new unless ``--overwrite``."""
    if options.episodes < 1:
        build_parser().error("--episodes must be at least 1")
    if options.max_path_length is not None and options.max_path_length < 1:
        build_parser().error("--max-path-length must be at least 1")
    if options.fps is not None and options.fps < 1:
        build_parser().error("--fps must be at least 1")
    if options.video_width is not None and options.video_width < 2:
        build_parser().error("--video-width must be at least 2 pixels")
    if options.video_width is not None and not options.video:
        build_parser().error("--video-width scales the frames of --video: give --video too")
    if options.camera is not None and not (options.video or options.render):
        build_parser().error("--camera chooses the view of --video or --render: give one")
    problem = options.video and video_problem(options.video)
    if problem:
        raise UsageError("--video %s: %s" % (options.video, problem))
    if options.onnx and not os.path.isfile(options.onnx):
        raise UsageError("--onnx %s: no such file (ddpg-export writes one)" % options.onnx)
    for name in OUTPUT_FLAGS:
        if getattr(options, name):
            check_output("--" + name, getattr(options, name),
                         overwrite_flag=None if options.overwrite else "--overwrite")


def main(argv=None):
    options = build_parser().parse_args(argv)
    check_options(options)
    try:
        reader = CheckpointReader(options.checkpoint, trust_pickle=options.trust_pickle)
    except CheckpointError as error:
        raise UsageError("checkpoint %s: %s" % (options.checkpoint, error)) from error
    args = run_arguments(reader.manifest, options.env)
    flag = "--video %s" % options.video if options.video else "--render %s" % options.render
    env, max_path_length = build_env(
        args, render_mode="rgb_array" if options.render or options.video else None,
        camera=options.camera, render_flag=flag)
    max_path_length = options.max_path_length or max_path_length
    if options.env is None:
        try:
            apply_normalization(reader, env)
        except CheckpointError as error:
            raise UsageError("checkpoint %s: %s" % (options.checkpoint, error)) from error
    env.freeze_obs_stats = options.freeze_obs_stats
    if options.onnx:
        # the model normalises and rescales itself: it acts on the environment normalize()
        # wraps, whose rewards are scaled as normalize() scales them
        policy = OnnxPolicy(options.onnx, env.observation_space.flat_dim)
        acting_env, reward_scale = env.wrapped_env, env.scale_reward
    else:
        try:
            policy = load_policy(reader, env)
        except CheckpointError as error:
            raise UsageError("checkpoint %s: %s%s" % (
                options.checkpoint, error,
                " (--env %s is not the environment it was trained on)" % options.env
                if options.env else "")) from error
        acting_env, reward_scale = env, 1.0
    seed = options.seed if options.seed is not None else int(args.seed) + 1
    np.random.seed(seed)
    seed_env(env, seed)

    try:
        returns, lengths, frames = record_episodes(
            acting_env, policy, max_path_length, options.episodes,
            "all" if options.video else "first" if options.render else None, reward_scale)
    except RenderError as error:
        raise UsageError("%s: %s" % (flag, error)) from error
    stats = {"episodes": len(returns), "mean": float(np.mean(returns)),
             "std": float(np.std(returns)), "min": float(np.min(returns)),
             "max": float(np.max(returns)), "mean_length": float(np.mean(lengths))}
    if options.json:
        make_output_folder(options.json)
        write_json(options.json, dict(
            stats, seed=seed,
            # relative to the file's folder: the file names no folder of this machine
            checkpoint=os.path.relpath(os.path.abspath(options.checkpoint),
                                       os.path.dirname(os.path.abspath(options.json))),
            epoch=reader.manifest["progress"]["epoch"], env=args.env, onnx=options.onnx,
            returns=[float(r) for r in returns]))
    print("%s (epoch %d): %d episodes, return mean %.4f, std %.4f, min %.4f, max %.4f; "
          "mean length %.1f" % (options.checkpoint, reader.manifest["progress"]["epoch"],
                                stats["episodes"], stats["mean"], stats["std"],
                                stats["min"], stats["max"], stats["mean_length"]))
    _write_recordings(options, frames, options.fps or frame_rate(env))
    return stats


def _write_recordings(options, frames, fps):
    """--video (every episode's frames) and --render (the first episode's)."""
    for path in (options.video, options.render):
        if path:
            make_output_folder(path)
    if options.video:
        video = [frame for episode in frames for frame in episode]
        try:
            write_video(scale_frames(video, options.video_width), options.video, fps)
        except VideoError as error:
            raise UsageError("--video %s: %s" % (options.video, error)) from error
        print("wrote %d frames to %s" % (len(video), options.video))
    if options.render:
        try:
            write_gif(frames[0], options.render, fps)
        except RenderError as error:
            raise UsageError("--render %s: %s" % (options.render, error)) from error
        print("wrote %d frames to %s" % (len(frames[0]), options.render))


def entry():
    """The ``ddpg-evaluate`` console script."""
    run_script(main, prog="ddpg-evaluate")
