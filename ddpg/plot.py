"""``python -m ddpg.plot``: the command of :mod:`ddpg.experiment.plot`, under its short name."""
import sys

from ddpg.experiment.plot import main

if __name__ == "__main__":
    sys.exit(main())
