"""Session fixtures: the deploy tools (see deploy_tools.py)."""
import pytest

from deploy_tools import tool


@pytest.fixture(scope='session')
def helm() -> str:
    return tool('helm')


@pytest.fixture(scope='session')
def promtool() -> str:
    return tool('promtool')


@pytest.fixture(scope='session')
def hadolint() -> str:
    return tool('hadolint')


@pytest.fixture(scope='session')
def kubernetes_validate() -> str:
    return tool('kubernetes-validate')
