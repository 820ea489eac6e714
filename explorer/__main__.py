"""``python -m explorer ...``: see :mod:`explorer.cli`."""

import sys

from .cli import main

sys.exit(main())
