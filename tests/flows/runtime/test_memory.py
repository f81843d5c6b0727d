"""Where a build's memory comes from and goes back to (pieces `jemalloc`, `system_allocator`,
`trim_after_teardown`), and what the filter step's teardown hands back whatever the runtime does.

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


@pytest.mark.parametrize(("plain", "inside"), [("", "system"), ("system_allocator", None)])
def test_publishing_switches_arrows_pool_inside_and_back_after_an_error(monkeypatch, plain, inside):
    import pyarrow as pa

    from flows.runtime.memory import publishing

    monkeypatch.setenv("EXPRESS_PLAIN", plain)
    before = pa.default_memory_pool().backend_name
    with pytest.raises(RuntimeError):
        with publishing():
            assert pa.default_memory_pool().backend_name == (inside or before)
            raise RuntimeError("publish failed")
    assert pa.default_memory_pool().backend_name == before


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


def test_the_language_model_is_released_even_after_the_runtime_froze_it_at_setup(monkeypatch):
    """The runtime freezes what a setup loaded (freeze_after_setup); the filters' language model
    is still freed by the filter step's teardown and the runtime's trim before the extract step."""
    from flows.runtime.memory import trim

    monkeypatch.delenv("EXPRESS_PLAIN", raising=False)
    text = "I am worried about the exam tomorrow and cannot sleep."
    detect(text)
    model = identifier()
    table = weakref.ref(model.nb_ptc)
    gc.freeze()
    try:
        del model
        identifier.cache_clear()
        trim()
        assert table() is None, "the frozen language model's feature table is still held"
    finally:
        gc.unfreeze()
