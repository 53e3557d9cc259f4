"""``python -m eris_lab.bench NAME [ARGS]`` runs one benchmark (see :data:`eris_lab.bench.BENCHES`)."""

import sys

from . import main

sys.exit(main())
