"""The package's layout: the example's modules at the top, the MXNet plumbing in ddpg.backend,
persistence in ddpg.checkpoint, tooling in ddpg.experiment; lower layers import nothing of
higher ones; modules and functions of a readable size (docs/design.md describes the layout)."""
import ast
import os

import pytest

PACKAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ddpg")

#: The example's modules, where its users look for them.
EXAMPLE_MODULES = ["ddpg", "td3", "policies", "qfuncs", "replay_mem", "strategies", "utils",
                   "logger", "errors"]
#: The algorithm's own parts beside them, and the short command names.
CORE_MODULES = ["__init__", "version", "executors", "batch_inputs", "training",
                "training_state", "training_envs", "transition_storage", "obs_normalizer",
                "evaluation", "hyperparams", "config", "kinds", "faults", "options", "plain_data",
                "random_state", "collection", "network_state", "d4pg"]
COMMANDS = ["plot", "export", "__main__"]  # python -m ddpg.plot / ddpg.export / ddpg
SUBPACKAGES = ["backend", "checkpoint", "distributed", "envs", "experiment", "logging",
               "rendering", "replay"]

MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 80


def modules():
    """``{dotted name: path}`` of every module of the package."""
    found = {}
    for root, _, names in os.walk(PACKAGE):
        for name in names:
            if name.endswith(".py"):
                path = os.path.join(root, name)
                relative = os.path.relpath(path, os.path.dirname(PACKAGE))[:-3]
                dotted = relative.replace(os.sep, ".")
                found[dotted[:-len(".__init__")] if dotted.endswith(".__init__") else dotted] = path
    return found


def imported_ddpg_modules(path):
    """The ``ddpg.*`` names a module imports (``from ddpg import x`` gives ``ddpg.x``)."""
    with open(path) as source:
        tree = ast.parse(source.read())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names if alias.name.startswith("ddpg"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 \
                and node.module.split(".")[0] == "ddpg":
            names.add(node.module)
            names.update("%s.%s" % (node.module, alias.name) for alias in node.names)
    return names


def test_the_top_level_holds_the_example_s_modules_and_the_core():
    entries = sorted(os.listdir(PACKAGE))
    top_modules = sorted(name[:-3] for name in entries if name.endswith(".py"))
    packages = sorted(name for name in entries
                      if os.path.isfile(os.path.join(PACKAGE, name, "__init__.py")))
    assert top_modules == sorted(EXAMPLE_MODULES + CORE_MODULES + COMMANDS)
    assert packages == sorted(SUBPACKAGES)


def test_the_command_names_only_run_their_tool():
    for name in COMMANDS:
        with open(os.path.join(PACKAGE, name + ".py")) as source:
            assert len(source.read().splitlines()) <= 8, name


def _layer(dotted):
    parts = dotted.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in SUBPACKAGES else "top"


@pytest.mark.parametrize("layer, allowed", [
    # MXNet plumbing: nothing of DDPG above it
    ("backend", {"backend", "errors"}),
    # pictures of episodes and video files: nothing of DDPG
    ("rendering", {"rendering"}),
    # the logger's outputs and the environments: only what they store (and draw)
    ("logging", {"logging", "errors", "rendering"}),
    ("envs", {"envs", "errors", "plain_data", "rendering"}),
    # replay memories: numpy storage around the example's ReplayMem
    ("replay", {"replay", "replay_mem", "errors"}),
])
def test_lower_layers_import_nothing_of_higher_ones(layer, allowed):
    for dotted, path in modules().items():
        if _layer(dotted) != layer:
            continue
        for name in imported_ddpg_modules(path):
            parts = name.split(".")
            if len(parts) < 2 or parts[1] in ("__version__",):
                continue
            assert parts[1] in allowed, "%s imports %s" % (dotted, name)


def test_the_checkpoint_stores_the_algorithm_s_parts_without_importing_the_algorithm():
    """ddpg.ddpg and ddpg.td3 call the checkpoint code, never the other way round: the
    checkpoint knows the parts (replay memory, networks, strategy), not the algorithms."""
    for dotted, path in modules().items():
        if _layer(dotted) == "checkpoint":
            for name in imported_ddpg_modules(path):
                parts = name.split(".")
                assert len(parts) < 2 or parts[1] not in ("ddpg", "td3", "d4pg", "experiment"), \
                    "%s imports %s" % (dotted, name)


def test_nothing_below_the_tooling_imports_it():
    for dotted, path in modules().items():
        if _layer(dotted) == "experiment" or dotted in ("ddpg.plot", "ddpg.export",
                                                        "ddpg.__main__"):
            continue
        for name in imported_ddpg_modules(path):
            assert not name.startswith("ddpg.experiment"), "%s imports %s" % (dotted, name)


def test_only_the_tooling_knows_the_distributed_collection():
    """The training loop takes any collector; Ray actors are attached from outside it."""
    for dotted, path in modules().items():
        if _layer(dotted) in ("experiment", "distributed"):
            continue
        for name in imported_ddpg_modules(path):
            assert not name.startswith("ddpg.distributed"), "%s imports %s" % (dotted, name)


def test_the_checkpoint_knows_no_algorithm_s_attributes_by_name():
    for dotted, path in modules().items():
        if _layer(dotted) == "checkpoint":
            with open(path) as source:
                text = source.read()
            for name in ("target_noise", "TD3", "qfunc2"):
                assert name not in text, "%s names %s" % (dotted, name)


def test_modules_and_functions_are_of_a_readable_size():
    too_long = []
    for dotted, path in sorted(modules().items()):
        with open(path) as source:
            text = source.read()
        lines = len(text.splitlines())
        if lines > MAX_MODULE_LINES:
            too_long.append("%s: %d lines" % (dotted, lines))
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    too_long.append("%s.%s: %d lines" % (dotted, node.name, length))
    assert not too_long, too_long
