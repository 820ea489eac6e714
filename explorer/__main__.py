"""``python -m explorer ...``: see :mod:`explorer.cli.main`."""

import sys

from explorer.cli.main import main

sys.exit(main())
