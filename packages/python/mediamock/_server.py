"""start_mediamock: runs the mockserver binary on a free loopback port with a
temporary state file, waits until it is healthy, and stops it (and removes
the file) on stop(), at the end of a ``with`` block, or when Python exits."""
import atexit
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from typing import Any, Dict, List, Optional, Sequence

from ._binary import binary_path
from ._errors import MediamockError
from .control import ApiClient, ControlClient, FixtureKey, Sandbox, SandboxSpec

_running = set()  # servers to stop at exit
_lock = threading.Lock()


def _stop_all():
    for server in list(_running):
        server._kill()


atexit.register(_stop_all)


def _alive(pid):
    # type: (int) -> bool
    if sys.platform == "win32":
        import ctypes
        handle = ctypes.windll.kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return False
        code = ctypes.c_ulong()
        ctypes.windll.kernel32.GetExitCodeProcess(handle, ctypes.byref(code))
        ctypes.windll.kernel32.CloseHandle(handle)
        return code.value == 259  # STILL_ACTIVE
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_stale(tmp):
    # type: (str) -> None
    """Removes the folders of servers whose owner is gone (killed before it
    could remove them): ``mediamock-*`` under the temporary folder with an
    ``owner.pid`` of a dead process. A folder without one is left alone."""
    try:
        names = os.listdir(tmp)
    except OSError:
        return
    for name in names:
        if not name.startswith("mediamock-"):
            continue
        path = os.path.join(tmp, name)
        try:
            with open(os.path.join(path, "owner.pid")) as f:
                owner = int(f.read().strip())
        except (OSError, ValueError):
            continue
        if owner > 0 and not _alive(owner):
            shutil.rmtree(path, ignore_errors=True)


def _death_signal():
    """On Linux, a function for the child to run before it starts: the kernel
    sends it SIGTERM when this process ends, however it ends (even killed)."""
    if not sys.platform.startswith("linux") or threading.current_thread() is not threading.main_thread():
        return None  # the signal follows the thread that started the child: only the main thread lives long enough
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def before_exec():
        prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # the parent ended before the line above
            os._exit(1)

    return before_exec


class MediamockSandbox:
    """A sandbox: a fresh workspace with keys of its own, and clients bound to it."""

    def __init__(self, raw, control, base_url):
        # type: (Sandbox, ControlClient, str) -> None
        self.raw = raw
        self.id = raw["id"]  # type: str
        self.api_key = raw["api_key"]  # type: str
        self.keys = dict(raw["keys"])  # type: Dict[str, str]
        self.control_token = raw["control_token"]  # type: str
        self.base_url = raw.get("base_url") or base_url  # type: str
        self.workspace_id = raw["workspace_id"]  # type: int
        #: The control API as the sandbox: faults, journal, coverage are its own.
        self.control = control.for_sandbox(raw)
        self._deleted = False

    def api(self, key=None):
        # type: (Optional[str]) -> ApiClient
        """The service's API with the sandbox's key (``api_key`` by default)."""
        return ApiClient(self.base_url, key or self.api_key)

    def run(self, limit="1h"):
        # type: (str) -> Dict[str, Any]
        """Ends now every job of the sandbox due within ``limit``, without moving the shared clock."""
        return self.control.run_sandbox(self.id, limit)

    def reset(self):
        # type: () -> Dict[str, Any]
        return self.control.reset_sandbox(self.id)

    def delete(self):
        # type: () -> None
        """Deletes the sandbox and everything it made; safe to call twice."""
        if not self._deleted:
            self._deleted = True
            self.control.delete_sandbox(self.id)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.delete()


class Mediamock:
    """A running server. Use it as a context manager, or call stop()."""

    def __init__(self, process, workdir, url, control_token, binary):
        #: The server process; None for a server connect_mediamock reached.
        self.process = process  # type: Optional[subprocess.Popen]
        self.pid = process.pid if process else None  # type: Optional[int]
        self.binary = binary  # type: str
        self._workdir = workdir
        #: The root: http://127.0.0.1:PORT
        self.url = url  # type: str
        #: The service's API: http://127.0.0.1:PORT/api/v1
        self.base_url = url + "/api/v1"  # type: str
        #: The control API: http://127.0.0.1:PORT/_mock
        self.control_url = url + "/_mock"  # type: str
        #: A client of the control API, as the whole server.
        self.control = ControlClient(self.control_url, control_token)
        #: The fixtures' keys; keys[0] is the first workspace's key with every scope.
        self.keys = []  # type: List[FixtureKey]
        #: The first workspace's API key with every scope (mk_test_all_scopes).
        self.api_key = "mk_test_all_scopes"

    def api(self, key=None):
        # type: (Optional[str]) -> ApiClient
        """The service's API with a key (``api_key`` by default)."""
        return ApiClient(self.base_url, key or self.api_key)

    def sandbox(self, spec=None, **fields):
        # type: (Optional[SandboxSpec], Any) -> MediamockSandbox
        """Creates a sandbox (``from_="Pixel Garage"``, ``credits=10``, ...)."""
        return MediamockSandbox(self.control.create_sandbox(spec, **fields), self.control, self.base_url)

    def stop(self, timeout=5.0):
        # type: (float) -> None
        """Stops the server (SIGTERM, then a kill after ``timeout`` seconds) and removes its state.
        A server connect_mediamock reached is left running."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._cleanup()

    def _kill(self):
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.kill()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                pass
        self._cleanup()

    def _cleanup(self):
        with _lock:
            _running.discard(self)
        if self.process is not None and self.process.stdin is not None:
            try:
                self.process.stdin.close()  # the pipe --exit-with-parent watches
            except OSError:
                pass
        if self._workdir:
            shutil.rmtree(self._workdir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def __repr__(self):
        return "<Mediamock %s pid %s>" % (self.url, self.pid)


def _tail(path, lines=15):
    try:
        with open(path, "rb") as f:
            text = f.read()[-8192:].decode("utf-8", "replace")
    except OSError:
        return ""
    return "\n".join(text.strip().splitlines()[-lines:])


def _healthy(url):
    try:
        with urllib.request.urlopen(url + "/_mock/health", timeout=1) as resp:
            resp.read()
            return resp.status == 200
    except OSError:
        return False


def start_mediamock(port=None, clock="real", speed=100, seed=None, fixtures=None, control_token=None,
                    log_level="warn", args=(), binary=None, start_timeout=15.0, env=None):
    # type: (Optional[int], str, float, Optional[int], Optional[str], Optional[str], str, Sequence[str], Optional[str], float, Optional[Dict[str, str]]) -> Mediamock
    """Starts a mediamock server for tests and returns once it is healthy.

    ``port`` on 127.0.0.1 (a free one by default; a busy one is an error),
    ``clock`` ("real", "manual", "virtual"), ``speed`` (100: jobs end in tens
    of milliseconds), ``seed``, ``fixtures`` (a file), ``control_token``
    (MOCKSERVER_CONTROL_TOKEN by default), ``log_level``, more mockserver
    flags in ``args``, the ``binary`` (MEDIAMOCK_BINARY, else the package's),
    ``start_timeout`` in seconds, the server's ``env``.

    Raises MediamockError (``.code`` says why) when it cannot start."""
    environ = dict(os.environ if env is None else env)
    binary = binary or binary_path()
    if control_token is None:
        control_token = environ.get("MOCKSERVER_CONTROL_TOKEN") or None
    _remove_stale(tempfile.gettempdir())
    workdir = tempfile.mkdtemp(prefix="mediamock-")
    db = os.path.join(workdir, "state.db")
    log_path = os.path.join(workdir, "server.log")
    argv = [binary, "--addr", "127.0.0.1:%d" % (port or 0), "--db", db, "--reset", "--clock", clock,
            "--speed", repr(speed), "--log-level", log_level,
            # The server stops when its standard input ends: this process
            # holds the pipe, and the system closes it when this process
            # dies, however it dies, on every OS.
            "--exit-with-parent"]
    if seed is not None:
        argv += ["--seed", str(seed)]
    if fixtures:
        argv += ["--fixtures", fixtures]
    if control_token:
        argv += ["--control-token", control_token]
    argv += list(args)
    try:
        with open(log_path, "wb") as log:
            process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT,
                                       env=environ, preexec_fn=_death_signal(), close_fds=True)
        with open(os.path.join(workdir, "owner.pid"), "w") as f:
            f.write(str(os.getpid()))
    except OSError as err:
        shutil.rmtree(workdir, ignore_errors=True)
        raise MediamockError("exited_at_start", "cannot run %s: %s" % (binary, err)) from err
    server = Mediamock(process, workdir, "", control_token, binary)
    with _lock:
        _running.add(server)
    try:
        deadline = time.monotonic() + start_timeout
        url = ""
        while True:
            code = process.poll()
            if code is not None:
                out = _tail(log_path)
                if "address already in use" in out or "Only one usage of each socket address" in out:
                    raise MediamockError("port_busy", "port %s on 127.0.0.1 is busy (another process listens there): "
                                         "leave port out for a free one, or pick another.\n%s" % (port, out))
                how = "signal %d" % -code if code < 0 else "exit code %d" % code
                raise MediamockError("exited_at_start", "mockserver (%s) exited before it was ready (%s)%s"
                                     % (binary, how, ":\n" + out if out else "; it printed nothing"))
            if time.monotonic() > deadline:
                raise MediamockError("start_timeout", "mockserver (%s) was not healthy within %g s; it was stopped.%s"
                                     % (binary, start_timeout, "\n" + _tail(log_path) if _tail(log_path) else ""))
            if not url:
                try:
                    with open(db + ".addr") as f:
                        url = f.read().strip()
                except OSError:
                    pass
            if url and _healthy(url):
                break
            time.sleep(0.02)
        _describe(server, url, control_token)
    except BaseException:
        server._kill()
        raise
    return server


def connect_mediamock(url, control_token=None):
    # type: (str, Optional[str]) -> Mediamock
    """Uses a server that runs already (a container in CI, a shared one): the
    same object as start_mediamock's, whose stop() leaves the server be. The
    pytest plugin does this when MEDIAMOCK_URL is set."""
    root = url.rstrip("/")
    if root.endswith("/api/v1"):
        root = root[:-len("/api/v1")]
    if control_token is None:
        control_token = os.environ.get("MOCKSERVER_CONTROL_TOKEN") or None
    if not _healthy(root):
        raise MediamockError("control_error", "no healthy mediamock server at %s (GET /_mock/health)" % root)
    server = Mediamock(None, None, root, control_token, None)
    _describe(server, root, control_token)
    return server


def _describe(server, url, control_token):
    server.url, server.base_url, server.control_url = url, url + "/api/v1", url + "/_mock"
    server.control = ControlClient(server.control_url, control_token)
    server.keys = _fixture_keys(server.control)
    if server.keys:
        server.api_key = server.keys[0]["token"]


def _fixture_keys(control):
    # type: (ControlClient) -> List[FixtureKey]
    keys = []  # type: List[FixtureKey]
    for ws in control.workspaces():
        if ws.get("sandbox_id"):
            continue  # not a fixture: other suites make and delete sandboxes meanwhile
        for t in control.workspace(ws["id"]).get("tokens", []):
            keys.append(FixtureKey(token=t["token"], type=t["type"], name=t["name"], scopes=list(t["scopes"]),
                                   workspace=ws["name"], workspace_id=ws["id"], plan=ws["plan"]))
    if not keys:
        return keys
    first = keys[0]["workspace_id"]
    best = max((k for k in keys if k["workspace_id"] == first and k["type"] == "api_key"),
               key=lambda k: len(k["scopes"]), default=None)
    return [best] + [k for k in keys if k is not best] if best else keys
