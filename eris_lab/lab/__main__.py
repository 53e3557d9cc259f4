"""``python -m eris_lab.lab lab|tune`` is ``eris-lab lab`` / ``eris-lab tune-app`` (the Makefile's ``make lab`` / ``make tune``)."""

import sys

from ..cli import main

args = sys.argv[1:]
sys.exit(main([{"tune": "tune-app"}.get(args[0], args[0]), *args[1:]] if args else ["lab", "--help"]))
