"""The models' HTTP clients: one SSL context per process and per CA setting."""

from __future__ import annotations

import certifi
import pytest

from leanloop.httpclients import LoopLocalTransport, shared_ssl_context

__all__: list[str] = []


def test_every_pool_shares_one_ssl_context(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    first, second = LoopLocalTransport(), LoopLocalTransport()
    assert first._options["verify"] is second._options["verify"] is shared_ssl_context()


def test_another_ca_file_gets_its_own_context(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    default = shared_ssl_context()
    monkeypatch.setenv("SSL_CERT_FILE", certifi.where())
    own = shared_ssl_context()
    assert own is not default
    assert own is shared_ssl_context()
    assert own.cert_store_stats()["x509_ca"] > 0


def test_a_caller_may_still_bring_its_own_verify() -> None:
    assert LoopLocalTransport(verify=False)._options["verify"] is False
