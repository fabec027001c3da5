/* The color reference game in the browser: renders the server's view, sends chat and clicks. */
(function () {
  "use strict";
  const S = window.GT_SEAT, el = GT.el;
  const $ = (id) => document.getElementById(id);
  const hsl = (c) => `hsl(${c[0]}, ${c[1]}%, ${c[2]}%)`;
  let view = null, goneTimer = null;

  function banner(text, kind) {
    const b = $("banner");
    b.hidden = !text; b.textContent = text || ""; b.className = "banner" + (kind ? " " + kind : "");
  }

  function render(v) {
    view = v;
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
    const chat = $("chat"); chat.replaceChildren();
    if (v.last_round && !v.over) chat.append(el("div", { class: "msg system", text: `Round ${v.round} started.` }));
    for (const m of v.messages) chat.append(el("div", { class: "msg " + (m.role === S.role ? "mine" : "theirs"), text: m.text }));
    chat.scrollTop = chat.scrollHeight;
    const out = $("outcome");
    if (v.last_round) {
      out.textContent = `Round ${v.last_round.round}: ` + (v.last_round.correct ? "correct!" : "not the target.");
      out.className = "outcome " + (v.last_round.correct ? "good" : "bad");
    } else { out.textContent = ""; out.className = "outcome"; }
    $("send").disabled = !v.can_chat; $("chatinput").disabled = !v.can_chat;
    if (v.over) {
      $("finished").hidden = false;
      $("final").textContent = `Your team got ${v.score.correct} of ${v.score.played} rounds right.`;
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
