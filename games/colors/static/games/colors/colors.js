/* The color reference game in the browser: renders the server's view, sends chat and clicks.
 *
 * Each round's outcome comes from the server: the round_ended event's ``as_seen`` (this seat's
 * order of the round's colors, where the target and the listener's pick were, right or wrong)
 * and, on a (re)load, the view's ``history`` (every round ended so far, with its messages). The page
 * shows the last round's outcome above the colors, keeps the chat of every round (separated by
 * round, each ending with its outcome) and, once the game is over, a summary of all rounds.
 * Nothing is computed here: a listener learns a round's target only from the click's events.
 */
(function () {
  "use strict";
  const S = window.GT_SEAT, el = GT.el;
  const $ = (id) => document.getElementById(id);
  const hsl = (c) => `hsl(${c[0]}, ${c[1]}%, ${c[2]}%)`;
  const SPEAKER = S.role === "speaker";
  let view = null, goneTimer = null, justEnded = 0;

  /* One ended round in words, for this seat (h: the server's as_seen). */
  function verdict(h) {
    if (SPEAKER) return h.correct ? "Your partner picked the target." : "Your partner picked the color marked ✗; the target is framed.";
    return h.correct ? "You picked the target." : "You picked the color marked ✗; the target is framed.";
  }

  /* The three colors of an ended round, small, in this seat's order: the target framed, the
   * listener's pick marked. */
  function miniSwatches(h) {
    return el("div", { class: "mini-swatches" }, ...h.colors.map((c, i) => {
      const target = i === h.target_position, picked = i === h.clicked_position;
      const label = [target ? "target" : "", picked ? (SPEAKER ? "picked by your partner" : "your pick") : ""]
        .filter(Boolean).join(", ");
      return el("span", { class: "mini" + (target ? " target" : "") + (picked ? " picked" : ""),
        style: `background:${hsl(c)}`, "data-position": i, title: label || "other color",
        "aria-label": `color ${i + 1}` + (label ? ` (${label})` : "") },
        ...(picked ? [el("span", { class: "pick-mark", text: h.correct ? "✓" : "✗" })] : []));
    }));
  }

  function renderOutcome(h) {
    const out = $("outcome");
    out.replaceChildren();
    if (!h) { out.className = "outcome"; return; }
    out.className = "outcome " + (h.correct ? "good" : "bad") + (h.round === justEnded ? " fresh" : "");
    out.dataset.round = h.round;
    out.append(el("span", { class: "outcome-text", text: `Round ${h.round}: ` + (h.correct ? "correct!" : "not the target.") }),
      miniSwatches(h), el("span", { class: "outcome-detail", text: verdict(h) }));
  }

  function renderChat(v) {
    const chat = $("chat"), stick = chat.scrollHeight - chat.scrollTop - chat.clientHeight < 40;
    chat.replaceChildren();
    const line = (m) => el("div", { class: "msg " + (m.role === S.role ? "mine" : "theirs"), text: m.text });
    for (const h of v.history || []) {
      const part = el("div", { class: "round-log", "data-round": h.round },
        el("div", { class: "round-sep", text: `Round ${h.round}` }), ...h.messages.map(line),
        el("div", { class: "msg system " + (h.correct ? "good" : "bad"), text: (h.correct ? "✓ " : "✗ ") + verdict(h) }));
      chat.append(part);
    }
    if (!v.over) {
      chat.append(el("div", { class: "round-log current", "data-round": v.round },
        el("div", { class: "round-sep", text: `Round ${v.round}` }), ...v.messages.map(line)));
    }
    if (stick || !view || view.round !== v.round) chat.scrollTop = chat.scrollHeight;
  }

  /* The finished page: one row per round (its colors, target and pick, right or wrong, the
   * messages) and the total. */
  function renderSummary(v) {
    const body = $("summary-rows");
    body.replaceChildren();
    for (const h of v.history || []) {
      body.append(el("tr", { "data-round": h.round, class: h.correct ? "good" : "bad" },
        el("td", { class: "num", text: String(h.round) }),
        el("td", {}, miniSwatches(h)),
        el("td", { class: "result", text: h.correct ? "✓ right" : "✗ wrong" }),
        el("td", { class: "messages" }, ...(h.messages.length ? h.messages.map((m) =>
          el("div", { class: "summary-msg" }, el("span", { class: "who", text: m.role === S.role ? "You" : "Partner" }),
            el("span", { text: m.text }))) : [el("span", { class: "muted", text: "(no messages)" })]))));
    }
    $("summary").hidden = !(v.history || []).length;
  }

  function banner(text, kind) {
    const b = $("banner");
    b.hidden = !text; b.textContent = text || ""; b.className = "banner" + (kind ? " " + kind : "");
  }

  function render(v) {
    $("round-label").textContent = v.over ? "Finished" : `Round ${v.round} of ${v.rounds}`;
    $("score").textContent = `Score ${v.score.correct} / ${v.score.played}`;
    const sw = $("swatches"); sw.replaceChildren();
    v.colors.forEach((c, i) => {
      const b = el("button", { class: "swatch" + (c.target ? " target" : "") + (v.can_click ? " clickable" : ""),
        style: `background:${hsl(c.hsl)}`, "data-position": i, "aria-label": `color ${i + 1}` + (c.target ? " (target)" : ""),
        disabled: S.role === "listener" && !v.can_click ? "disabled" : null });
      if (c.target) b.append(el("span", { class: "tag", text: "target" }));
      if (S.role === "listener") b.addEventListener("click", () => click(i));
      sw.append(b);
    });
    const waiting = !v.over && S.role === "listener" && !v.can_click;
    $("instruction").className = waiting ? "waiting-note" : "muted";
    if (v.over) $("instruction").textContent = "";
    else if (S.role === "speaker") $("instruction").textContent = "Describe the color with the black frame so your partner can pick it.";
    else $("instruction").textContent = v.can_click ? "Click the color your partner is describing." : "Wait for your partner to describe a color.";
    renderChat(v);
    view = v;
    renderOutcome(v.last_round);
    $("send").disabled = !v.can_chat; $("chatinput").disabled = !v.can_chat;
    if (v.over) {
      $("finished").hidden = false;
      $("play").hidden = true;
      $("final").textContent = `Your team got ${v.score.correct} of ${v.score.played} rounds right.`;
      renderSummary(v);
    }
  }

  function click(position) {
    if (!view || !view.can_click) return;
    client.act({ type: "click", position, round: view.round });
    view.can_click = false; render(view);
  }

  $("chatinput").addEventListener("input", () => {
    const n = $("chatinput").value.trim().length, max = view ? view.max_message_len : 140;
    $("counter").textContent = `${n}/${max}`; $("counter").style.color = n > max ? "var(--bad)" : "";
  });
  $("chatform").addEventListener("submit", (e) => {
    e.preventDefault();
    const text = $("chatinput").value.trim();
    if (!text || !view) return;
    if (text.length > view.max_message_len) { $("chaterror").textContent = `At most ${view.max_message_len} characters.`; return; }
    client.act({ type: "chat", text, round: view.round });
    $("chatinput").value = ""; $("counter").textContent = ""; $("chaterror").textContent = "";
  });
  $("end-gone").addEventListener("click", () => GT.partnerGone(S.matchId, S.token).then((r) => {
    if (!r.ended) banner(r.message, "error");
  }));

  const client = new GT.SeatClient({
    wsPath: S.wsPath, token: S.token,
    onView: (v) => v && render(v),
    onEvent: (ev) => {
      if (ev.type === "agent_timed_out") banner(ev.payload.message);
      else if (ev.type === "match_aborted") { banner(GT.abortedText(ev.payload, S.nextUrl));
        $("finished").hidden = false; $("final").textContent = "This game has ended."; }
      else if (ev.type === "round_started") banner("");
      else if (ev.type === "round_ended" && ev.payload.as_seen) {   // this seat's outcome of the round
        justEnded = ev.payload.as_seen.round;
        renderOutcome(ev.payload.as_seen);
      }
    },
    onError: (e) => { $("chaterror").textContent = e.message; },
    onPresence: (p) => {
      clearTimeout(goneTimer);
      if (p.connected) { $("gone").hidden = true; if ($("banner").dataset.presence) banner(""); return; }
      banner("Your partner's connection dropped; waiting for them to come back…");
      $("banner").dataset.presence = "1";
      goneTimer = setTimeout(() => { if (view && !view.over) $("gone").hidden = false; }, S.partnerGoneS * 1000);
    },
    onStatus: (s) => {
      const c = $("conn"); c.textContent = s; c.className = "status-pill" + (s === "connected" ? "" : " bad");
    },
  });
  window.gtClient = client;
})();
