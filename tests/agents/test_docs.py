"""Each game's docs page lists its agents as the registry has them (issue 10, item 6): the tables
between the ``agents:<game>`` markers are generated (``python manage.py agent_docs``) and this test
fails when one is stale; the README's game table names exactly the registered agents of each game."""
from __future__ import annotations

import re

from agents import docs
from agents.registry import all_agents


def test_docs_agent_tables_match_the_registry():
    stale = docs.stale_pages()
    assert not stale, f"stale agent tables, run `python manage.py agent_docs`: {stale}"


def test_every_game_with_agents_has_a_docs_table():
    games = {spec.game_id for spec in all_agents().values()}
    assert games <= set(docs.doc_pages())
    for game_id, page in docs.doc_pages().items():
        text = (docs.ROOT / page).read_text()
        for spec in all_agents().values():
            if spec.game_id == game_id:
                assert f"| `{spec.name}` | {spec.role} |" in text


def test_a_stale_table_is_noticed():
    text = f"x\n{docs.begin_marker('colors_v1')}\n| `gone_agent` |\n{docs.end_marker('colors_v1')}\ny\n"
    fresh = docs.render_page(text, ["colors_v1"])
    assert fresh != text and "gone_agent" not in fresh and "`colors_lexicon_speaker`" in fresh
    assert fresh.startswith("x\n") and fresh.endswith("\ny\n")


def test_readme_names_each_games_registered_agents():
    readme = (docs.ROOT / "README.md").read_text()
    for game_id in docs.doc_pages():
        row = next(line for line in readme.splitlines() if line.startswith("|") and f"`{game_id}`" in line)
        named = set(re.findall(r"`([a-z0-9_]+)`", row.split("|")[4]))
        registered = {s.name for s in all_agents().values() if s.game_id == game_id}
        assert named == registered, (game_id, named ^ registered)
