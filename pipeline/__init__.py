"""The build as plain Python (no Prefect): one run and its steps over shards.

run.py (id, recipe, lock, inputs) -> shards.py (split into shards, completion markers) ->
filter_shards.py (parallel) -> dedupe_shards.py (in order) -> extract_shards.py (parallel) ->
assemble.py -> publish.py; rebuild.py plans an incremental run. Each step returns a typed result
(results.py) and writes a marker; a step whose marker exists is skipped, which is the only resume.
"""
