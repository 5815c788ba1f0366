"""`python -m tensorfleet_train ...`: the same as the `tensorfleet-train` console script (cli.main)."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
