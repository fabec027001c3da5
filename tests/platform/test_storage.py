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
