"""`python -m flows.cli` runs the `express` command."""
import sys

from flows.cli import entry

sys.exit(entry())
