"""The local Dask workers the sharded build starts run with our settings, not Dask's defaults that
slow extraction down (see flows/dask_runner.py::LOCAL_WORKER_CONFIG)."""
import os

MONITOR_KEYS = ("distributed.admin.tick.interval", "distributed.worker.memory.monitor-interval",
                "distributed.admin.system-monitor.interval")


def _worker_facts() -> dict:
    import dask

    return {"malloc_trim": os.environ.get("MALLOC_TRIM_THRESHOLD_"),
            "profiler": dask.config.get("distributed.worker.profile.enabled"),
            "monitors": [dask.config.get(k) for k in MONITOR_KEYS],
            "omp_threads": os.environ.get("OMP_NUM_THREADS"), "pid": os.getpid()}


def test_local_workers_keep_glibc_trimming_and_run_without_the_profiler_and_with_slow_monitors(prefect_harness):
    from prefect import flow, task
    from prefect.cache_policies import NO_CACHE

    from flows.dask_runner import task_runner

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


def test_the_process_that_wires_a_build_does_not_import_presidio_or_spacy():
    """The flow process only wires: the detectors and the model load on the workers that use them
    (Presidio was 1.7 s of every build's and every `express` command's start-up); the gate's
    imports are warmed in a background thread while the workers extract."""
    import subprocess
    import sys
    from pathlib import Path

    code = ("import sys, flows.build, flows.cli; "
            "print(sorted(m for m in ('presidio_analyzer', 'spacy', 'great_expectations') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[2],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


def test_clients_of_the_temporary_api_load_one_root_certificate_and_still_reach_it(tmp_path):
    """The temporary API speaks plain HTTP; its clients get a CA file of one certificate instead
    of certifi's bundle (two bundle loads were ~90 ms of every task on a worker), and a build
    under it still talks to the API (a task run is recorded). Its server runs in a child process
    whose app is never imported by the process that started it (~80 MB there); the work given
    for its start-up runs once, while it starts."""
    import ssl
    import subprocess
    import sys
    from pathlib import Path

    code = ("import os, ssl; from flows.dask_runner import share_temporary_api\n"
            "seen = []; url = share_temporary_api(lambda: seen.append(os.environ.get('PREFECT_API_URL')))\n"
            "assert seen == [None], seen  # called once, while the server started (before its URL was exported)\n"
            "from prefect import flow, task; from prefect.client.orchestration import get_client\n"
            "@task\ndef one(): return 1\n"
            "@flow\ndef f(): return one.submit().result()\n"
            "f()\n"
            "with get_client(sync_client=True) as c: runs = c.read_task_runs()\n"
            "import sys; assert 'prefect.server.api.server' not in sys.modules, 'the server app was imported here'\n"
            "print(url.split(':')[0], os.environ['PREFECT_API_SSL_CERT_FILE'], len(runs))")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API")} | {"PREFECT_HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[2], env=env,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    scheme, ca_file, task_runs = done.stdout.split()[-3:]
    assert scheme == "http" and int(task_runs) >= 1
    assert Path(ca_file).read_text().count("BEGIN CERTIFICATE") == 1
    assert len(ssl.create_default_context(cafile=ca_file).get_ca_certs()) == 1


def test_a_configured_api_starts_no_server_and_runs_no_start_up_work(monkeypatch):
    from flows.dask_runner import share_temporary_api

    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")
    calls = []
    assert share_temporary_api(lambda: calls.append(1)) is None
    assert calls == []
