"""``python -m pagetwin`` runs the command line, as the ``pagetwin`` script does."""

import sys

from pagetwin.cli import main

sys.exit(main())
