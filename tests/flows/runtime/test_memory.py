"""Where a build's memory comes from (piece `jemalloc`), and what the filter step's teardown hands
back whatever the runtime does.

What is checked of the teardown is what the allocator cannot change: nothing holds the language
model or its feature table any more, so their bytes are free. How much of that the RSS gives back
depends on malloc (glibc's trim)."""
from __future__ import annotations

import gc
import weakref

import pytest

from filters.language import detect, identifier
from tests.fresh_python import environ_without, fresh_python

POOL = ("from flows import runtime; runtime.process_start()\n"
        "import subprocess, sys, pyarrow\n"
        "child = 'import pyarrow; print(pyarrow.default_memory_pool().backend_name)'\n"
        "print(pyarrow.default_memory_pool().backend_name)\n"
        "print(subprocess.run([sys.executable, '-c', child], capture_output=True, text=True).stdout.strip())")


def test_a_command_and_the_processes_it_starts_use_arrows_jemalloc_pool():
    env = environ_without("ARROW_DEFAULT_MEMORY_POOL", "EXPRESS_PLAIN")
    assert fresh_python(POOL, env=env).split() == ["jemalloc", "jemalloc"]
    # without the piece, pyarrow's own default differs: the test would notice the piece gone
    assert fresh_python(POOL, env={**env, "EXPRESS_PLAIN": "jemalloc"}).split()[0] != "jemalloc"


def test_the_filter_steps_teardown_releases_the_language_model_which_reloads_when_needed_again():
    from pipeline.filter_shards import FilterStep

    text = "I feel so guilty about missing my sister's graduation last weekend."
    before = detect(text)  # the model is loaded (or was already)
    model = identifier()
    held = model.nb_ptc.nbytes
    table = weakref.ref(model.nb_ptc)  # (the identifier itself takes no weak reference)
    del model
    FilterStep().teardown()
    gc.collect()
    assert table() is None, "something still holds the language model's feature table"
    assert held > 20 * 2**20  # the feature table alone: what a worker no longer carries
    assert detect(text) == before
    assert identifier() is not None and identifier().nb_ptc.nbytes == held  # loaded again, the same
