"""``python -m vdsim_gym.analysis.validation``: the validation table
(``vdsim_gym.analysis.validation.main``)."""

import sys

from vdsim_gym.analysis.validation import main

sys.exit(main())
