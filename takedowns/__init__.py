"""Takedowns across the warehouse (docs/takedowns.md): resolving the ledger, applying it to every
file the warehouse holds, verifying that nothing is left, and syncing it with Reddit."""
