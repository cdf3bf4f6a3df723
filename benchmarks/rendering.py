"""What a video costs: rendering a frame and encoding it, per environment.

    python benchmarks/rendering.py                        # cart-pole, Pendulum-v1, HalfCheetah-v5
    python benchmarks/rendering.py --envs cartpole --steps 50

For each environment (made as ``ddpg-train`` makes it, with ``render_mode="rgb_array"``):
milliseconds per environment step without rendering, per frame rendered, and per frame
encoded to MP4 (imageio, libx264) and to GIF (Pillow), at the environment's own frame size.
Random actions, ``--steps`` of them (episodes restart as needed); the median of ``--rounds``.
MuJoCo renders through the backend the library picks (EGL with a GPU driver, else OSMesa)
unless ``MUJOCO_GL`` is set.
"""
import argparse
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from ddpg.experiment.build import make_env  # noqa: E402
from ddpg.experiment.cli import build_parser  # noqa: E402
from ddpg.rendering import choose_mujoco_gl, write_video  # noqa: E402


def timed_steps(env, actions, render):
    """Seconds for the steps (restarting finished episodes) and the frames rendered."""
    frames = []
    env.reset()
    began = time.perf_counter()
    for action in actions:
        _, _, done, _ = env.step(action)
        if render:
            frames.append(env.render())
        if done:
            env.reset()
    return time.perf_counter() - began, frames


def encoding_ms(frames, extension, fps=30):
    with tempfile.TemporaryDirectory() as folder:
        began = time.perf_counter()
        write_video(frames, os.path.join(folder, "video" + extension), fps)
        return (time.perf_counter() - began) / len(frames) * 1e3


def measure(env_name, steps, rounds, seed):
    env, _ = make_env(build_parser().parse_args(["--env", env_name]), render_mode="rgb_array")
    env.seed(seed)
    rng = np.random.RandomState(seed)
    actions = rng.uniform(-1, 1, size=(steps,) + env.action_space.shape)
    plain, rendered, mp4, gif = [], [], [], []
    frames = None
    for _ in range(rounds):
        seconds, _ = timed_steps(env, actions, render=False)
        plain.append(seconds / steps * 1e3)
        seconds, frames = timed_steps(env, actions, render=True)
        rendered.append(seconds / steps * 1e3 - plain[-1])
        mp4.append(encoding_ms(frames, ".mp4"))
        gif.append(encoding_ms(frames, ".gif"))
    env.terminate()
    return dict(size="%dx%d" % (frames[0].shape[1], frames[0].shape[0]),
                step_ms=float(np.median(plain)), render_ms=float(np.median(rendered)),
                mp4_ms=float(np.median(mp4)), gif_ms=float(np.median(gif)))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--envs", nargs="+", default=["cartpole", "Pendulum-v1",
                                                      "HalfCheetah-v5"])
    parser.add_argument("--steps", type=int, default=200, help="steps (frames) per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if min(args.steps, args.rounds) < 1:
        parser.error("--steps and --rounds must be positive")
    print("MuJoCo backend: %s; %d frames a round, median of %d rounds"
          % (choose_mujoco_gl(), args.steps, args.rounds))
    print("%-16s %9s %9s %11s %11s %11s" % ("environment", "frame", "step ms", "render ms",
                                             "mp4 ms", "gif ms"))
    results = {}
    for name in args.envs:
        result = results[name] = measure(name, args.steps, args.rounds, args.seed)
        print("%-16s %9s %9.3f %11.2f %11.2f %11.2f" % (
            name, result["size"], result["step_ms"], result["render_ms"], result["mp4_ms"],
            result["gif_ms"]))
    return results


if __name__ == "__main__":
    main()
