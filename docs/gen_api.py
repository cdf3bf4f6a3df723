"""Write the API reference, ``docs/api.md``, from the package's public names and docstrings.

    python docs/gen_api.py            # rewrite docs/api.md
    python docs/gen_api.py --check    # exit 1 when docs/api.md is not what the code gives

The reference is generated so that it follows the code: every module of the ``ddpg`` package
(found by walking it, so a moved or new module appears without editing this script) and every
public name of each. A module's public names are its ``__all__`` when it has one, else the
names its own source defines at top level without a leading underscore. A name a module
re-exports from another is listed under the module that defines it, and mentioned where it is
re-exported. ``tests/test_docs.py`` checks that the file is up to date.
"""
import argparse
import ast
import importlib
import inspect
import os
import pkgutil
import re
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
OUTPUT = os.path.join(HERE, "api.md")
PACKAGE = "ddpg"

#: The MXNet example's modules come first, in the order its users know them; the other
#: modules follow alphabetically.
FIRST = ["ddpg", "ddpg.ddpg", "ddpg.td3", "ddpg.policies", "ddpg.qfuncs", "ddpg.replay_mem",
         "ddpg.strategies", "ddpg.utils", "ddpg.logger", "ddpg.errors", "ddpg.envs"]


def module_names():
    """Every importable module of the package, without private ones (``_name``)."""
    package = importlib.import_module(PACKAGE)
    names = [PACKAGE]
    for info in pkgutil.walk_packages(package.__path__, PACKAGE + "."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    first = [name for name in FIRST if name in names]
    return first + sorted(set(names) - set(first))


def _source_tree(module):
    path = inspect.getsourcefile(module)
    with open(path) as source:
        text = source.read()
    return ast.parse(text), text.splitlines()


def _defined_here(tree):
    """``{name: line}`` of what the module's source defines at top level."""
    defined = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined[node.name] = node.lineno
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    defined[target.id] = node.lineno
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            defined[node.target.id] = node.lineno
    return defined


def _imported_from(tree, module_name):
    """``{name: module}`` of the names the module imports with ``from X import name``."""
    found = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative import
                parent = module_name.split(".")[:-node.level] if node.level else []
                base = ".".join(parent + ([base] if base else []))
            for alias in node.names:
                found[alias.asname or alias.name] = base
    return found


def public_names(module):
    """``(defined, reexported)``: the module's public names it defines (in source order) and
    ``{name: source module}`` of those it re-exports."""
    tree, _ = _source_tree(module)
    defined = _defined_here(tree)
    if hasattr(module, "__all__"):
        names = list(module.__all__)
    else:
        names = sorted((n for n in defined if not n.startswith("_")), key=defined.get)
    imported = _imported_from(tree, module.__name__)
    own, elsewhere = [], {}
    for name in names:
        obj = getattr(module, name)
        home = getattr(obj, "__module__", None) if (inspect.isclass(obj)
                                                    or inspect.isfunction(obj)) else None
        if name in defined and (home is None or home == module.__name__):
            own.append(name)
        else:
            elsewhere[name] = home or imported.get(name) or "?"
    return own, elsewhere


def _clean(text):
    """Remove what would differ between runs (object addresses)."""
    return re.sub(r" at 0x[0-9a-fA-F]+", "", text)


def _signature(name, obj):
    try:
        return _clean("%s%s" % (name, inspect.signature(obj)))
    except (TypeError, ValueError):
        return name + "(...)"


def _doc(obj):
    """The docstring, with lines that markdown would read as headings escaped."""
    doc = inspect.getdoc(obj) or "(no docstring)"
    return "\n".join("\\" + line if line.startswith("#") else line for line in doc.splitlines())


def _comment_doc(lines, lineno):
    """The ``#:`` comment lines just above a top-level assignment (1-based ``lineno``)."""
    found = []
    index = lineno - 2
    while index >= 0 and lines[index].lstrip().startswith("#:"):
        found.insert(0, lines[index].lstrip()[2:].strip())
        index -= 1
    return " ".join(found)


def _value_summary(value):
    if isinstance(value, np.generic):  # numpy 2 writes np.float64(0.5) where 1.x wrote 0.5
        value = value.item()
    text = _clean(repr(value))
    if len(text) > 120:
        text = text[:117] + "..."
    return text


def _members(cls):
    """Public methods and properties that ``cls`` itself defines, in source order."""
    members = []
    for name, member in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(member, (staticmethod, classmethod)):
            members.append((name, member.__func__))
        elif inspect.isfunction(member) or isinstance(member, property):
            members.append((name, member))
    return members


def render_name(module, name, lines, defined_lines):
    qualified = "%s.%s" % (module.__name__, name)
    obj = getattr(module, name)
    out = ["### `%s`" % qualified, ""]
    if inspect.isclass(obj) or inspect.isfunction(obj):
        kind = "class" if inspect.isclass(obj) else "function"
        out += ["%s" % kind, "", "```python", _signature(name, obj), "```", "", _doc(obj), ""]
        if inspect.isclass(obj):
            for member_name, member in _members(obj):
                out += ["#### `%s.%s`" % (name, member_name), ""]
                if isinstance(member, property):
                    out += ["property", "", _doc(member), ""]
                else:
                    out += ["```python", _signature(member_name, member), "```", "",
                            _doc(member), ""]
    else:
        comment = _comment_doc(lines, defined_lines.get(name, 0))
        out += ["`%s` = `%s`" % (type(obj).__name__, _value_summary(obj)), ""]
        if comment:
            out += [comment, ""]
    return out


def render():
    """The whole of ``docs/api.md`` as one string."""
    sys.path.insert(0, REPO)
    names = module_names()
    parts = ["# API reference", "",
             "Generated from the docstrings by `python docs/gen_api.py`; do not edit by hand.",
             "Every public module, class, function and constant of the package, the MXNet",
             "example's modules first. [Design](design.md) explains how they fit together.", "",
             "Modules: " + ", ".join("[`%s`](#%s)" % (name, slug("`%s`" % name))
                                     for name in names) + ".", ""]
    for module_name in names:
        module = importlib.import_module(module_name)
        tree, lines = _source_tree(module)
        defined_lines = _defined_here(tree)
        own, elsewhere = public_names(module)
        parts += ["## `%s`" % module_name, "", _doc(module), ""]
        if elsewhere:
            parts += ["Also available here: " + ", ".join(
                "`%s` (from `%s`)" % (name, home) for name, home in elsewhere.items()) + ".",
                ""]
        for name in own:
            parts += render_name(module, name, lines, defined_lines)
    return "\n".join(parts).rstrip() + "\n"


def slug(heading):
    """GitHub's anchor for a heading's text: lower case, punctuation dropped, spaces to
    hyphens (duplicates, which GitHub numbers ``-1``, ``-2``, are the caller's concern)."""
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="do not write; exit 1 when docs/api.md is out of date")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        with open(OUTPUT) as current:
            if current.read() != text:
                print("docs/api.md is out of date: run python docs/gen_api.py")
                return 1
        return 0
    with open(OUTPUT, "w") as output:
        output.write(text)
    print("wrote %s" % os.path.relpath(OUTPUT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
