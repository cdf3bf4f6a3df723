"""Figures of how tightly the package's components are coupled, read off the source.

    python tools/coupling_figures.py

Prints, for the tree it runs in:

- the parameters of ``DDPG.__init__`` (without ``self``);
- the distinct ``algo.*`` / ``algorithm.*`` attributes read outside the algorithm modules
  (``ddpg/ddpg.py``, ``ddpg/td3.py``), and the files that read them;
- the ``hasattr`` / ``getattr`` calls in ``ddpg/checkpoint/``;
- the modules outside ``ddpg/replay/`` that name a replay kind (``prioritized``,
  ``her`` / ``hindsight``, ``n_step``).

The same script measures the tree before and after a restructuring, so the two sets of
figures count the same things.
"""
import ast
import glob
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ALGORITHM_MODULES = ("ddpg/ddpg.py", "ddpg/td3.py")
ALGO_ATTRIBUTE = re.compile(r"\balgo(?:rithm)?\.(_?[A-Za-z]\w*)")
#: Names that an argparse group called ``algorithm`` has (experiment/cli.py): not couplings.
ARGPARSE_METHODS = {"add_argument", "add_argument_group", "add_mutually_exclusive_group"}
REFLECTION = re.compile(r"\b(?:hasattr|getattr)\(")
REPLAY_KIND = re.compile(r"prioriti[sz]ed|\bher\b|hindsight|n_step", re.IGNORECASE)


def package_files():
    return sorted(os.path.relpath(path, REPO)
                  for path in glob.glob(os.path.join(REPO, "ddpg", "**", "*.py"),
                                        recursive=True))


def read(path):
    with open(os.path.join(REPO, path)) as source:
        return source.read()


def init_parameters():
    tree = ast.parse(read("ddpg/ddpg.py"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "DDPG":
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                    args = item.args
                    return (len(args.posonlyargs) + len(args.args) - 1 + len(args.kwonlyargs)
                            + bool(args.vararg) + bool(args.kwarg))
    raise SystemExit("no DDPG.__init__ in ddpg/ddpg.py")


def code_without_comments_and_docstrings(text):
    """The source's code lines: docstrings and comments say what a name means, they do not
    couple anything."""
    tree = ast.parse(text)
    docstring_lines = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(
                    getattr(body[0], "value", None), ast.Constant) and isinstance(
                        body[0].value.value, str):
                docstring_lines.update(range(body[0].lineno, body[0].end_lineno + 1))
    return "\n".join(line.split("#")[0] for number, line in enumerate(text.splitlines(), 1)
                     if number not in docstring_lines)


def main():
    files = package_files()
    print("DDPG.__init__ parameters: %d" % init_parameters())
    readers = {}
    for path in files:
        if path in ALGORITHM_MODULES:
            continue
        found = set(ALGO_ATTRIBUTE.findall(
            code_without_comments_and_docstrings(read(path)))) - ARGPARSE_METHODS
        if found:
            readers[path] = found
    attributes = set().union(*readers.values()) if readers else set()
    print("algo.* attributes read outside the algorithm: %d, in %d files"
          % (len(attributes), len(readers)))
    for path in sorted(readers):
        print("  %-40s %s" % (path, " ".join(sorted(readers[path]))))
    reflection = {path: len(REFLECTION.findall(code_without_comments_and_docstrings(read(path))))
                  for path in files if path.startswith("ddpg/checkpoint/")}
    print("hasattr/getattr in ddpg/checkpoint/: %d" % sum(reflection.values()))
    kinds = [path for path in files if not path.startswith("ddpg/replay/")
             and REPLAY_KIND.search(code_without_comments_and_docstrings(read(path)))]
    print("modules outside ddpg/replay/ that name a replay kind: %d" % len(kinds))
    for path in kinds:
        print("  " + path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
