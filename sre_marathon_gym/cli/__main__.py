"""`python -m sre_marathon_gym.cli`: the `sre-marathon` command."""

import sys

from .main import main

sys.exit(main())
