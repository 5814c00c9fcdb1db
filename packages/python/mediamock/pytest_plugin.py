"""The pytest plugin of mediamock (loaded by pytest through the ``pytest11``
entry point once the package is installed):

- ``mediamock_server`` (session): one server for the whole run, or the
  running one at MEDIAMOCK_URL when that is set (a container in CI);
- ``mediamock`` (function): a sandbox of its own for each test, deleted after.

Override ``mediamock_options`` (session scope) to start the server otherwise,
and ``mediamock_sandbox_spec`` (function scope) to start each sandbox as
another fixture workspace::

    @pytest.fixture(scope="session")
    def mediamock_options():
        return {"seed": 7, "args": ["--strict"]}
"""
import os

import pytest

from . import connect_mediamock, start_mediamock


@pytest.fixture(scope="session")
def mediamock_options():
    """The keyword arguments of start_mediamock for the session's server."""
    return {}


@pytest.fixture(scope="session")
def mediamock_server(mediamock_options):
    """One mediamock server for the session (stopped at its end), or the one at MEDIAMOCK_URL."""
    url = os.environ.get("MEDIAMOCK_URL")
    if url:
        server = connect_mediamock(url, mediamock_options.get("control_token"))
    else:
        server = start_mediamock(**mediamock_options)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def mediamock_sandbox_spec():
    """What each test's sandbox starts as (a SandboxSpec); Acme Studio's copy by default."""
    return {}


@pytest.fixture
def mediamock(mediamock_server, mediamock_sandbox_spec, request):
    """A sandbox of the session's server for this test: ``.api_key``, ``.keys``,
    ``.control`` (its faults, journal, coverage), ``.api()``, ``.run()``."""
    spec = dict(mediamock_sandbox_spec)
    spec.setdefault("name", request.node.nodeid[-100:])
    sandbox = mediamock_server.sandbox(spec)
    try:
        yield sandbox
    finally:
        sandbox.delete()
