"""``python -m eris_lab.lab lab|tune`` is ``eris-lab lab`` / ``eris-lab tune-app`` (``make lab`` / ``make tune``)."""

import sys

from ..cli import main

COMMANDS = {"lab": "lab", "tune": "tune-app"}  # this module's words -> the command line's
args = sys.argv[1:]
if not args or args[0] not in COMMANDS:
    print(f"usage: python -m eris_lab.lab {{lab,tune}} [ARGS] (= eris-lab lab / eris-lab tune-app)\n"
          f"eris-lab: error: expected lab or tune, got {args[0] if args else 'nothing'!r}", file=sys.stderr)
    sys.exit(2)
sys.exit(main([COMMANDS[args[0]], *args[1:]]))
