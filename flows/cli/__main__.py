"""`python -m flows.cli` runs the `express` command."""
import sys

from flows.cli import main

sys.exit(main())
