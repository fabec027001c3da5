/* What the two dialog pages on CLEVR scenes share (GuessWhich: static/games/guesswhich/guesswhich.js;
 * visual-dialog chat: static/games/visdial/visdial.js): the image URL, the banner, error display,
 * the pending question, and the seat client's event, presence and status handlers.
 * Each page keeps its own state (view, busy, aborted) and passes getters and setters in. */
(function () {
  "use strict";
  const $ = (id) => document.getElementById(id);
  // errors about the typed text; they are repeated next to the text box
  const TEXT_CODES = new Set(["empty_message", "message_too_long", "answer_pending", "guess_required", "dialog_over",
    "no_question", "bad_field"]);

  function banner(text, kind) {
    const b = $("banner");
    b.hidden = !text; b.textContent = text || ""; b.className = "banner" + (kind ? " " + kind : "");
    if (!text) delete b.dataset.presence;
  }

  GT.dialogPage = {
    $,
    MAX_LEN: 200, // rules: questions and answers are 1-200 characters (the server checks too)
    imgUrl: (S, id, size) =>
      `${S.imgBase}${encodeURIComponent(id)}.png?seat=${encodeURIComponent(S.token)}&size=${size}`,
    banner,
    showError(message, code) {
      const e = $("error");
      e.textContent = message || "";
      e.dataset.code = code || "";
      $("form-error").textContent = TEXT_CODES.has(code) ? message : "";
    },
    renderPending(v, aborted) {
      const box = $("pending");
      if (!box) return;
      box.hidden = !v.pending_question || v.expects !== "answer" || aborted;
      $("pending-text").textContent = v.pending_question || "";
    },
    /* onEvent, onPresence and onStatus for GT.SeatClient, plus the "end the game" button.
     * opts: S (the seat), partnerIsAgent (no "connection dropped" notice for an agent),
     * getView() (the latest view), onAborted() (the page marks itself ended). */
    seatHandlers({ S, partnerIsAgent, getView, onAborted }) {
      let goneTimer = null;
      $("end-gone").addEventListener("click", () => GT.partnerGone(S.matchId, S.token).then((r) => {
        if (!r.ended) banner(r.message, "error");
      }));
      return {
        onEvent: (ev) => {
          if (ev.actor && ev.actor !== S.role && ev.actor !== "system" && $("banner").dataset.presence) {
            clearTimeout(goneTimer); $("gone").hidden = true; banner("");   // the partner acted: they are back
          }
          if (ev.type === "agent_timed_out") banner(ev.payload.message);
          else if (ev.type === "match_aborted") {
            onAborted();
            banner(GT.abortedText(ev.payload, S.nextUrl));
          }
        },
        onPresence: (p) => {
          clearTimeout(goneTimer);
          if (p.connected) { $("gone").hidden = true; if ($("banner").dataset.presence) banner(""); return; }
          if (partnerIsAgent) return;
          banner("Your partner's connection dropped; waiting for them to come back…");
          $("banner").dataset.presence = "1";
          goneTimer = setTimeout(() => {
            const view = getView();
            if (view && view.phase !== "done") $("gone").hidden = false;
          }, S.partnerGoneS * 1000);
        },
        onStatus: (s) => {
          const c = $("conn"); c.textContent = s; c.className = "status-pill" + (s === "connected" ? "" : " bad");
        },
      };
    },
  };
})();
