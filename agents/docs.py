"""Each game's agent table in its docs page, generated from the registry (issue 10, item 6).

The table sits between two marker comments in the game's page (``GameSpec.doc_page``);
``python manage.py agent_docs`` rewrites it, ``agent_docs --check`` (and
``tests/agents/test_docs.py``) fails when a page no longer matches the registry.
"""
from __future__ import annotations

from pathlib import Path

from games.registry import GAMES
from agents.registry import all_agents

ROOT = Path(__file__).resolve().parents[1]


def doc_pages() -> dict[str, str]:
    """game id -> its docs page, relative to the repository (``GameSpec.doc_page``; several games
    may share one page)."""
    return {spec.id: spec.doc_page for spec in GAMES.values() if spec.doc_page}


def begin_marker(game_id: str) -> str:
    return (f"<!-- agents:{game_id} begin: generated from agents.registry by `python manage.py agent_docs`;"
            " do not edit by hand -->")


def end_marker(game_id: str) -> str:
    return f"<!-- agents:{game_id} end -->"


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def agent_table(game_id: str) -> str:
    """A Markdown table of the game's registered agents, in registration order."""
    rows = [spec for spec in all_agents().values() if spec.game_id == game_id]
    lines = [f"Agents of `{game_id}` ({len(rows)}):", "",
             "| agent | role | runs on | what it does |", "| --- | --- | --- | --- |"]
    lines += [f"| `{s.name}` | {s.role} | {s.device} | {_cell(s.description)} |" for s in rows]
    return "\n".join(lines)


def render_page(text: str, game_ids: list[str]) -> str:
    """``text`` with the block of each game replaced by its current table."""
    for game_id in game_ids:
        begin, end = begin_marker(game_id), end_marker(game_id)
        if begin not in text or end not in text:
            raise ValueError(f"the page has no markers for {game_id}: add {begin!r} and {end!r}")
        head, rest = text.split(begin, 1)
        _, tail = rest.split(end, 1)
        text = f"{head}{begin}\n{agent_table(game_id)}\n{end}{tail}"
    return text


def pages() -> dict[Path, list[str]]:
    by_page: dict[Path, list[str]] = {}
    for game_id, page in doc_pages().items():
        by_page.setdefault(ROOT / page, []).append(game_id)
    return by_page


def stale_pages() -> list[Path]:
    """The docs pages whose agent tables differ from the registry."""
    return [page for page, ids in pages().items() if render_page(page.read_text(), ids) != page.read_text()]


def write_pages() -> list[Path]:
    """Rewrite the agent tables; returns the pages that changed."""
    changed = []
    for page, ids in pages().items():
        old = page.read_text()
        new = render_page(old, ids)
        if new != old:
            page.write_text(new)
            changed.append(page)
    return changed
