"""``python -m ddpg.export``: the command of :mod:`ddpg.experiment.export`, under its short
name."""
import sys

from ddpg.experiment.export import main

if __name__ == "__main__":
    main(sys.argv[1:])
