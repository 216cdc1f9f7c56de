"""``python -m vdsim_gym.cli``: the same as the ``vdsim-gym`` command."""

import sys

from vdsim_gym.cli.main import main

sys.exit(main())
