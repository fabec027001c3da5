"""agents/tasks.py: an LLM turn's thread gives its PostgreSQL connection back when the task ends."""
from __future__ import annotations

import pytest
from django.db import connection

from agents.llm.connections import release_after_turn, release_connection


@pytest.mark.django_db(transaction=True)
def test_only_a_turn_that_waited_on_an_endpoint_gives_its_connection_back():
    release_after_turn()   # an earlier test of this thread may have played an LLM turn outside a task: its end
    connection.ensure_connection()
    release_after_turn()                 # a rule agent's turn: the connection is kept
    assert connection.connection is not None
    release_connection()                 # the LLM agent, before its request
    assert connection.connection is None
    connection.ensure_connection()       # the answer applied
    release_after_turn()                 # the task's end
    assert connection.connection is None
    connection.ensure_connection()
    release_after_turn()                 # once only
    assert connection.connection is not None
