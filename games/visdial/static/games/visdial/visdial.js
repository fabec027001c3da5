/* Visual-dialog chat in the browser (games/visdial/rules.py): the questioner sees the caption
 * only and asks; the answerer sees the image and answers; strictly alternating, view.rounds_total
 * rounds. Renders only the server's view; text is shown as text (GT.el). */
(function () {
  "use strict";
  const S = window.GT_SEAT, el = GT.el, P = GT.dialogPage;
  const { $, MAX_LEN, showError } = P;
  const Q = S.role === "questioner";
  const WHAT = Q ? "question" : "answer";
  let view = null, busy = false, aborted = false;

  const imgUrl = (id, size) => P.imgUrl(S, id, size);

  function prompt(v) {
    if (aborted) return ["This game has ended.", false];
    if (v.phase === "done") return [`The dialog is complete: ${v.rounds_total} questions and answers. Thank you!`, false];
    if (Q) {
      return v.phase === "question"
        ? [v.dialog.length ? `Ask question ${v.round} of ${v.rounds_total} about the image.`
          : "Read the caption, then ask your first question about the image.", true]
        : ["Waiting for your partner's answer…", false];
    }
    return v.phase === "answer" ? ["Answer your partner's question about the image.", true]
      : [v.dialog.length ? "Waiting for your partner's next question…" : "Waiting for your partner's first question…", false];
  }

  function bubble(kind, who, text) {
    return el("div", { class: "msg " + kind }, el("span", { class: "who", text: who }), el("span", { class: "text", text }));
  }

  function render(v) {
    view = v;
    $("round-label").textContent = `Round ${v.round} of ${v.rounds_total}`;
    $("caption").textContent = v.caption;
    const [text, acting] = prompt(v);
    const p = $("prompt"); p.textContent = text; p.className = "prompt " + (acting ? "act" : "wait");
    if (!Q && v.image) {
      const img = $("scene-image"), src = imgUrl(v.image.id, "large");
      if (img.getAttribute("src") !== src) img.src = src;
    }
    const chat = $("chat");
    chat.replaceChildren();
    if (!v.dialog.length) {
      chat.append(el("div", { class: "msg system", text: Q ? "Your questions and your partner's answers will appear here."
        : "Your partner's questions will appear here." }));
    }
    for (const d of v.dialog) {
      chat.append(el("div", { class: "msg system round-sep", text: `Round ${d.round}` }));
      chat.append(bubble(Q ? "mine q" : "theirs q", Q ? "You" : "Your partner", d.question));
      if (d.answer !== null && d.answer !== undefined) chat.append(bubble(Q ? "theirs a" : "mine a", Q ? "Your partner" : "You", d.answer));
      else if (Q) chat.append(el("div", { class: "msg theirs typing" }, el("span", { class: "who", text: "Your partner" }), "is answering…"));
    }
    chat.scrollTop = chat.scrollHeight;
    P.renderPending(v, aborted);
    const can = v.expects === (Q ? "question" : "answer") && !busy && !aborted;
    const input = $("sendinput");
    input.disabled = !can; $("send").disabled = !can;
    input.placeholder = can ? (Q ? "Ask a question about the image…" : "Answer the question…")
      : v.phase === "done" ? "" : Q ? "Waiting for the answer…" : "Waiting for a question…";
    $("sendform").hidden = v.phase === "done" || aborted;
    if (can && document.activeElement !== input) input.focus({ preventScroll: true });
    updateCounter();
    if (v.phase === "done" || aborted) {
      $("finished").hidden = false;
      $("final").textContent = aborted ? "This game has ended." : "The dialog is complete. Thank you!";
    }
  }

  const input = $("sendinput");
  // the limit of this seat's text, from the game's action schema (crowd/pages.py seat_text_max)
  const LIMIT = parseInt(input.dataset.max, 10) || MAX_LEN;
  /* remaining characters as one types; over the limit the send button is disabled (issue 10) */
  function updateCounter() {
    const left = LIMIT - input.value.trim().length, c = $("counter");
    c.textContent = left >= 0 ? `${left} character${left === 1 ? "" : "s"} left` : `${-left} too many`;
    c.className = "counter" + (left < 0 ? " over" : left <= 20 ? " near" : "");
    if (left < 0) $("send").disabled = true;
    else if (!input.disabled) $("send").disabled = false;
  }
  input.addEventListener("input", updateCounter);
  $("sendform").addEventListener("submit", (e) => {
    e.preventDefault();
    if (!view || busy) return;
    const text = input.value.trim();
    if (!text) { showError(`Type your ${WHAT} first: it cannot be empty.`, "empty_message"); return; }
    if (text.length > LIMIT) { showError(`Your ${WHAT} is ${text.length} characters long; the limit is ${LIMIT}.`, "message_too_long"); return; }
    busy = true; showError("");
    client.act({ type: Q ? "ask" : "answer", text });
    input.value = "";
    render(view);
  });
  const client = new GT.SeatClient({
    wsPath: S.wsPath, token: S.token,
    onView: (v, msg) => {
      if (msg && msg.status === "aborted") aborted = true;
      if (v) { busy = false; render(v); }
    },
    onError: (e) => { busy = false; showError(e.message, e.code); if (view) render(view); },
    ...P.seatHandlers({ S, partnerIsAgent: S.partnerIsAgent, getView: () => view, onAborted: () => { aborted = true; } }),
  });
  window.gtClient = client;
})();
