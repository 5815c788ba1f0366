"""``python -m tensorfleet_operator.local``: the same as the ``tensorfleet`` console script."""
import sys

from .cli import main

sys.exit(main())
