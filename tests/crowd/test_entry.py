"""The demo's ways in (issue 20, item 4): a new demo person per visit of ``/b/<slug>/demo/``, so
one browser plays both seats of a human-human demo batch; demo links on the full stack only with
GT_DEMO=1 on a loopback HOST and only from this machine; the admin and research pages say whether
anyone can enter a batch; the staff step in the README and run.sh."""
from __future__ import annotations

import re
import subprocess
import sys
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from crowd import entry as crowd_entry
from crowd import identity
from crowd.models import Participant
from live.models import Batch
from groundtalk_web.loopback import is_loopback

from tests.conftest import ROOT, child_env
from tests.support.factories import batch as make_batch

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("agent_queues_served")]

LOOPBACK = {"REMOTE_ADDR": "127.0.0.1", "HTTP_HOST": "127.0.0.1"}


def demo_batch(slug="demo-hh", **kw) -> Batch:
    return make_batch(slug=slug, title="Two people", entry_kinds=["demo"], **kw)


@pytest.fixture
def full_stack_demo(settings):
    """The full stack started with GT_DEMO=1 on a loopback HOST."""
    settings.EMBEDDED = False
    settings.GT_DEMO_ENTRY = True
    settings.ALLOWED_HOSTS = ["127.0.0.1", "localhost", "study.example.org"]
    return settings


def test_loopback_names():
    for host in ("127.0.0.1", "127.8.9.1", "::1", "[::1]", "[::1]:8000", "localhost", "LOCALHOST:8000",
                 "a.localhost", "127.0.0.1:8000"):
        assert is_loopback(host), host
    for host in ("", "0.0.0.0", "::", "[::]", "192.168.1.5", "10.0.0.1", "study.example.org", "localhost.example.org",
                 "203.0.113.5:8000", "fe80::1"):
        assert not is_loopback(host), host


def test_each_visit_of_the_demo_link_is_a_new_person_owned_by_the_same_browser(settings):
    settings.EMBEDDED = True
    b = demo_batch()
    browser = Client()
    names = []
    for _ in range(2):   # "play as the first person", then "play as a second person", in one browser
        r = browser.get(f"/b/{b.slug}/demo/")
        assert r.status_code == 302 and r["Cache-Control"].startswith("max-age=0")
        url = urlsplit(r["Location"])
        assert url.path == f"/b/{b.slug}/"
        names.append(parse_qs(url.query)["worker"][0])
        page = browser.get(browser.get(r["Location"])["Location"])   # the entry link, then /p/<token>/
        assert page.status_code == 200 and "agree" in page.content.decode()
    assert names[0] != names[1] and all(re.fullmatch(r"demo-[0-9a-f]{8}", n) for n in names)
    people = list(Participant.objects.filter(batch=b).order_by("pk"))
    assert [p.worker_id for p in people] == names and {p.platform for p in people} == {"demo"}
    assert all(identity.session_owns(browser.session, p) for p in people)   # both tabs work in this browser
    assert not identity.session_owns(Client().session, people[0])          # another browser is still refused
    assert Client().get(f"/p/{people[0].token}/").status_code == 403


def test_the_demo_link_is_refused_for_a_study_and_where_demo_links_are_closed(settings):
    settings.EMBEDDED = True
    study = make_batch(slug="real-study", entry_kinds=["lab", "mturk"])
    r = Client().get(f"/b/{study.slug}/demo/")
    assert r.status_code == 403 and "does not accept open links" in r.content.decode()
    assert Client().get("/b/no-such-batch/demo/").status_code == 404
    b = demo_batch()
    settings.EMBEDDED, settings.GT_DEMO_ENTRY = False, False   # the full stack without GT_DEMO=1
    for url in (f"/b/{b.slug}/demo/", f"/b/{b.slug}/?worker=visitor"):
        assert Client().get(url, **LOOPBACK).status_code == 403, url
    assert not Participant.objects.exists()


def test_full_stack_demo_links_open_only_from_this_machine(full_stack_demo):
    b = demo_batch()
    study = make_batch(slug="real-study", entry_kinds=["lab"])
    assert Client().get(f"/b/{b.slug}/?worker=ann", **LOOPBACK).status_code == 302
    assert Client().get(f"/b/{b.slug}/?worker=bob", REMOTE_ADDR="::1", HTTP_HOST="localhost:8000").status_code == 302
    # a visitor through a proxy (its address from X-Forwarded-For), or a public host name, is refused
    for meta in ({"REMOTE_ADDR": "203.0.113.5", "HTTP_HOST": "127.0.0.1"},
                 {"REMOTE_ADDR": "127.0.0.1", "HTTP_HOST": "study.example.org"},
                 {"REMOTE_ADDR": "127.0.0.1", "HTTP_HOST": "evil.example.net"}):   # not an allowed host
        for url in (f"/b/{b.slug}/?worker=eve", f"/b/{b.slug}/demo/"):
            r = Client().get(url, **meta)
            assert r.status_code in (400, 403), (meta, url, r.status_code)
        home = Client().get("/", **meta).content.decode()
        assert b.slug not in home and "Demo batches" not in home
    assert Client().get(f"/b/{study.slug}/?worker=eve", **LOOPBACK).status_code == 403   # never a study
    assert sorted(Participant.objects.values_list("worker_id", flat=True)) == ["ann", "bob"]
    home = Client().get("/", **LOOPBACK).content.decode()
    assert f"/b/{b.slug}/demo/" in home and "real-study" not in home and "play as a second person" in home


def test_the_home_page_says_how_to_play_both_seats(settings):
    settings.EMBEDDED = True
    demo_batch()
    make_batch(slug="demo-ha", title="With an agent", entry_kinds=["demo"], pairing=Batch.Pairing.HUMAN_AGENT,
               human_roles=["listener"], agents={"speaker": "colors_lexicon_speaker"})
    home = Client().get("/").content.decode()
    assert home.count('href="/b/demo-hh/demo/"') == 2 and home.count('href="/b/demo-ha/demo/"') == 1
    assert "play as the first person" in home and "play as a second person" in home
    assert "two browser windows" not in home and "Come back to this tab" in home
    Batch.objects.filter(slug="demo-hh").delete()   # no two-person batch: no words about two tabs
    assert "play as a second person" not in Client().get("/").content.decode()


def test_entry_problems_say_whether_anyone_can_enter(settings):
    settings.EMBEDDED, settings.GT_DEMO_ENTRY = False, False
    demo_only, lab = demo_batch(), make_batch(slug="lab-study", entry_kinds=["lab", "demo"])
    nothing = make_batch(slug="no-kinds", entry_kinds=[])
    assert "only demo links" in crowd_entry.entry_problems(demo_only)[0]
    assert crowd_entry.entry_problems(lab) == []
    assert "takes no entry links" in crowd_entry.entry_problems(nothing)[0]
    settings.GT_DEMO_ENTRY = True
    assert crowd_entry.entry_problems(demo_only) == []
    settings.GT_DEMO_ENTRY = False

    staff = Client()
    staff.force_login(get_user_model().objects.create_superuser("staff", "", "pw"))
    research = staff.get("/research/").content.decode()
    row = lambda slug: re.search(rf'<tr data-batch="{slug}">.*?</tr>', research, re.S).group(0)   # noqa: E731
    assert "no: Nobody can enter it here" in row("demo-hh") and ">yes<" in row("lab-study")
    assert "no: Nobody can enter it" in row("no-kinds")
    admin = staff.get("/admin/live/batch/").content.decode()
    assert "Nobody can enter it here" in admin and "can be entered" in admin.lower()
    change = staff.get(f"/admin/live/batch/{demo_only.pk}/change/").content.decode()
    assert 'id="entry-problem"' in change


@pytest.mark.parametrize("env, open_", [
    ({"GT_DEMO": "1", "HOST": "127.0.0.1"}, True),
    ({"GT_DEMO": "1", "HOST": "localhost"}, True),
    ({"GT_DEMO": "1", "HOST": "0.0.0.0"}, False),
    ({"GT_DEMO": "1"}, False),                    # HOST unset: not known to be loopback
    ({"HOST": "127.0.0.1"}, False),               # the operator did not ask for the demo
])
def test_full_stack_settings_open_demo_links_only_on_loopback(env, open_):
    base = {k: v for k, v in child_env().items() if k not in {"GT_DEMO", "HOST"}}
    # the settings module alone, as every process reads it first (django.setup() would load every app)
    out = subprocess.run([sys.executable, "-c", "from groundtalk_web import settings; "
                          "print(settings.EMBEDDED, settings.GT_DEMO_ENTRY)"],
                         cwd=ROOT, env={**base, **env}, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", str(open_)]


def test_readme_and_run_sh_give_the_staff_step():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("### Embedded or full stack", 1)[1].split("\n## ", 1)[0]
    assert "manage.py createsuperuser" in section and "GT_DEMO=1" in section
    run_sh = (ROOT / "run.sh").read_text()
    full_stack = run_sh.split('if [ -n "$full_stack" ]; then', 1)[1].split("else", 1)[0]
    assert re.search(r'echo ".*manage\.py createsuperuser', full_stack)
