"""``python -m eris_lab.lab lab|tune`` starts JupyterLab or the Voila tuning app (:mod:`.server`)."""

import sys

from .server import main

sys.exit(main())
