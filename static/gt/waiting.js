// The waiting room (templates/lobby/waiting.html): polls the participant's status (the URL is the
// data-status-url of #waiting), shows the time waited, goes to the game when paired, and asks
// "are you still there?" when the server says this page was away.
(function () {
  "use strict";
  const waiting = document.getElementById("waiting");
  if (!waiting) return;
  const statusUrl = waiting.dataset.statusUrl;
  const bar = document.getElementById("bar"), waited = document.getElementById("waited");
  const away = document.getElementById("away"), title = document.title;
  let failures = 0;
  // When this page last had an answer, and how long the server then asked it to wait: the next
  // poll says how much longer than that it waited (its own clock), so a page that kept polling is
  // not taken for one that went away when its polls reach a loaded server late.
  let answeredAt = null, backoff = 0;
  function showAway(on) {   // not heard from for a while: not paired until the worker says they are here
    away.hidden = !on;
    document.title = on ? "Are you still there? — " + title : title;
    if (on) document.getElementById("still-here").focus();
  }
  async function poll() {
    let next = 800 + Math.random() * 400;
    try {
      const gap = answeredAt === null ? "" : Math.max(0, Math.round(performance.now() - answeredAt - backoff));
      const r = await fetch(statusUrl + (gap === "" ? "" : (statusUrl.includes("?") ? "&" : "?") + "gap=" + gap),
                            { cache: "no-store" });
      answeredAt = performance.now(); backoff = 0;
      if (!r.ok) {
        // 429 (too many polls from this network: wait as long as the server asks) or a server
        // error: back off, keep the display as it is, and keep polling.
        failures += 1;
        const s = await r.json().catch(() => ({}));
        if (s.next_url) { location.href = s.next_url; return; }   // e.g. the batch can no longer run (503)
        const asked = 1000 * (Number(s.retry_after_s) || Number(r.headers.get("Retry-After")) || 0);
        next = Math.min(30000, Math.max(asked, 1000 * 2 ** Math.min(failures, 5))) + Math.random() * 1000;
        backoff = next;   // a wait the server asked for is no absence
      } else {
        failures = 0;
        const s = await r.json();
        if (s.play_url) { location.href = s.play_url; return; }
        if (s.next_url) { location.href = s.next_url; return; }
        showAway(!!s.away);
        if (s.away) { next = 3000; answeredAt = null; }   // away: only the button brings the worker back
        bar.style.width = Math.min(100, 100 * s.waited_s / Math.max(1, s.max_wait_s)) + "%";
        waited.textContent = `Waited ${Math.round(s.waited_s)} s of at most ${s.max_wait_s} s.`;
      }
    } catch (e) { /* network blip: try again */ }
    setTimeout(poll, next);
  }
  if (!away.hidden) showAway(true);
  poll();
})();
