"""pytest fixtures for testing an implementation with pubproof's strategies.

Load it from a ``conftest.py``::

    pytest_plugins = ["pubproof.testing.pytest_plugin"]

- ``pubproof_decoder``: a function ``check(decode, packet)`` that holds ``decode`` (your
  decoder: returns for bytes it accepts, raises for bytes it rejects) to the model's verdict
  on a packet of :func:`pubproof.testing.packets`;
- ``pubproof_broker``: a :class:`~pubproof.testing.fixtures.BrokerUnderTest` for the broker
  that ``--pubproof-broker mqtt://HOST:PORT`` (or ``PUBPROOF_BROKER``) names, in the edition
  of ``--pubproof-edition`` (default 3.1.1); a test that asks for it is skipped when no
  broker is named.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

from pubproof.model.editions import Edition
from pubproof.testing.fixtures import BrokerUnderTest, decoder_agrees
from pubproof.testing.strategies import Judged

BROKER_VARIABLE = "PUBPROOF_BROKER"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("pubproof")
    group.addoption(
        "--pubproof-broker", default=None, metavar="mqtt://HOST:PORT",
        help=f"the broker pubproof_broker tests (default: ${BROKER_VARIABLE})",
    )  # fmt: skip
    group.addoption(
        "--pubproof-edition", default="3.1.1", choices=[e.value for e in Edition],
        help="the edition pubproof_broker speaks (default 3.1.1)",
    )  # fmt: skip


@pytest.fixture(scope="session")
def pubproof_decoder() -> Callable[[Callable[[bytes], object], Judged], None]:
    """Hold a decoder to the model's verdict on one packet (session-scoped: it keeps no
    state, so a ``@given`` test may ask for it)."""
    return decoder_agrees


@pytest.fixture(scope="session")
def pubproof_broker(request: pytest.FixtureRequest) -> BrokerUnderTest:
    """The broker under test (skipped when none is named)."""
    url = request.config.getoption("--pubproof-broker") or os.environ.get(BROKER_VARIABLE)
    if not url:
        pytest.skip(f"no broker named (--pubproof-broker or ${BROKER_VARIABLE})")
    edition = Edition(request.config.getoption("--pubproof-edition"))
    return BrokerUnderTest(str(url), edition)
