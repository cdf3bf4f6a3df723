"""Mutation testing of the core modules with mutmut: kill rate per module and the survivors.

    pip install -r requirements-mutation.txt
    python tools/mutation.py                    # every core module (an hour or more on 1 core)
    python tools/mutation.py utils replay.uniform   # some of them
    python tools/mutation.py --sample 25        # a seeded sample of 25 mutants a module
    python tools/mutation.py --retest-survivors # the survivors again, after adding tests
    python tools/mutation.py --report           # only print the results of earlier runs

mutmut (configured in setup.cfg's ``[mutmut]``) copies ``ddpg/`` to ``mutants/`` with every
mutant compiled in, runs the fast in-process test selection once to learn which tests reach
which function, then runs, for each mutant, only those tests. Results stay in ``mutants/``, so
a second run only tests what changed. One worker by default (``--max-children``): the tests
are CPU-bound and MXNet's operators use the other cores.

A surviving mutant is either a gap in the tests or *equivalent*: no test can tell it from the
original (a changed default no caller reaches, a message's wording, a change that only affects
speed). The equivalent ones are listed in ``EQUIVALENT`` below with the reason, and the figure
that counts is the kill rate over the others.
"""
import argparse
import json
import os
import random
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: short name -> source file; mutmut names a module's mutants "<dotted module>.<function>..."
MODULES = {
    "ddpg": "ddpg/ddpg.py",
    "executors": "ddpg/executors.py",
    "training": "ddpg/training.py",
    "training_state": "ddpg/training_state.py",
    "evaluation": "ddpg/evaluation.py",
    "td3": "ddpg/td3.py",
    "replay.uniform": "ddpg/replay/uniform.py",
    "replay.batch": "ddpg/replay/batch.py",
    "replay.registry": "ddpg/replay/registry.py",
    "collection": "ddpg/collection.py",
    "checkpoint.upgrade": "ddpg/checkpoint/upgrade.py",
    "network_state": "ddpg/network_state.py",
    "strategies": "ddpg/strategies.py",
    "normalized_env": "ddpg/envs/normalized_env.py",
    "utils": "ddpg/utils.py",
    "checkpoint.format": "ddpg/checkpoint/format.py",
    "checkpoint.networks": "ddpg/checkpoint/networks.py",
    "checkpoint.manifest": "ddpg/checkpoint/manifest.py",
    "checkpoint.atomic": "ddpg/checkpoint/atomic.py",
    "checkpoint.replay_memory": "ddpg/checkpoint/replay_memory.py",
    "checkpoint.state": "ddpg/checkpoint/state.py",
    "checkpoint.writer": "ddpg/checkpoint/writer.py",
    "checkpoint.reader": "ddpg/checkpoint/reader.py",
    "checkpoint.restoring": "ddpg/checkpoint/restoring.py",
    "checkpoint.optimizer_state": "ddpg/checkpoint/optimizer_state.py",
    "checkpoint.env_state": "ddpg/checkpoint/env_state.py",
    "checkpoint.env_description": "ddpg/checkpoint/env_description.py",
    "checkpoint.ndarray_file": "ddpg/checkpoint/ndarray_file.py",
    "checkpoint.legacy": "ddpg/checkpoint/legacy.py",
    "checkpoint.npz_file": "ddpg/checkpoint/npz_file.py",
    "vector_env": "ddpg/envs/vector.py",
    "training_envs": "ddpg/training_envs.py",
    "distributed.actor": "ddpg/distributed/actor.py",
    "distributed.ray_actors": "ddpg/distributed/ray_actors.py",
    "replay.nstep": "ddpg/replay/nstep.py",
    "replay.sum_tree": "ddpg/replay/sum_tree.py",
    "replay.prioritized": "ddpg/replay/prioritized.py",
    "batch_inputs": "ddpg/batch_inputs.py",
    "replay.her": "ddpg/replay/her.py",
    "obs_normalizer": "ddpg/obs_normalizer.py",
    "random_state": "ddpg/random_state.py",
    "transition_storage": "ddpg/transition_storage.py",
    "envs.goals": "ddpg/envs/goals.py",
    "rendering.cartpole": "ddpg/rendering/cartpole.py",
    "rendering.video": "ddpg/rendering/video.py",
    "rendering.backend": "ddpg/rendering/backend.py",
    "experiment.onnx_graph": "ddpg/experiment/onnx_graph.py",
    "backend.mxnet_compat": "ddpg/backend/mxnet_compat.py",
    "config": "ddpg/config.py",
    "kinds": "ddpg/kinds.py",
    "d4pg": "ddpg/d4pg.py",
}

#: Mutants judged equivalent: name -> (text of the mutated line, why no test can tell it
#: from the original). A mutant's number changes when its function changes, so each entry
#: is only honoured while ``mutmut show`` still gives that mutated line; otherwise it counts
#: as a survivor again, to be looked at.
NEGATIVE_SHAPE = ("numpy's reshape treats any negative size as the one inferred dimension, "
                  "so -2 is -1")
UNREACHABLE_LAYOUT_LABEL = (
    "the label names the network in executors.check_same_layout's error, which init_net "
    "cannot raise: a target's parameters are inferred from the online network's own symbol "
    "and input shapes")
EQUIVALENT = {
    "ddpg.training_envs.x__restore_env_snapshot__mutmut_3": (
        "env_state.prepare_env_restore(env, snapshot, None)()",
        "the label names the environment in prepare_env_restore's errors, and the restore "
        "runs only after the same snapshot passed the same check with its label"),
    "ddpg.replay.uniform.xǁReplayMemǁend_episode__mutmut_1": (
        "def end_episode(self, env_index=1):",
        "the uniform memory keeps no episode state: its end_episode does nothing, whichever "
        "environment it names"),
    "ddpg.distributed.actor.xǁExperienceActorǁcollect__mutmut_24": (
        "loop.explore_step(action_shape, act_dim, True)",
        "an actor's logger is a fresh Logger with no TensorBoard output, so asking its "
        "exploration steps to record episode scalars writes nothing"),
    "ddpg.envs.vector.xǁAsyncVectorEnvǁ_receive__mutmut_3": (
        "self._processes[index].join(timeout=2)",
        "the wait for a worker whose pipe has closed, to read its exit code: it has ended, so "
        "join returns at once"),
    "ddpg.envs.vector.xǁAsyncVectorEnvǁclose__mutmut_9": (
        "process.join(timeout=6)",
        "how long close() waits for a worker that got 'close' before terminating it: the "
        "workers answer at once, so only a hung worker's wait is a second longer"),
    "ddpg.checkpoint.npz_file.x_write_npz__mutmut_27": (
        "np.asanyarray(value), allow_pickle=None)",
        "write_array tests 'if not allow_pickle': None refuses objects as False does"),
    "ddpg.td3.xǁTD3ǁ_target_q_symbol__mutmut_80": (
        "self._action_high.reshape(1, -2)", NEGATIVE_SHAPE),
    "ddpg.envs.normalized_env.xǁNormalizedEnvǁ_apply_normalize_obs__mutmut_9": (
        "flat_obs = obs.reshape(-2)", NEGATIVE_SHAPE),
    "ddpg.td3.xǁTD3ǁ_target_q_symbol__mutmut_119": (
        "mx.symbol.minimum(qval_sym(act=smoothed),",
        "the first critic's own input variable is also named obs, so the executor binds it "
        "to the same s' array as the shared obs variable"),
    "ddpg.td3.xǁTD3ǁ_target_q_symbol__mutmut_56": (
        "ctx=self.ctx, dtype=None)", "mx.nd.array makes float32 arrays by default"),
    "ddpg.strategies.xǁOUStrategyǁget_action__mutmut_26": (
        "np.reshape(self.action_space.high, -2))", NEGATIVE_SHAPE),
    "ddpg.checkpoint.state.x_capture_training_state__mutmut_19": (
        "else list(value) if (isinstance(value, list)) and False else value",
        "the captured state is encoded to plain data at once and nothing changes the "
        "algorithm's lists in between, so the copy cannot be observed"),
    "ddpg.ddpg.xǁDDPGǁdo_update__mutmut_15": (
        "self.target_executor.forward(is_train=True)",
        "no operator of the target chain (FullyConnected, the activations, LayerNorm, tanh, "
        "the target arithmetic) computes differently in training mode"),
    "ddpg.ddpg.xǁDDPGǁdo_update__mutmut_10": (
        "self.policy.exe.forward(is_train=False)",
        "no operator of the policy network (FullyConnected, the activations, LayerNorm, tanh) "
        "computes differently in training mode, and MXNet's backward reuses either pass"),
    "ddpg.training.xǁTrainingLoopǁrun_epoch__mutmut_43": (
        "algo.evaluate(epoch, None)",
        "DDPG.evaluate keeps the example's memory argument but does not use it"),
    "ddpg.checkpoint.writer.x__write_json__mutmut_13": (
        "json.dump(value, out, sort_keys=False)",
        "readers do not depend on key order, and the same code inserts the keys in the same "
        "order, so the files are still the same from run to run"),
    "ddpg.checkpoint.restoring.x__apply_updater_states__mutmut_19": (
        'getattr(algo, network + "_lr", ))',
        "every optimised network of DDPG and TD3 has its <network>_lr (qfunc_lr, policy_lr, "
        "TD3's qfunc2_lr), so the default is never reached"),
    "ddpg.utils.x_rollout__mutmut_31": (
        'info.get("TimeLimit.truncated", )',
        "a missing key then gives None instead of False, and bool() of both is False"),
    "ddpg.utils.x_rollout_path__mutmut_36": (
        'info.get("TimeLimit.truncated", )',
        "a missing key then gives None instead of False, and bool() of both is False"),
    "ddpg.ddpg.xǁDDPGǁinit_net__mutmut_143": (
        "self.policy_target_params, self.policy.params, None)", UNREACHABLE_LAYOUT_LABEL),
    "ddpg.td3.xǁTD3ǁinit_net__mutmut_57": (
        'self.qfunc2.params, "XXqfunc2XX")', UNREACHABLE_LAYOUT_LABEL),
    "ddpg.strategies.xǁGaussianStrategyǁ__init____mutmut_55": (
        "np.reshape(self.action_space.high, -1).astype(None)",
        "astype(None) converts to numpy's default float64, the dtype the line names"),
    "ddpg.utils.x_discount_return__mutmut_5": (
        "rewards = np.asarray(x, )",
        "the rewards are multiplied by discount ** arange(n), a float64 array, so numpy "
        "computes the products in float64 whatever the rewards' dtype"),
    "ddpg.checkpoint.optimizer_state.x__to_ndarray__mutmut_4": (
        "return mx.nd.array(state, )",
        "mx.nd.array makes float32 arrays by default, and prepare accepts only float32 "
        "states (the parameters' dtype)"),
    "ddpg.td3.xǁTD3ǁ_target_q_symbol__mutmut_50": (
        "low = mx.nd.array(self._action_low.reshape(1, -1), ctx=self.ctx, )",
        "mx.nd.array makes float32 arrays by default"),
    "ddpg.checkpoint.legacy.x_optimizer_state__mutmut_65": (
        "updater.states_synced = dict.fromkeys(states, )",
        "MXNet's Updater only tests `not states_synced[index]`, which None passes as False "
        "does"),
    "ddpg.checkpoint.env_state.x_prepare_env_restore__mutmut_23": (
        "return lambda: 0",
        "the applier's return value is not used"),
    "ddpg.distributed.ray_actors.xǁRayActorsǁ__init____mutmut_75": (
        'self._ray = ""',
        "_ray is only read after start() assigns it Ray: close() reads it only for started "
        "actors or a Ray it started, get_checkpoint_state only with actors"),
    "ddpg.distributed.ray_actors.xǁRayActorsǁ__init____mutmut_76": (
        "self._started_ray = None",
        "_started_ray is only tested with `if`, where None is False"),
    "ddpg.distributed.actor.xǁActorRunǁ__init____mutmut_39": (
        "np.reshape(self.env.action_space.low, -2)", NEGATIVE_SHAPE),
    "ddpg.distributed.actor.xǁActorRunǁ__init____mutmut_41": (
        "np.reshape(self.env.action_space.high, -1).astype(None)",
        "astype(None) converts to numpy's default float64, the dtype the line names"),
    "ddpg.replay.nstep.xǁNStepReplayMemǁget_batch__mutmut_11": (
        "indices = np.random.randint(self.size, size=batch_size)",
        "numpy's randint(high) draws from [0, high), as randint(0, high) does, with the same "
        "draws from the generator"),
    "ddpg.replay.sum_tree.xǁSumTreeǁsample__mutmut_25": (
        "slots = self.find(np.minimum(values, np.nextafter(self.total, 1)))",
        "the two differ only for a value that rounding lifts to the total (a uniform draw "
        "within 2**-53 of 1) while the total is at most 1: such a value descends to the last "
        "slot, or past the filled ones to the fallback, the last slot with a priority, which "
        "is the slot the value just below the total finds too, unless that slot's priority "
        "is below the total's rounding unit (a memory's priorities are at least eps ** alpha)"),
    "ddpg.replay.sum_tree.xǁSumTreeǁ__init____mutmut_27": (
        "self.nodes = np.zeros(2 * self.capacity, dtype=None)",
        "np.zeros makes float64 arrays by default, the dtype the line names"),
    "ddpg.obs_normalizer.xǁObservationNormalizerǁ__init____mutmut_18": (
        "self.sum = np.zeros(self.dim, )",
        "np.zeros makes float64 arrays by default, the dtype the line names"),
    "ddpg.envs.goals.xǁGoalLayoutǁflatten__mutmut_18": (
        'np.reshape(observation["desired_goal"], -2)]).astype(np.float64)', NEGATIVE_SHAPE),
    "ddpg.obs_normalizer.xǁObservationNormalizerǁ__init____mutmut_23": (
        "self.sumsq = np.zeros(self.dim, )",
        "np.zeros makes float64 arrays by default, the dtype the line names"),
    "ddpg.replay.her.xǁHindsightReplayMemǁadd_step__mutmut_24": (
        "np.asarray(nxt, dtype=np.float32).reshape(-2)", NEGATIVE_SHAPE),
    "ddpg.transition_storage.xǁTransitionStorageǁstore__mutmut_11": (
        'info.get("TimeLimit.truncated", None)',
        "a missing key then gives None instead of False, and bool() of both is False"),
    "ddpg.rendering.cartpole.x_draw_cartpole__mutmut_74": (
        "angles = np.arange(9) * np.pi / 4",
        "the ninth corner, at angle 2 pi, is the first one exactly (cos 2 pi is 1.0, and "
        "0.04 * sin 2 pi, about -1e-17, vanishes beside the hinge's height): the edge it adds "
        "has length 0, and every pixel passes its test 0 >= 0"),
    "ddpg.rendering.cartpole.x__paint__mutmut_50": (
        "slice(columns[0], columns[-1] + 2))",
        "a bounding box one column wider on the right: that column's pixel centres lie right "
        "of every corner, so outside the convex polygon, and its edge tests leave them "
        "unpainted; the box only limits which pixels are tested"),
    "ddpg.rendering.cartpole.x_draw_cartpole__mutmut_86": (
        "hinge - 0.04 * np.stack([np.cos(angles), np.sin(angles)], axis=1), HINGE)",
        "the hinge's octagon turned half a turn about its centre: -(cos a, sin a) is the "
        "corner at a + pi, so the corners are the same, still counter-clockwise (they differ "
        "only by rounding, below 1e-17 m)"),
    "ddpg.rendering.cartpole.x__paint__mutmut_34": (
        "box = (slice(rows[0], None), slice(columns[0], columns[-1] + 1))",
        "a bounding box that runs on to the picture's last row: the rows below the polygon's "
        "lowest corner lie outside the convex polygon, so its edge tests leave them "
        "unpainted; the box only limits which pixels are tested"),
    "ddpg.rendering.cartpole.x__paint__mutmut_41": (
        "box = (slice(rows[0], rows[-1] + 2), slice(columns[0], columns[-1] + 1))",
        "a bounding box one row taller at the bottom: that row's pixel centres lie below "
        "every corner, so outside the convex polygon, and its edge tests leave them "
        "unpainted; the box only limits which pixels are tested"),
    "ddpg.rendering.video.x_gif_bytes__mutmut_14": (
        'pictures[0].save(buffer, format="GIF", save_all=None, append_images=pictures[1:],',
        "from Pillow 11.2.1 (13.0 here) a save_all of None saves every frame when "
        "append_images is not empty, and a single frame is written the same either way "
        "(the GIF bytes are equal); older Pillow would write the first frame only"),
    "ddpg.rendering.video.x_write_video__mutmut_34": (
        "writer = imageio.get_writer(path, fps=fps, macro_block_size=1,",
        "without a codec, imageio-ffmpeg encodes an .mp4 (the only file this writer makes) "
        "with its preferred H.264 encoder that ffmpeg has, libx264, which the line names; "
        "they differ only with an ffmpeg without libx264, where the original fails"),
    "ddpg.experiment.onnx_graph.xǁ_Converterǁunique__mutmut_9": (
        'candidate = "XX%s_%dXX" % (name, count)',
        "the names of an ONNX graph's tensors only have to be unique; the loop tries the next "
        "count until the name is free, so any spelling of the suffix gives the same graph"),
    "ddpg.experiment.onnx_graph.xǁ_Converterǁfully_connected__mutmut_60": (
        'transposed = self.emit("Transpose", [weight], name + "XX_weight_tXX", 2, perm=[1, 0])',
        "the name of the transposed weight's tensor, made unique by unique(); the graph "
        "computes the same with either spelling"),
    "ddpg.experiment.onnx_graph.xǁ_Converterǁfully_connected__mutmut_9": (
        'bias = None if _flag(attrs, "no_bias", None) else inputs[2]',
        "_flag returns the default only when the symbol has no no_bias attribute, and None "
        "is as false as False there"),
    "ddpg.experiment.onnx_graph.xǁ_Converterǁfully_connected__mutmut_18": (
        'if _flag(attrs, None, True):',
        "every FullyConnected then takes the flatten=True path (Gemm with the weight "
        "transposed), which on the converter's (batch, features) tensors computes what the "
        "flatten=False path (MatMul with the weight transposed) does; the outputs still match "
        "MXNet's"),
    "ddpg.experiment.onnx_graph.xǁ_Converterǁlayer_norm__mutmut_30": (
        'return self.emit("LayerNormalization", inputs[:3], name, rank, axis=None,',
        "an axis of None leaves the attribute out, and ONNX's LayerNormalization defaults to "
        "axis -1"),
    "ddpg.experiment.onnx_graph.xǁ_Converterǁunique__mutmut_2": (
        "candidate, count = name, 1",
        "the first free suffix becomes _2 instead of _1: tensor names only have to be unique"),
    "ddpg.experiment.onnx_graph.xǁ_Converterǁunique__mutmut_5": (
        "count -= 1",
        "suffixes _-1, _-2, ... instead of _1, _2, ...: tensor names only have to be unique"),
    "ddpg.experiment.onnx_graph.x_symbol_to_onnx__mutmut_141": (
        "onnx_module.checker.check_model(model, )",
        "the converter's models pass onnx's full check (with shape inference) and its basic "
        "one alike, and the check returns nothing: the model is the same either way"),
    "ddpg.backend.mxnet_compat.x__stand_ins__mutmut_4": (
        'inf, nan = float("INF"), float("nan")',
        "float() reads 'INF' as it reads 'inf'"),
    "ddpg.experiment.onnx_graph.xǁ_Converterǁleaky_relu__mutmut_88": (
        'return self.emit("PRelu", inputs[:3], name, rank)',
        "a LeakyReLU node has at most two inputs (the data and the prelu slopes), so the "
        "first three are the first two"),
    "ddpg.experiment.onnx_graph.xǁ_Converterǁclip__mutmut_7": (
        'low = self.constant(name + "XX_minXX", _number(attrs, "a_min", None))',
        "the name of the clip's lower bound constant, made unique by unique(); the graph "
        "computes the same with either spelling"),
    "ddpg.experiment.onnx_graph.xǁ_Converterǁscalar__mutmut_8": (
        'scalar = self.constant(name + "XX_scalarXX", float(attrs["scalar"]))',
        "the name of a scalar operand's constant, made unique by unique(); the graph computes "
        "the same with either spelling"),
    "ddpg.experiment.onnx_graph.xǁ_Converterǁclip__mutmut_23": (
        'high = self.constant(name + "_MAX", _number(attrs, "a_max", None))',
        "the name of the clip's upper bound constant, made unique by unique(); the graph "
        "computes the same with either spelling"),
}

KILLED = {1, 3, 36, -24, 24, 152, 255, -11, -9}  # a failing test, or a timeout / crash
SURVIVED = {0, 33}  # no test failed; 33: no test of the selection reaches the function


def still_equivalent(name):
    """Whether ``name`` is in EQUIVALENT and mutmut still shows the recorded mutated line."""
    if name not in EQUIVALENT:
        return False
    shown = subprocess.run([sys.executable, "-m", "mutmut", "show", name], cwd=REPO,
                           capture_output=True, text=True).stdout
    added = [line for line in shown.splitlines()
             if line.startswith("+") and not line.startswith("+++")]
    return any(EQUIVALENT[name][0] in line for line in added)


def dotted(path):
    return path[:-len(".py")].replace("/", ".")


def run_mutmut(names, max_children):
    """``mutmut run`` on mutant names or patterns ("ddpg.utils.*")."""
    env = dict(os.environ)
    # mutmut puts mutants/ first on sys.path; a PYTHONPATH naming the checkout would not
    # matter, but one naming another checkout would hide the mutants
    env.pop("PYTHONPATH", None)
    command = [sys.executable, "-m", "mutmut", "run", "--max-children", str(max_children)]
    shown = names if len(names) <= 8 else names[:8] + ["... (%d names)" % len(names)]
    print("+", " ".join(command + shown), flush=True)
    subprocess.call(command + list(names), cwd=REPO, env=env)


def sample_mutants(modules, size, seed, max_children):
    """A seeded random sample of ``size`` mutants of each module (all where it has fewer):
    an estimate of the kill rate when the full run takes too long."""
    if not all(os.path.exists(meta_path(module)) for module in modules):
        # generate the mutants (and the test statistics) first; the pattern matches none
        run_mutmut(["ddpg.no_such_module.*"], max_children)
    rng = random.Random(seed)
    names = []
    for module in modules:
        untested = sorted(name for name, code in results(module).items() if code is None)
        names.extend(rng.sample(untested, min(size, len(untested))))
    return names


def survivors(modules):
    """The mutants of ``modules`` that survived their last test and are not equivalent."""
    return [name for module in modules for name, code in sorted(results(module).items())
            if code in SURVIVED and not still_equivalent(name)]


def meta_path(module):
    return os.path.join(REPO, "mutants", MODULES[module] + ".meta")


def results(module):
    """{mutant name: exit code} from mutmut's record of ``module``'s source file."""
    meta = meta_path(module)
    if not os.path.exists(meta):
        return {}
    with open(meta) as handle:
        return json.load(handle).get("exit_code_by_key", {})


def report(modules):
    total_killed = total_counted = 0
    lines = []
    for module in modules:
        codes = results(module)
        tested = {name: code for name, code in codes.items() if code is not None}
        killed = sorted(name for name, code in tested.items() if code in KILLED)
        survived = sorted(name for name, code in tested.items() if code in SURVIVED)
        other = sorted(name for name, code in tested.items()
                       if code not in KILLED and code not in SURVIVED)
        equivalent = [name for name in survived if still_equivalent(name)]
        gaps = [name for name in survived if name not in equivalent]
        counted = len(killed) + len(gaps)
        rate = 100.0 * len(killed) / counted if counted else float("nan")
        total_killed += len(killed)
        total_counted += counted
        lines.append("%-15s %4d mutants  %4d killed  %3d equivalent  %3d survived  "
                     "%3d other  kill rate %5.1f%%" % (module, len(tested), len(killed),
                                                        len(equivalent), len(gaps),
                                                        len(other), rate))
        for name in gaps:
            lines.append("    survived: %s%s" % (name, " (no test reaches it)"
                                                 if tested[name] == 33 else ""))
        for name in other:
            lines.append("    %s: exit code %s (skipped or suspicious; not counted)"
                         % (name, tested[name]))
        for name in equivalent:
            lines.append("    equivalent: %s: %s" % (name, EQUIVALENT[name][1]))
    print("\n".join(lines))
    if total_counted:
        print("all            kill rate %.1f%% of %d non-equivalent mutants"
              % (100.0 * total_killed / total_counted, total_counted))
    print("show a mutant's diff: mutmut show <name>")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("modules", nargs="*",
                        help="core modules to mutate, of %s (default: all)"
                        % ", ".join(sorted(MODULES)))
    parser.add_argument("--max-children", type=int, default=1,
                        help="parallel mutmut workers (default 1)")
    parser.add_argument("--sample", type=int, metavar="N",
                        help="test a random sample of N mutants of each module instead of all")
    parser.add_argument("--seed", type=int, default=0, help="the sample's seed (default 0)")
    parser.add_argument("--sample-only", nargs="*", default=[], metavar="MODULE",
                        help="further modules to sample from (with --sample)")
    parser.add_argument("--retest-survivors", action="store_true",
                        help="test the survivors of earlier runs again (after adding tests)")
    parser.add_argument("--report", action="store_true",
                        help="print the results of earlier runs without running mutmut")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.modules + args.sample_only) - set(MODULES))
    if unknown:
        parser.error("unknown module %s; the core modules are %s"
                     % (", ".join(unknown), ", ".join(sorted(MODULES))))
    modules = args.modules or list(MODULES)
    # --sample-only: modules sampled but whose survivors are not retested (e.g. a module
    # another change is rewriting)
    sample_modules = modules + [m for m in args.sample_only if m not in modules]
    if not args.report:
        names = []
        if args.sample:
            names += sample_mutants(sample_modules, args.sample, args.seed, args.max_children)
        if args.retest_survivors:
            names += survivors(modules)
        if not (args.sample or args.retest_survivors):
            names = ["%s.*" % dotted(MODULES[module]) for module in modules]
        if names:
            run_mutmut(names, args.max_children)
    report(sample_modules)


if __name__ == "__main__":
    main()
