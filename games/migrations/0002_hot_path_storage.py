"""Cheaper writes on the action hot path (docs/bench.md).

* ``games_matchevent.match_id`` loses its own index: the unique (match, seq) index already serves
  every lookup by match, and each insert paid for both.
* On PostgreSQL, the match snapshot (``games_match.state``, rewritten by every action and, at
  10-20 KB, stored compressed out of line) is compressed with lz4 instead of pglz: about 0.3-0.5 ms
  less PostgreSQL CPU per action. Needs PostgreSQL 14+ built with lz4 (Debian's and the official
  images are); elsewhere the column keeps the server's default.
"""
from django.db import migrations, models
import django.db.models.deletion


def lz4_state(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor != "postgresql" or connection.pg_version < 140000:
        return
    with connection.cursor() as cur:
        cur.execute("SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' "
                    "AND 'lz4' = ANY(enumvals)")
        if cur.fetchone():
            cur.execute("ALTER TABLE games_match ALTER COLUMN state SET COMPRESSION lz4")


def pglz_state(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor == "postgresql" and connection.pg_version >= 140000:
        with connection.cursor() as cur:
            cur.execute("ALTER TABLE games_match ALTER COLUMN state SET COMPRESSION default")


class Migration(migrations.Migration):

    dependencies = [
        ("games", "0001_initial"),
    ]

    operations = [
        migrations.AlterField(
            model_name="matchevent",
            name="match",
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE,
                                    related_name="events", to="games.match"),
        ),
        migrations.RunPython(lz4_state, pglz_state),
    ]
