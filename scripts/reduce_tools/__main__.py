"""python -m reduce_tools: the same as scripts/suite."""

import sys

from .cli import main

sys.exit(main())
