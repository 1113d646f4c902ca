"""`python -m sre_marathon_gym.cli`: the `sre-marathon` command."""

import sys

from .commands import main

sys.exit(main())
