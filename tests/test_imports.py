"""The ``ddpg`` package has no import cycles, counting imports inside functions too.

Every module's imports of ``ddpg`` modules are read with ``ast`` (top-level and nested ones:
an import inside a function hides a cycle from Python until that function runs, not from
this test), resolved to the module they load (``from ddpg import x`` loads ``ddpg.x`` when
``x`` is a submodule, else the package; relative imports are resolved against the module's
package), and the graph is checked for a cycle. A module's import of its own parent
packages, which Python runs before it, is not counted: every module has it.
"""
import ast
import os

from test_layout import modules as package_modules


def imported_modules(module, path, modules, package="ddpg"):
    """The modules of ``modules`` that ``module`` (its source at ``path``) imports, anywhere
    in its code."""
    with open(path, encoding="utf-8") as source:
        tree = ast.parse(source.read(), filename=path)
    is_package = os.path.basename(path) == "__init__.py"
    own_package = module if is_package else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    found.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = own_package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            if target != package and not target.startswith(package + "."):
                continue
            for alias in node.names:
                submodule = "%s.%s" % (target, alias.name)
                # from ddpg import x: the submodule ddpg.x when there is one, else a name
                # of the package ddpg
                found.add(submodule if submodule in modules else target)
    found.discard(module)
    return found


def import_graph():
    modules = package_modules()
    return {module: imported_modules(module, path, modules)
            for module, path in modules.items()}


def find_cycle(graph):
    """A list of modules ``[a, b, ..., a]`` that import each other in a circle, or None."""
    state = {}  # module -> "open" while on the DFS path, "done" after
    for start in sorted(graph):
        if start in state:
            continue
        path = [start]
        stack = [iter(sorted(graph[start]))]
        state[start] = "open"
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = "done"
                stack.pop()
            elif state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt]
            elif nxt not in state and nxt in graph:
                state[nxt] = "open"
                path.append(nxt)
                stack.append(iter(sorted(graph[nxt])))
    return None


def test_the_package_has_no_import_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_graph_reads_every_form_of_import():
    graph = import_graph()
    assert "ddpg.ddpg" in graph["ddpg.td3"]                     # from ddpg.ddpg import DDPG
    assert "ddpg.training" in graph["ddpg.ddpg"]                # from ddpg import training
    assert "ddpg.checkpoint" in graph["ddpg.ddpg"]              # a subpackage, the same way
    assert "ddpg.envs.base" in graph["ddpg.envs.cartpole"]      # from .base import Env
    assert "ddpg.envs.gym_state" in graph["ddpg.envs.gym_env"]  # from . import gym_state
    assert "ddpg.envs.base" in graph["ddpg.envs"]               # relative, in an __init__
    # inside a function
    assert "ddpg.experiment.plot" in graph["ddpg.experiment.sweep_results"]
    # from a package, a name that is not a submodule: the package itself
    assert "ddpg.experiment.cli" in graph["ddpg.experiment.resume"]


def test_find_cycle_names_the_circle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"x": {"y"}, "y": {"y2"}, "y2": {"y"}}) == ["y", "y2", "y"]
