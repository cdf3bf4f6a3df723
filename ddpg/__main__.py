"""``python -m ddpg``: the package's commands and what each does (ddpg.experiment.commands)."""
import sys

from ddpg.experiment.commands import main

if __name__ == "__main__":
    sys.exit(main())
