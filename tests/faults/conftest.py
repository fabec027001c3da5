import shutil

import pytest

from tests.faults.stack import Stack


@pytest.fixture(scope="module")
def stack():
    if not shutil.which("redis-server") or not shutil.which("runuser"):
        pytest.skip("the fault tests start their own PostgreSQL and Redis servers")
    s = Stack()
    try:
        yield s.start()
    finally:
        s.close()
