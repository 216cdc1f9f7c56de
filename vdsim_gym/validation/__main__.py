"""``python -m vdsim_gym.validation``: the validation table (``vdsim_gym.validation.main``)."""

import sys

from vdsim_gym.validation import main

sys.exit(main())
