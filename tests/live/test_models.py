"""The hot-path storage choices of migration 0002 hold on the real PostgreSQL."""
from __future__ import annotations

import pytest
from django.db import connection

pytestmark = pytest.mark.django_db


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL only")
def test_the_snapshot_column_is_lz4_compressed_where_the_server_has_lz4():
    with connection.cursor() as cur:
        cur.execute("SELECT 'lz4' = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'")
        has_lz4 = cur.fetchone()[0]
        cur.execute("SELECT attcompression FROM pg_attribute WHERE attrelid = 'games_match'::regclass "
                    "AND attname = 'state'")
        compression = cur.fetchone()[0]
    assert compression == ("l" if has_lz4 else "")


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL only")
def test_events_carry_one_index_per_lookup_not_a_redundant_one_on_match():
    with connection.cursor() as cur:
        cur.execute("SELECT indexdef FROM pg_indexes WHERE tablename = 'games_matchevent'")
        defs = [row[0] for row in cur.fetchall()]
    assert not any(d.endswith("(match_id)") for d in defs), defs
    assert any("(match_id, seq)" in d for d in defs)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL only")
@pytest.mark.django_db(transaction=True)
def test_the_static_part_of_a_snapshot_is_stored_once_and_every_reader_sees_the_whole_state():
    from live import match_store
    from live.models import Match
    from live.services import match_apply_action, match_replay

    from tests.support.factories import colors_match, listener_target

    match, _ = colors_match(rounds=3)
    whole = Match.objects.get(pk=match.id).state
    assert "rounds" in whole
    match_apply_action(match_id=match.id, role="speaker", action={"type": "chat", "text": "the blue one"},
                       client_action_id="s1")
    with connection.cursor() as cur:
        cur.execute("SELECT state::text, state_static::text FROM games_match WHERE id = %s", [match.id])
        state_text, static_text = cur.fetchone()
    assert '"rounds"' not in state_text and '"rounds"' in static_text   # each action rewrites only the rest
    loaded = Match.objects.get(pk=match.id)
    assert loaded.state["rounds"] == whole["rounds"] and loaded.state["messages"]
    assert Match.objects.only("id", "state").get(pk=match.id).state == loaded.state   # deferred static loads
    # a process that has not seen the match (both caches empty) rebuilds the same state
    match_store.state_cache._data.clear()
    match_store.static_cache._data.clear()
    match_apply_action(match_id=match.id, role="listener",
                       action={"type": "click", "position": listener_target(loaded), "round": 1},
                       client_action_id="l1")
    final = Match.objects.get(pk=match.id)
    assert final.state["round"] == 1 and final.state["rounds"] == whole["rounds"]
    assert match_replay(final) == final.state
