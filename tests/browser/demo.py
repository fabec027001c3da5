"""The home page's two-person demo, as a visitor follows its words (templates/home.html)."""
from __future__ import annotations


def enter_both_people(ctx, home, slug: str) -> list:
    """On ``home`` (the home page), click *play as the first person*, then *play as a second
    person* of batch ``slug``; each opens a tab of this browser context, which agrees and gets
    ready. Returns the two tabs once both show their game page."""
    row = home.locator(f'tr[data-batch="{slug}"]')
    tabs = []
    for link in ("play as the first person", "play as a second person"):
        with ctx.expect_page() as opened:
            row.locator(f"text={link}").click()
        tab = opened.value
        tab.click("#agree")
        tab.click("#ready")
        tabs.append(tab)
    for tab in tabs:
        tab.wait_for_url("**/m/**", timeout=30000)
        tab.wait_for_selector("#role-label")
    return tabs
