"""``python -m eris_lab.bench NAME [ARGS]`` is ``eris-lab bench NAME [ARGS]`` (see :data:`eris_lab.bench.BENCHES`)."""

import sys

from ..cli import main

sys.exit(main(["bench", *sys.argv[1:]]))
