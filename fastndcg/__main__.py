"""``python -m fastndcg``: the same as the ``fastndcg`` command."""

import sys

from fastndcg.cli import main

sys.exit(main())
