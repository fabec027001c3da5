"""The staff pages' SVG pictures (research/pictures.py): the game draws from plain data, the
platform serves it at the same addresses and URL names as ever."""
from __future__ import annotations

import pytest
from django.urls import reverse

from games.codraw import monitor as codraw_monitor
from tests.support import play
from tests.support.staff_users import staff_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(client):
    client.force_login(staff_user("pic-staff", "pw"))
    return client


def test_the_pictures_keep_their_addresses_and_names():
    mid = "00000000-0000-0000-0000-000000000001"
    assert reverse("codraw_target_svg", args=[mid]) == f"/research/matches/{mid}/codraw/target.svg"
    assert reverse("codraw_round_svg", args=[mid, 3]) == f"/research/matches/{mid}/codraw/round/3.svg"
    assert reverse("codraw_final_svg", args=[mid]) == f"/research/matches/{mid}/codraw/final.svg"
    assert reverse("research_replay_svg", args=[mid, 2]) == f"/research/matches/{mid}/replay/2.svg"


def test_the_game_draws_from_plain_data():
    match = {"id": "m1", "content": {}, "seed": 1, "config": {}, "status": "active", "seq": 0}
    with pytest.raises(LookupError):
        codraw_monitor.target_svg(match, [], scale=1.0, query={})
    with pytest.raises(LookupError):
        codraw_monitor.final_svg(match, [], scale=1.0, query={})
    with pytest.raises(LookupError):
        codraw_monitor.round_svg(match, [], scale=1.0, query={}, round_no=0)


def test_pictures_are_served_with_their_headers(staff, client):
    m = play.codraw(pieces=1)
    for url in (f"/research/matches/{m.id}/codraw/target.svg", f"/research/matches/{m.id}/codraw/final.svg",
                f"/research/matches/{m.id}/codraw/round/0.svg", f"/research/matches/{m.id}/replay/1.svg"):
        r = staff.get(url + "?scale=0.5")
        assert r.status_code == 200, url
        assert r["Content-Type"] == "image/svg+xml; charset=utf-8" and r["X-Content-Type-Options"] == "nosniff"
        assert r["Content-Disposition"].startswith(f'inline; filename="codraw-{m.id}-')
        assert "sandbox" in r["Content-Security-Policy"]
    assert staff.get(f"/research/matches/{m.id}/codraw/target.svg")["Content-Disposition"] == \
        f'inline; filename="codraw-{m.id}-target.svg"'
    assert staff.get(f"/research/matches/{m.id}/replay/1.svg")["Content-Disposition"] == \
        f'inline; filename="codraw-{m.id}-step1.svg"'
    assert staff.head(f"/research/matches/{m.id}/replay/1.svg").status_code == 200
    other = play.colors()
    assert staff.get(f"/research/matches/{other.id}/codraw/target.svg").status_code == 404
    assert staff.get(f"/research/matches/{other.id}/replay/1.svg").status_code == 404   # no replay picture
    staff.logout()
    assert staff.get(f"/research/matches/{m.id}/replay/1.svg").status_code == 302
