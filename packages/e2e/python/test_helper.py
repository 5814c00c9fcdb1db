"""The helper's contract: what it exposes, which binary it runs, and a clear
error (with no process left behind) for every way a start can fail."""
import os
import socket
import stat
import sys

import pytest

import mediamock
from mediamock import MediamockError, binary_path, current_platform, start_mediamock


def alive(pid):
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:  # a zombie (ended, not yet reaped by its parent) counts as gone
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


def test_start_exposes_url_keys_control_and_stops():
    with start_mediamock(seed=7) as mm:
        assert mm.url.startswith("http://127.0.0.1:")
        assert mm.base_url == mm.url + "/api/v1"
        assert mm.api_key == "mk_test_all_scopes" == mm.keys[0]["token"]
        assert any(k["token"] == "mk_test_no_credits" and k["workspace"] == "Empty Wallet Co" for k in mm.keys)
        assert mm.control.health()["status"] == "ok"
        assert mm.api().get("/account").body["workspace_name"] == "Acme Studio"
        denied = mm.api("mk_test_read_only").post("/generations", {"modality": "image", "model_id": "flux-2-pro", "prompt": "x"})
        assert (denied.status, denied.error_code) == (403, "insufficient_scope")
        pid = mm.pid
    assert not alive(pid)
    mm.stop()  # twice is fine


def test_the_binary_is_the_wheels_at_the_packages_version():
    path = binary_path()
    assert path.startswith(os.path.dirname(mediamock.__file__))
    assert "unknown" not in mediamock.__version__
    assert current_platform() in mediamock.SUPPORTED_PLATFORMS


def test_platform_without_a_binary(monkeypatch):
    monkeypatch.setenv("MEDIAMOCK_PLATFORM", "freebsd-riscv64")
    with pytest.raises(MediamockError) as err:
        start_mediamock()
    assert err.value.code == "unsupported_platform"
    assert "freebsd-riscv64" in str(err.value) and "MEDIAMOCK_BINARY" in str(err.value)


def test_another_platforms_wheel_is_named(monkeypatch):
    other = "linux-arm64" if current_platform() == "darwin-arm64" else "darwin-arm64"
    monkeypatch.setenv("MEDIAMOCK_PLATFORM", other)
    with pytest.raises(MediamockError) as err:
        start_mediamock()
    assert err.value.code == "binary_missing"
    assert other in str(err.value) and "MEDIAMOCK_BINARY" in str(err.value)


def test_missing_binary(monkeypatch):
    monkeypatch.setenv("MEDIAMOCK_BINARY", "/nonexistent/mockserver")
    with pytest.raises(MediamockError) as err:
        start_mediamock()
    assert err.value.code == "binary_missing" and "/nonexistent/mockserver" in str(err.value)


def test_busy_port():
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        port = blocker.getsockname()[1]
        with pytest.raises(MediamockError) as err:
            start_mediamock(port=port)
    assert err.value.code == "port_busy" and ("port %d" % port) in str(err.value)


def test_server_that_dies_at_start():
    with pytest.raises(MediamockError) as err:
        start_mediamock(args=["--clock", "sideways"])
    assert err.value.code == "exited_at_start"
    assert "exit code 2" in str(err.value) and "sideways" in str(err.value)


@pytest.mark.skipif(sys.platform == "win32", reason="a shell script stands in for the server")
def test_server_that_never_gets_healthy_is_stopped(tmp_path):
    fake = tmp_path / "mockserver"
    fake.write_text('#!/bin/sh\necho "$$" > "$0.pid"\nexec sleep 300\n')
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    with pytest.raises(MediamockError) as err:
        start_mediamock(binary=str(fake), start_timeout=0.5)
    assert err.value.code == "start_timeout"
    pid = int((tmp_path / "mockserver.pid").read_text())
    assert not alive(pid)
