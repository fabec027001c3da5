"""GuessWhich and visual-dialog pages in headless Chromium (1366x768), against a real uvicorn
server and, for ALICE, a real Celery worker.

(a) a person plays a whole GuessWhich game against ``alice_exact``: 9 typed questions, a best
    guess after each answer, clicks until the secret is found, bonus and rank as the server has
    them, feedback;
(b) two people chat in visual dialog for 3 rounds, one page reloaded in the middle;
(d) bad input through the page and raw over its websocket: a guess before the answer, a ruled-out
    image, an empty question, a forged bonus: a clear error, nothing changed.
(The image endpoint's refusals, (c), are in test_image_endpoint.py.)
"""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from games.guesswhich.rules import C as GW
from live.models import Match, MatchEvent, Seat
from live.services import SeatSpec, match_create

from tests.browser.sync import track_presence, wait_partner_back, wait_synced
from .conftest import SCREENS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

QUESTIONS = [
    "How many objects are there?",
    "Is there a red thing?",
    "How many cubes are there?",
    "Are there any spheres?",
    "What color is the leftmost thing?",
    "What about the rightmost thing?",
    "Is there a large metal cylinder?",
    "How many small things are there?",
    "What shape is the thing in front?",
]
RIGHT_ROUNDS = {2, 5, 9}   # rounds where the test's best guess is the secret
WRONG_FINAL_CLICKS = 2


def thumb(image_id: str) -> str:
    return f'.thumb[data-id="{image_id}"]'


def all_thumbs_loaded(page, n: int = 20, timeout: int = 60000) -> None:
    page.wait_for_function(
        f"() => {{ const i = [...document.querySelectorAll('.thumb img')];"
        f" return i.length === {n} && i.every(x => x.complete && x.naturalWidth > 0); }}", timeout=timeout)


def layout(page) -> dict:
    return page.evaluate("""() => {
      const box = (s) => { const e = document.querySelector(s); if (!e || e.offsetParent === null) return null;
                           const b = e.getBoundingClientRect(); return {top: b.top, bottom: b.bottom, left: b.left, right: b.right}; };
      const de = document.documentElement;
      return {scrollH: de.scrollHeight, scrollW: de.scrollWidth, h: innerHeight, w: innerWidth,
              pool: box('#pool'), chat: box('#chat'), round: box('#round-label'), prompt: box('#prompt'),
              caption: box('#caption'), form: box('#askform'), feedback: box('#feedback'), bonus: box('#bonus'),
              thumb: box('.thumb')};
    }""")


def assert_fits(page, *parts: str) -> dict:
    got = layout(page)
    assert got["scrollH"] <= got["h"] and got["scrollW"] <= got["w"], f"the page scrolls: {got}"
    for part in parts:
        b = got[part]
        assert b is not None, f"{part} is not shown"
        assert b["top"] >= 0 and b["bottom"] <= got["h"] and b["left"] >= 0 and b["right"] <= got["w"], \
            f"{part} is off screen: {b}"
    return got


def raw(page, action_js: str) -> None:
    """Send an action straight over the page's websocket client (bypassing the page's checks)."""
    page.evaluate("() => { const e = document.getElementById('error'); e.textContent = ''; e.dataset.code = ''; }")
    page.evaluate(f"() => gtClient.act({action_js})")


def server_error(page, code: str, timeout: int = 10000) -> str:
    page.wait_for_selector(f'#error[data-code="{code}"]', timeout=timeout)
    return page.inner_text("#error")


# ------------------------------------------------------------------------------------------- (a)
@pytest.mark.celery
def test_human_plays_a_whole_guesswhich_game_against_alice(live_server_url, celery_worker_process, open_seat):
    match = match_create(game_id="guesswhich_v1", seed=4242, config={"rounds": 9},
                         seats={"questioner": SeatSpec("human"),
                                "answerer": SeatSpec("agent", agent_name="alice_exact")})
    seat = Seat.objects.get(match=match, role="questioner")
    secret, pool = match.state["secret_id"], match.state["pool_ids"]
    wrong = [i for i in pool if i != secret]
    assert len(pool) == 20

    page = open_seat(match, seat)
    page.wait_for_selector("#askinput:enabled")
    all_thumbs_loaded(page)
    assert page.inner_text("#round-label") == "Round 1 of 9"
    assert page.inner_text("#caption") == match.state["caption"]
    assert "ask ALICE" in page.inner_text("#prompt")
    assert page.locator(".thumb").count() == 20 and page.locator(".thumb.best, .thumb.ruled, .thumb.secret").count() == 0
    # the same URL scheme for every pool image: nothing in the page singles out the secret
    srcs = page.eval_on_selector_all(".thumb img", "els => els.map(e => e.getAttribute('src'))")
    assert all(s == f"/m/{match.id}/img/{i}.png?seat={seat.token}&size=thumb" for s, i in zip(srcs, pool))
    assert_fits(page, "pool", "chat", "round", "prompt", "caption", "form", "bonus")
    page.screenshot(path=str(SCREENS / "guesswhich-start.png"))
    page.set_viewport_size({"width": 1366, "height": 640})     # 1366x768 screen minus the browser's own bars
    assert_fits(page, "pool", "chat", "round", "prompt", "caption", "form")
    page.screenshot(path=str(SCREENS / "guesswhich-start-1366x640.png"))
    page.set_viewport_size({"width": 1366, "height": 768})

    for k, question in enumerate(QUESTIONS, start=1):
        page.wait_for_selector("#askinput:enabled")
        assert page.inner_text("#round-label") == f"Round {k} of 9"
        page.fill("#askinput", question)
        page.click("#ask")
        page.wait_for_selector(f".msg.a >> nth={k - 1}", timeout=30000)   # ALICE's answer, via the worker
        assert "best guess" in page.inner_text("#prompt")
        assert page.locator("#askinput:disabled").count() == 1
        if k == 4:
            page.screenshot(path=str(SCREENS / "guesswhich-guess.png"))
        guess = secret if k in RIGHT_ROUNDS else wrong[k]
        page.click(thumb(guess))
        page.wait_for_selector(f"{thumb(guess)}.best")
        page.wait_for_selector(f".msg.guess >> nth={k - 1}")
        if k == 6:
            assert_fits(page, "pool", "chat", "round", "prompt", "form")
            page.screenshot(path=str(SCREENS / "guesswhich-round6.png"))

    page.wait_for_selector("text=until you find the secret one")
    assert page.locator("#askform:visible").count() == 0
    state = Match.objects.get(pk=match.id).state
    assert [d["question"] for d in state["dialog"]] == QUESTIONS
    assert all(d.get("answer") for d in state["dialog"])
    for wid in wrong[:WRONG_FINAL_CLICKS]:
        page.click(thumb(wid))
        page.wait_for_selector(f"{thumb(wid)}.ruled")
        assert page.get_attribute(thumb(wid), "aria-disabled") == "true"
    assert "(so far 2)" in page.inner_text("#bonus")
    assert page.locator("#bonus-total").count() == 0        # the total waits until the secret is found
    page.screenshot(path=str(SCREENS / "guesswhich-final.png"))
    page.click(thumb(secret))
    page.wait_for_selector("#rank")
    page.wait_for_selector("#feedback:visible")

    match.refresh_from_db()
    out = match.outcome
    assert out["found"] and out["rank"] == WRONG_FINAL_CLICKS + 1
    assert out["bonus"] == GW.BONUS_BASE + GW.BONUS_WRONG_CLICK * WRONG_FINAL_CLICKS + GW.BONUS_RIGHT_ROUND * len(RIGHT_ROUNDS)
    assert page.inner_text("#rank") == str(out["rank"])
    assert page.inner_text("#bonus-final") == str(out["bonus"])
    assert page.inner_text("#bonus-total") == f"{out['bonus']} points"
    assert page.locator(f"{thumb(secret)}.secret").count() == 1
    assert page.locator(".thumb.ruled").count() == WRONG_FINAL_CLICKS
    assert_fits(page, "pool", "round", "feedback")
    page.screenshot(path=str(SCREENS / "guesswhich-feedback.png"))

    page.click("#fb-submit")                                   # nothing rated yet: refused in the page
    expect(page.locator("#error")).to_contain_text("ratings")
    ratings = {key: 1 + i % 5 for i, key in enumerate(GW.RATING_KEYS)}
    for key, value in ratings.items():
        page.click(f'.rating-row[data-key="{key}"] label:nth-child({value}) span')
    comment = "<b>Good</b> answers about colours & counts"
    page.fill("#comment", comment)
    page.click("#fb-submit")
    page.wait_for_selector("#finished:not([hidden])")
    assert "Thank you" in page.inner_text("#final")
    page.screenshot(path=str(SCREENS / "guesswhich-done.png"))

    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED
    assert match.outcome["feedback"]["ratings"] == ratings
    assert match.outcome["feedback"]["comment"] == comment
    assert match.outcome["round_guess_correct"] == [k in RIGHT_ROUNDS for k in range(1, 10)]
    assert match.outcome["final_clicks"] == wrong[:WRONG_FINAL_CLICKS] + [secret]
    assert MatchEvent.objects.filter(match=match, type="question_asked").count() == 9
    page.click("#continue")
    page.wait_for_url(f"{live_server_url}/")


# ------------------------------------------------------------------------------------------- (b)
def test_two_people_chat_in_visual_dialog_with_a_reload(live_server_url, open_seat):
    match = match_create(game_id="visdial_v1", seed=77, config={"rounds": 3},
                         seats={"questioner": SeatSpec("human"), "answerer": SeatSpec("human")})
    seats = {s.role: s for s in Seat.objects.filter(match=match)}
    q = open_seat(match, seats["questioner"])
    a = open_seat(match, seats["answerer"])
    q.wait_for_selector("#sendinput:enabled")
    a.wait_for_function("() => { const i = document.getElementById('scene-image');"
                        " return i && i.complete && i.naturalWidth > 0; }", timeout=60000)
    assert q.locator("img").count() == 0                        # the questioner never sees the image
    assert q.inner_text("#caption") == match.state["caption"] == a.inner_text("#caption")
    assert q.inner_text("#round-label") == "Round 1 of 3" == a.inner_text("#round-label")
    assert a.locator("#sendinput:disabled").count() == 1
    assert_fits(q, "chat", "round", "caption")
    assert_fits(a, "chat", "round", "caption")

    # the counter shows the characters left (the limit of the rules' schema); over it, no sending
    expect(q.locator("#counter")).to_have_text("200 characters left")
    q.fill("#sendinput", "x" * 195)
    expect(q.locator("#counter")).to_have_text("5 characters left")
    assert q.locator("#send:enabled").count() == 1
    q.fill("#sendinput", "x" * 250)
    expect(q.locator("#counter")).to_have_text("50 too many")
    assert q.locator("#send:disabled").count() == 1
    SCREENS.parent.joinpath("screenshots").mkdir(parents=True, exist_ok=True)
    q.screenshot(path=str(SCREENS.parent / "screenshots" / "visdial-counter-over.png"))
    q.fill("#sendinput", "")
    expect(q.locator("#counter")).to_have_text("200 characters left")

    hostile = "<img src=x onerror=\"document.title='pwned'\"> is there a cube?"
    qa = [(hostile, "yes, two cubes"), ("What color are they?", "red and blue"), ("Is anything metal?", "no")]
    for k, (question, answer) in enumerate(qa, start=1):
        q.fill("#sendinput", question)
        q.click("#send")
        a.wait_for_selector(f".msg.q >> nth={k - 1}")
        assert a.locator(".msg.q").nth(k - 1).locator(".text").inner_text() == question
        if k == 1:
            assert a.locator(".chat img").count() == 0 and a.title() != "pwned"
            q.screenshot(path=str(SCREENS / "visdial-questioner.png"))
        if k == 2:
            track_presence(q)
            a.reload()                                          # the answerer reloads with a question pending
            wait_synced(a, match.id)
            assert a.locator("#sendinput:enabled").count() == 1
            assert a.locator(".msg.q").count() == 2 and a.locator(".msg.a").count() == 1
            assert a.inner_text("#round-label") == "Round 2 of 3"
            # once the questioner has been told the answerer is back, a "connection dropped"
            # notice the reload may have shown it is gone again
            wait_partner_back(q)
            assert q.locator("#banner").is_hidden() and q.locator("#gone").is_hidden()
            a.screenshot(path=str(SCREENS / "visdial-answerer.png"))
        a.fill("#sendinput", answer)
        a.click("#send")
        q.wait_for_selector(f".msg.a >> nth={k - 1}")
        assert q.locator(".msg.a").nth(k - 1).locator(".text").inner_text() == answer
    for page in (q, a):
        page.wait_for_selector("#finished:not([hidden])")
        assert page.locator(".msg.q").count() == 3 and page.locator(".msg.a").count() == 3
    q.screenshot(path=str(SCREENS / "visdial-done.png"))
    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED
    assert match.outcome["complete"] and match.outcome["rounds_completed"] == 3
    assert [(d["question"], d["answer"]) for d in match.state["dialog"]] == qa
    assert MatchEvent.objects.filter(match=match, type="answer_given").count() == 3


# ------------------------------------------------------------------------------------------- (d)
def test_bad_input_gets_a_clear_error_and_changes_nothing(live_server_url, open_seat):
    match = match_create(game_id="guesswhich_v1", seed=99, config={"rounds": 1},
                         seats={"questioner": SeatSpec("human"), "answerer": SeatSpec("human")})
    seats = {s.role: s for s in Seat.objects.filter(match=match)}
    secret = match.state["secret_id"]
    wrong = [i for i in match.state["pool_ids"] if i != secret]
    q = open_seat(match, seats["questioner"])
    a = open_seat(match, seats["answerer"])
    q.wait_for_selector("#askinput:enabled")
    a.wait_for_selector("#answerinput:disabled")

    def unchanged():
        m = Match.objects.get(pk=match.id)
        return m.seq, m.state

    before = unchanged()
    # a guess before any question: refused in the page, and by the server when sent raw
    q.click(thumb(wrong[0]), force=True)     # aria-disabled: a person's click still lands; the page explains
    assert "first" in server_error(q, "not_now")
    raw(q, f"{{type: 'guess', image_id: '{wrong[0]}'}}")
    assert server_error(q, "guess_before_answer") == "Guess after this round's answer."
    # an empty question: refused in the page; a blank one sent raw is refused by the server
    q.click("#ask")
    assert "empty" in server_error(q, "empty_message")
    raw(q, "{type: 'ask', text: '   '}")
    assert server_error(q, "empty_message") == "The question is empty."
    assert unchanged() == before and q.locator(".msg.q").count() == 0

    q.fill("#askinput", "Is there a red cube?")
    q.click("#ask")
    a.wait_for_selector("#answerinput:enabled")
    assert a.locator(".msg.q .text").inner_text() == "Is there a red cube?"
    wait_synced(q, match.id)                 # the questioner's page too is in the answer phase
    a.wait_for_function("() => { const i = document.getElementById('secret-image');"
                        " return i && i.complete && i.naturalWidth > 0; }", timeout=60000)
    assert a.get_attribute("#secret-image", "src") == f"/m/{match.id}/img/{secret}.png?seat={seats['answerer'].token}&size=large"
    a.screenshot(path=str(SCREENS / "guesswhich-answerer.png"))
    # a guess while the answer is pending: the page says wait; raw, the server refuses
    before = unchanged()
    q.click(thumb(wrong[0]), force=True)
    assert "Wait for" in server_error(q, "not_now")
    raw(q, f"{{type: 'guess', image_id: '{wrong[0]}'}}")
    assert server_error(q, "guess_before_answer") == "Guess after this round's answer."
    assert unchanged() == before and q.locator(".thumb.best").count() == 0
    # the answerer sends an empty answer: refused
    a.click("#answer")
    assert "empty" in server_error(a, "empty_message")
    a.fill("#answerinput", "yes")
    a.click("#answer")
    q.wait_for_selector(".msg.a")
    # a forged bonus is refused
    raw(q, f"{{type: 'guess', image_id: '{secret}', bonus: 999}}")
    assert "computed by the server" in server_error(q, "forged_field")
    q.click(thumb(wrong[1]))                                   # the round's best guess (wrong) ...
    q.wait_for_selector("text=until you find the secret one")
    q.click(thumb(wrong[0]))                                   # ... then a wrong final click
    q.wait_for_selector(f"{thumb(wrong[0])}.ruled")
    all_thumbs_loaded(q)
    q.screenshot(path=str(SCREENS / "guesswhich-ruled-out.png"))
    q.hover(thumb(wrong[5]))                                    # hover: a larger preview of that image
    q.wait_for_selector("#preview:not([hidden])")
    # never blank: the thumbnail fills the preview until the full image has come
    assert "size=thumb" in q.eval_on_selector("#preview img", "i => i.style.backgroundImage")
    q.wait_for_function("() => { const i = document.querySelector('#preview img'); return i.complete && i.naturalWidth === 480; }",
                        timeout=60000)
    q.screenshot(path=str(SCREENS / "guesswhich-preview.png"))
    q.mouse.move(5, 5)
    q.wait_for_selector("#preview", state="hidden")
    before = unchanged()
    # clicking the ruled-out image again: the page refuses; raw, the server refuses
    q.click(thumb(wrong[0]), force=True)
    assert "ruled out" in server_error(q, "ruled_out")
    raw(q, f"{{type: 'guess', image_id: '{wrong[0]}'}}")
    assert server_error(q, "ruled_out") == "That image was already ruled out."
    # an image that is not in the pool
    raw(q, "{type: 'guess', image_id: 'img99'}")
    assert "not an image of this pool" in server_error(q, "not_in_pool")
    assert unchanged() == before
    assert q.locator(".thumb.ruled").count() == 1
    assert "(so far 1)" in q.inner_text("#bonus")
    q.screenshot(path=str(SCREENS / "guesswhich-error.png"))
    # the game goes on: find the secret, skip the feedback
    q.click(thumb(secret))
    q.wait_for_selector("#feedback:visible")
    q.click("#fb-skip")
    q.wait_for_selector("#finished:not([hidden])")
    a.wait_for_selector("#finished:not([hidden])")
    m = Match.objects.get(pk=match.id)
    assert m.status == Match.Status.FINISHED and m.outcome["rank"] == 2
    assert q.inner_text("#rank") == "2" and q.inner_text("#bonus-final") == str(m.outcome["bonus"])
    assert a.inner_text("#bonus-final") == str(m.outcome["bonus"])
