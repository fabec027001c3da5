"""tests/conftest.py's xdist scheduler: ``--dist loadfile`` with each ``SAME_WORKER`` group's files
as one work unit (one worker runs them all: the neural browser tests' shared model stack), the units
in collection order (``--no-loadscope-reorder``: test.sh's slowest files first); the stack stops
after the last of the session's tests that use it."""
from __future__ import annotations

from types import SimpleNamespace

from tests.browser.model_stack import GROUP, STACK_AGENTS, ModelStack, stack_items
from tests.conftest import SAME_WORKER, SameWorkerScheduling, pytest_xdist_make_scheduler


class Node:
    def __init__(self, name: str):
        self.name, self.sent, self.shut = name, [], False
        self.gateway, self.shutting_down = SimpleNamespace(id=name), False

    def send_runtest_some(self, indices):
        self.sent.extend(indices)

    def shutdown(self):
        self.shut = self.shutting_down = True

    def __repr__(self):
        return self.name


def config(dist: str = "loadfile", reorder: bool = False):
    values = {"tx": ["3*popen"], "dist": dist}
    return SimpleNamespace(getvalue=values.__getitem__, option=SimpleNamespace(loadscopereorder=reorder))


def test_a_groups_files_are_one_unit_on_one_worker_in_collection_order():
    one, two, three = SAME_WORKER[GROUP][:3]
    collection = ["tests/a.py::t1", f"{one}::t", "tests/a.py::t2", "tests/b.py::t", f"{two}::t1", f"{two}::t2",
                  "tests/c.py::t", f"{three}::t", "tests/d.py::t", "tests/e.py::t"]
    sched = SameWorkerScheduling(config())
    nodes = [Node("gw0"), Node("gw1"), Node("gw2")]
    for node in nodes:
        sched.add_node(node)
    for node in nodes:
        sched.add_node_collection(node, collection)
    sched.schedule()
    # the first three units go one to each worker in collection order, the group where its first file comes
    assert [next(iter(sched.assigned_work[node])) for node in nodes] == ["tests/a.py", GROUP, "tests/b.py"]
    stack = {i for i, nodeid in enumerate(collection) if nodeid.split("::")[0] in SAME_WORKER[GROUP]}
    assert stack <= set(nodes[1].sent) and not stack & set(nodes[0].sent + nodes[2].sent)
    assert [collection[i] for i in nodes[1].sent[:4]] == [f"{one}::t", f"{two}::t1", f"{two}::t2", f"{three}::t"]
    assert sorted(nodes[0].sent + nodes[1].sent + nodes[2].sent + [
        i for unit in sched.workqueue.values() for i, nodeid in enumerate(collection) if nodeid in unit]) \
        == list(range(len(collection)))


def test_other_files_are_their_own_unit_and_other_modes_are_xdists():
    sched = SameWorkerScheduling(config())
    assert sched._split_scope("tests/browser/test_lobby.py::test_x") == "tests/browser/test_lobby.py"
    assert {sched._split_scope(f"{path}::test_x") for path in SAME_WORKER[GROUP]} == {GROUP}
    assert isinstance(pytest_xdist_make_scheduler(config(), None), SameWorkerScheduling)
    assert pytest_xdist_make_scheduler(config("load"), None) is None
    assert pytest_xdist_make_scheduler(config("loadscope"), None) is None


def test_the_group_lists_the_stacks_test_files():
    assert set(SAME_WORKER[GROUP]) == {agent.file for agent in STACK_AGENTS.values()}


def test_the_stack_stops_after_the_sessions_last_stack_test():
    files = list(SAME_WORKER[GROUP])
    items = [SimpleNamespace(nodeid=f"{files[0]}::t1"), SimpleNamespace(nodeid="tests/browser/test_lobby.py::t"),
             SimpleNamespace(nodeid=f"{files[3]}::t2")]
    assert [item.nodeid for item in stack_items(items)] == [f"{files[0]}::t1", f"{files[3]}::t2"]
    closed = []
    stack = ModelStack("http://x", None, None, (), {item.nodeid for item in stack_items(items)},
                       lambda: closed.append(1))
    stack.done(f"{files[3]}::t2")
    assert closed == [] and not stack.closed
    stack.done(f"{files[0]}::t1")
    stack.done(f"{files[0]}::t1")
    assert closed == [1] and stack.closed
