#!/usr/bin/env python
"""Evaluate a saved policy: deterministic episodes from a checkpoint, optionally as a GIF.

    python examples/evaluate.py runs/pendulum/params --episodes 10
    python examples/evaluate.py runs/pendulum/params --episodes 1 --render pendulum.gif

Only the policy is loaded (``policy.params``; the replay memory and optimiser state are not
read), so evaluating is quick whatever the checkpoint's size. The environment and the policy
network are rebuilt from the checkpoint: the arguments ``run_ddpg.py`` saved in its manifest,
or ``--env`` for checkpoints written from Python. A normalised environment also gets the
training run's observation/reward statistics, so normalised observations mean what they
meant in training. Only data is read; a checkpoint of the older, pickled format needs
``--trust-pickle`` for its normalisation statistics (see docs/checkpoints.md).
"""
import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
# Run from a checkout without installing: make ddpg and run_ddpg importable.
sys.path.insert(0, os.path.join(HERE, os.pardir))
sys.path.insert(0, HERE)

import ddpg  # noqa: E402,F401  (before mxnet: ddpg sets MXNet's environment variables)
import mxnet as mx  # noqa: E402

from ddpg.checkpoint import CheckpointReader  # noqa: E402
from ddpg.envs import NormalizedEnv, seed_env  # noqa: E402
from ddpg.errors import CheckpointError  # noqa: E402
from ddpg.policies import DeterministicMLPPolicy  # noqa: E402
from ddpg.results import write_json  # noqa: E402

import run_ddpg  # noqa: E402


def build_parser():
    parser = argparse.ArgumentParser(
        description="Run deterministic episodes with the policy of a DDPG checkpoint and "
                    "report their returns.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("checkpoint", help="checkpoint folder (e.g. runs/x/params)")
    parser.add_argument("--episodes", type=int, default=10)
    parser.add_argument("--render", default=None, metavar="OUT.gif",
                        help="write the first episode as an animated GIF (needs a gymnasium "
                             "environment that renders rgb_array frames, and Pillow)")
    parser.add_argument("--fps", type=int, default=30, help="frames per second of the GIF")
    parser.add_argument("--seed", type=int, default=None,
                        help="seed of the evaluation environment; default: the run's seed + 1 "
                             "(the seed of its evaluation environment)")
    parser.add_argument("--max-path-length", type=int, default=None,
                        help="episode cut-off; default: the run's")
    parser.add_argument("--env", default=None,
                        help="environment ('cartpole' or a gymnasium id) for checkpoints not "
                             "written by run_ddpg.py, or to evaluate on another one")
    parser.add_argument("--json", default=None, metavar="OUT.json",
                        help="also write the statistics and every episode's return as JSON")
    parser.add_argument("--trust-pickle", action="store_true",
                        help="also open a checkpoint of the older, pickled format (version "
                             "1); unpickling can run any code, so only for checkpoints you "
                             "trust")
    return parser


def run_arguments(manifest, env_override):
    """run_ddpg.py's arguments for rebuilding the environment (its defaults where unknown)."""
    args = run_ddpg.build_parser().parse_args([])
    saved = manifest.get("metadata", {}).get("run_args")
    if isinstance(saved, dict):
        vars(args).update(saved)
    elif env_override is None:
        raise CheckpointError("the checkpoint was not written by run_ddpg.py, so it does not "
                              "say which environment it was trained on: pass --env")
    else:
        # a checkpoint from Python: take what the manifest knows
        hyperparameters = manifest["hyperparameters"]
        args.max_path_length = hyperparameters.get("max_path_length")
        args.seed = hyperparameters.get("seed", args.seed)
    if env_override is not None:
        args.env = env_override
    return args


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
    described = manifest.get("networks", {}).get("policy", {})
    # the layout options that change the graph (older checkpoints have none: the defaults)
    options = {key: described[key] for key in ("hidden_sizes", "activation", "layer_norm")
               if described.get(key) is not None}
    policy = DeterministicMLPPolicy(env.spec, **options)
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
    return policy


def apply_normalization(reader, env):
    """Give a NormalizedEnv the training environment's running statistics."""
    if not isinstance(env, NormalizedEnv):
        return
    saved_env = reader.training_state()["env"]
    if saved_env.get("kind") == "normalize":
        env.set_param_values(saved_env["stats"])


def render_frame(env):
    """One rgb_array frame, or a clear error when the environment cannot give one."""
    try:
        frame = env.render()
    except Exception as error:  # pylint: disable=broad-except
        raise RuntimeError("the environment could not render a frame (%s: %s)"
                           % (type(error).__name__, error)) from error
    shape = np.shape(frame) if isinstance(frame, np.ndarray) else None
    if shape is None or len(shape) != 3 or shape[-1] not in (3, 4):
        raise RuntimeError(
            "the environment does not render rgb_array frames (render() gave %s); --render "
            "needs a gymnasium environment that supports render_mode='rgb_array'"
            % ("a %s" % type(frame).__name__ if shape is None else
               "an array of shape %s" % (shape,)))
    return frame


def run_episode(env, policy, max_path_length, frames=None):
    """Return and length of one deterministic episode; appends frames when given a list."""
    obs = env.reset()
    if frames is not None:
        frames.append(render_frame(env))
    total, length, done = 0.0, 0, False
    while not done and length < max_path_length:
        action = policy.get_action(obs)
        obs, reward, done, _ = env.step(np.reshape(action, env.action_space.shape))
        total += reward
        length += 1
        if frames is not None:
            frames.append(render_frame(env))
    return total, length


def write_gif(frames, path, fps):
    """Write ``frames`` (H x W x 3 uint8 arrays) as a looping GIF with Pillow, or imageio."""
    images = [np.asarray(frame, dtype=np.uint8) for frame in frames]
    duration_ms = max(1, int(round(1000.0 / fps)))
    try:
        from PIL import Image
    except ImportError:
        Image = None
    if Image is not None:
        pictures = [Image.fromarray(image) for image in images]
        pictures[0].save(path, save_all=True, append_images=pictures[1:],
                         duration=duration_ms, loop=0)
        return path
    try:
        import imageio
    except ImportError:
        raise RuntimeError("writing a GIF needs Pillow or imageio; install one of them "
                           "(pip install pillow)")
    imageio.mimsave(path, images, duration=duration_ms / 1000.0, loop=0)
    return path


def main(argv=None):
    options = build_parser().parse_args(argv)
    if options.episodes < 1:
        build_parser().error("--episodes must be at least 1")
    reader = CheckpointReader(options.checkpoint, trust_pickle=options.trust_pickle)
    args = run_arguments(reader.manifest, options.env)
    env, max_path_length = run_ddpg.make_env(
        args, render_mode="rgb_array" if options.render else None)
    max_path_length = options.max_path_length or max_path_length
    policy = load_policy(reader, env)
    if options.env is None:
        apply_normalization(reader, env)
    seed = options.seed if options.seed is not None else int(args.seed) + 1
    np.random.seed(seed)
    seed_env(env, seed)

    returns, lengths, frames = [], [], ([] if options.render else None)
    for episode in range(options.episodes):
        total, length = run_episode(env, policy, max_path_length,
                                    frames if episode == 0 else None)
        returns.append(total)
        lengths.append(length)
    stats = {"episodes": len(returns), "mean": float(np.mean(returns)),
             "std": float(np.std(returns)), "min": float(np.min(returns)),
             "max": float(np.max(returns)), "mean_length": float(np.mean(lengths))}
    if options.json:
        write_json(options.json, dict(
            stats, checkpoint=os.path.abspath(options.checkpoint), seed=seed,
            epoch=reader.manifest["progress"]["epoch"], env=args.env,
            returns=[float(r) for r in returns]))
    print("%s (epoch %d): %d episodes, return mean %.4f, std %.4f, min %.4f, max %.4f; "
          "mean length %.1f" % (options.checkpoint, reader.manifest["progress"]["epoch"],
                                stats["episodes"], stats["mean"], stats["std"],
                                stats["min"], stats["max"], stats["mean_length"]))
    if options.render:
        write_gif(frames, options.render, options.fps)
        print("wrote %d frames to %s" % (len(frames), options.render))
    return stats


if __name__ == "__main__":
    try:
        main()
    except (CheckpointError, RuntimeError) as error:
        sys.exit("error: %s" % error)
