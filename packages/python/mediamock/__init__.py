"""mediamock: a stateful mock of the media generation service's REST API v1,
with its ``mockserver`` binary for this platform and helpers to run it in
tests::

    from mediamock import start_mediamock

    with start_mediamock() as mm:
        sandbox = mm.sandbox()
        sandbox.control.fail_next()
        created = sandbox.api().post("/generations", {...})

With pytest, the fixtures ``mediamock_server`` (one server per session) and
``mediamock`` (a sandbox per test) are there once the package is installed.
"""
from ._binary import SUPPORTED as SUPPORTED_PLATFORMS, binary_path, current_platform
from ._errors import MediamockError
from ._server import Mediamock, MediamockSandbox, connect_mediamock, start_mediamock
from .control import ApiClient, ControlClient, FailRule, FixtureKey, Response, Sandbox, SandboxSpec


def _version():
    try:
        from importlib.metadata import PackageNotFoundError, version
        try:
            return version("mediamock")
        except PackageNotFoundError:
            return "0+unknown"
    except ImportError:  # Python < 3.8
        return "0+unknown"


__version__ = _version()

__all__ = [
    "ApiClient", "ControlClient", "FailRule", "FixtureKey", "Mediamock", "MediamockError", "MediamockSandbox",
    "Response", "Sandbox", "SandboxSpec", "SUPPORTED_PLATFORMS", "binary_path", "current_platform",
    "connect_mediamock", "start_mediamock", "__version__",
]
