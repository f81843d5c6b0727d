"""The local Dask workers the sharded build starts run with our settings, not Dask's defaults that
slow extraction down (pieces `dask_quiet`, `dask_no_trim`, `gc_thresholds`:
flows/runtime/dask_workers.py)."""
import gc
import os

from tests.fresh_python import fresh_python

MONITOR_KEYS = ("distributed.admin.tick.interval", "distributed.worker.memory.monitor-interval",
                "distributed.admin.system-monitor.interval")


def _worker_facts() -> dict:
    import dask

    return {"malloc_trim": os.environ.get("MALLOC_TRIM_THRESHOLD_"),
            "profiler": dask.config.get("distributed.worker.profile.enabled"),
            "monitors": [dask.config.get(k) for k in MONITOR_KEYS],
            "omp_threads": os.environ.get("OMP_NUM_THREADS"), "gc": gc.get_threshold(), "pid": os.getpid()}


def test_local_workers_keep_glibc_trimming_and_run_without_the_profiler_with_slow_monitors_and_our_collector(prefect_harness):
    from prefect import flow, task
    from prefect.cache_policies import NO_CACHE

    from flows.dask_runner import task_runner
    from flows.runtime.collector import GC_THRESHOLDS

    facts_task = task(_worker_facts, name="worker-facts", cache_policy=NO_CACHE)

    @flow(name="dask-worker-facts")
    def facts_flow() -> dict:
        return facts_task.submit().result()

    facts = facts_flow.with_options(task_runner=task_runner(1))()
    assert facts["pid"] != os.getpid()  # really ran in a worker process
    assert facts["malloc_trim"] is None and facts["profiler"] is False
    # Dask's 20 ms tick and 100 ms memory monitor cost an idle 2-worker cluster 4.7 CPU s per 30 s
    assert facts["monitors"] == ["1s", "1s", "2s"]
    assert facts["omp_threads"] == "1"  # Dask's other pre-spawn settings are kept
    assert facts["gc"] == GC_THRESHOLDS != (700, 10, 10)  # set by the worker's preload, not Python's default


def test_the_process_that_wires_a_build_does_not_import_presidio_or_spacy():
    """The flow process only wires: the detectors and the model load on the workers that use them
    (Presidio was 1.7 s of every build's and every `express` command's start-up); the gate's
    imports are warmed in a background thread while the workers extract."""
    code = ("import sys, flows.build, flows.cli; "
            "print(sorted(m for m in ('presidio_analyzer', 'spacy', 'great_expectations') if m in sys.modules))")
    assert fresh_python(code).strip() == "[]"
