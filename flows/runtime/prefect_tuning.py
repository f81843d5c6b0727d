"""How the temporary Prefect API and its clients are tuned (pieces `retry_soon`, `no_heartbeats`,
`one_certificate`); flows/prefect_api.py starts the API itself."""
from __future__ import annotations

import hashlib
import os
import tempfile
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

from flows import prefect_api
from flows.runtime import retry_soon
from flows.runtime.pieces import enabled


def server_app() -> str:
    """The app the temporary API serves."""
    return retry_soon.APP if enabled("retry_soon") else prefect_api.APP


def client_env() -> dict[str, str]:
    """Added to the command's environment once the temporary API is up (its workers inherit it)."""
    if not enabled("one_certificate"):
        return {}
    return {"PREFECT_API_SSL_CERT_FILE": str(one_root_certificate())}


def without_heartbeats() -> AbstractContextManager[Any]:
    """Flow runs under a temporary API send no heartbeats: Prefect beats from a thread that sleeps
    in 1 s steps and is joined when the run ends. The beats feed a lasting server's detection of
    crashed runs; a temporary API ends with its command. A user's API keeps them."""
    if not (enabled("no_heartbeats") and prefect_api.is_temporary()):
        return nullcontext()
    from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings

    return temporary_settings(updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None})


def one_root_certificate() -> Path:
    """A CA file of one certificate (certifi's first): the temporary API's clients speak plain HTTP
    to 127.0.0.1 and never verify a certificate, yet each builds a verifying TLS context from
    certifi's whole bundle, twice per task on a Dask worker."""
    import certifi

    bundle = Path(certifi.where()).read_text(encoding="ascii")
    end = "-----END CERTIFICATE-----\n"
    first = bundle[bundle.index("-----BEGIN CERTIFICATE-----"):bundle.index(end) + len(end)]
    path = Path(tempfile.gettempdir()) / f"express-local-api-ca-{hashlib.sha256(first.encode()).hexdigest()[:12]}.pem"
    if not path.exists():
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(first, encoding="ascii")
        tmp.replace(path)
    return path
