/* A partner who stalls (issue 20): the same on every game page (included after gt/client.js).
 *
 * The server keeps the clock of whose turn it is (games/base.py turn_taken: chat that is not the
 * move the game waits for does not restart it). When the person the game waits on has not taken
 * their turn within the batch's turn limit, the watchdog records it with a ``turn_timed_out``
 * event; then
 *   - the partner who waited is offered, in plain words, to end the game with full pay
 *     (POST /m/<id>/end-stalled; the server checks the offer again and decides the outcomes);
 *   - the one who stalled is told to take their turn now.
 * What this page shows comes from GET /m/<id>/turn, asked on load (a reload keeps the offer), on
 * the event, when the staller acts (taking the turn withdraws the offer), and every POLL_MS besides
 * (an event this page missed is not the end of the offer).
 */
(function () {
  "use strict";
  if (!window.GT || !GT.eventHooks) return;
  const el = GT.el;
  const POLL_MS = 20000;
  let S = null, state = null, over = false;   // S: the seat (window.GT_SEAT, set after this script)

  const box = el("div", { id: "stall", class: "card stall", role: "status", hidden: true });
  const text = el("p", { id: "stall-text" });
  const button = el("button", { id: "end-stalled", type: "button", hidden: true }, "End the game now with full pay");
  const error = el("p", { id: "stall-error", class: "error", hidden: true });
  const say = (message) => { error.textContent = message || ""; error.hidden = !message; };
  box.append(text, button, error);

  const minutes = (s) => (s >= 120 ? `${Math.round(s / 60)} minutes` : `${s} seconds`);

  function show(data) {
    state = data;
    if (over || !data || (!data.offer && !data.stalled)) { box.hidden = true; return; }
    say("");
    if (data.offer) {
      text.textContent = `Your partner has not taken their turn for ${minutes(data.limit_s)}. You can keep waiting, ` +
        `or end the game now: this is not your fault. ${data.pay_text}`;
      button.textContent = data.pay_kind === "full" ? "End the game now with full pay" : "End the game now";
      button.hidden = false;
    } else {
      text.textContent = `It is your turn, and you have not taken it for ${minutes(data.limit_s)}. Please take ` +
        "your turn now: your partner may end the game, and then " + data.pay_text.charAt(0).toLowerCase() +
        data.pay_text.slice(1);
      button.hidden = true;
    }
    box.hidden = false;
  }

  // Answers can arrive out of order (a check after turn_timed_out, another after the partner's
  // move): only the answer to the latest check is shown, so a stale offer never comes back.
  let asked = 0;
  function check() {
    if (over || !S) return;
    const mine = ++asked;
    fetch(`/m/${S.matchId}/turn?seat=${encodeURIComponent(S.token)}`, { credentials: "same-origin" })
      .then((r) => (r.ok ? r.json() : null)).then((data) => { if (mine === asked) show(data); }).catch(() => {});
  }

  button.addEventListener("click", () => {
    button.disabled = true;
    const csrf = (document.cookie.match(/csrftoken=([^;]+)/) || [])[1] || "";
    fetch(`/m/${S.matchId}/end-stalled`, {
      method: "POST", body: new URLSearchParams({ seat: S.token }), headers: { "X-CSRFToken": csrf },
    }).then((r) => r.json()).then((r) => {
      if (r.ended) { location.href = S.nextUrl; return; }
      button.disabled = false;
      say(r.message);
      check();
    }).catch(() => { button.disabled = false; say("Could not reach the server; please try again."); });
  });

  GT.eventHooks.push((ev) => {
    if (ev.type === "turn_timed_out") { check(); return; }
    if (ev.type === "match_aborted" || ev.type === "game_ended" || ev.type === "match_finished") {
      over = true; box.hidden = true;
      if (ev.type === "match_aborted" && ev.payload && ev.payload.reason === "partner_stalled" && S && ev.payload.by !== S.role) {
        text.textContent = "Your partner ended the game because you did not take your turn in time.";
        button.hidden = true; box.hidden = false;
      }
      return;
    }
    if (state && (state.offer || state.stalled) && ev.actor && ev.actor !== "system") check();
  });

  function init() {
    S = window.GT_SEAT;
    if (!S) return;
    (document.querySelector("main") || document.body).prepend(box);
    check();
    const timer = setInterval(() => { if (over) clearInterval(timer); else check(); }, POLL_MS);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
