/* GuessWhich in the browser (questioner and answerer pages).
 *
 * Renders only the server's view (games/guesswhich/rules.py view_for): the pool, caption, dialog,
 * round, what this seat must do now (view.expects), ruled-out images, the bonus and, once the
 * secret is found, its id and rank. Nothing is scored here: the bonus shown is the view's.
 * Images come from /m/<match>/img/<id>.png?seat=<token>&size=... (live/scene_images.py), the same
 * URL scheme for every pool image. Text is shown as text (GT.el), never as HTML.
 */
(function () {
  "use strict";
  const S = window.GT_SEAT, el = GT.el, P = GT.dialogPage;
  const { $, MAX_LEN, showError } = P;
  const Q = S.role === "questioner";
  const partner = S.partnerName || "your partner";
  const Partner = partner.charAt(0).toUpperCase() + partner.slice(1);
  const RATING_LABELS = {
    understood_question: `${Partner} understood my questions`,
    understood_image: `${Partner} understood the secret image`,
    fluency: "The answers were fluent",
    detail: "The answers were detailed",
    accuracy: "The answers were accurate",
    consistency: "The answers were consistent with each other",
  };
  let view = null, busy = false, tiles = null, ratingsBuilt = false, aborted = false;

  const imgUrl = (id, size) => P.imgUrl(S, id, size);

  for (const n of document.querySelectorAll(".partner-name")) n.textContent = partner;

  function setPrompt(text, acting) {
    const p = $("prompt");
    p.textContent = text;
    p.className = "prompt " + (acting ? "act" : "wait");
  }

  function plural(n, word, suffix = "s") { return `${n} ${word}${n === 1 ? "" : suffix}`; }

  /* ---------------------------------------------------------------- questioner: the pool */
  function buildPool(v) {
    const pool = $("pool");
    pool.replaceChildren();
    tiles = {};
    v.pool.forEach((item, i) => {
      const img = el("img", { src: imgUrl(item.id, "thumb"), alt: `image ${i + 1}`, draggable: "false" });
      const node = el("button", { type: "button", class: "thumb", "data-id": item.id, "data-n": i + 1,
        "aria-label": `image ${i + 1}` }, img, el("span", { class: "num", text: String(i + 1) }),
        el("span", { class: "tag" }));
      node.addEventListener("click", () => { hidePreview(); clickImage(item.id); });
      node.addEventListener("mouseenter", () => schedulePreview(node, item.id, i + 1));
      node.addEventListener("mouseleave", hidePreview);
      pool.append(node);
      tiles[item.id] = { node, n: i + 1 };
    });
  }

  const nOf = (id) => (tiles && tiles[id] ? tiles[id].n : "?");

  function currentBestGuess(v) {
    for (let i = v.dialog.length - 1; i >= 0; i--) if (v.dialog[i].guess) return [v.dialog[i].guess, v.dialog[i].round];
    return [null, null];
  }

  function renderPool(v) {
    if (!tiles || Object.keys(tiles).length !== v.pool.length || v.pool.some((p) => !tiles[p.id])) buildPool(v);
    const ruled = new Set(v.ruled_out || []);
    const [best, bestRound] = currentBestGuess(v);
    const guessing = v.expects === "guess" || v.expects === "final_guess";
    for (const [id, t] of Object.entries(tiles)) {
      const isRuled = ruled.has(id), isSecret = v.secret_id === id;
      const clickable = guessing && !busy && !isRuled;
      t.node.classList.toggle("ruled", isRuled);
      t.node.classList.toggle("secret", isSecret);
      t.node.classList.toggle("best", !isRuled && !isSecret && id === best);
      t.node.classList.toggle("clickable", clickable);
      t.node.setAttribute("aria-disabled", clickable ? "false" : "true");
      const tag = t.node.querySelector(".tag");
      tag.textContent = isSecret ? "the secret image" : isRuled ? "not it" : id === best ? `best guess, round ${bestRound}` : "";
      t.node.setAttribute("aria-label", `image ${t.n}` + (isSecret ? " (the secret)" : isRuled ? " (ruled out)" :
        id === best ? " (your best guess)" : ""));
    }
    $("pool").classList.toggle("guessing", guessing);
  }

  function clickImage(id) {
    if (!view || aborted) return;
    if ((view.ruled_out || []).includes(id)) {
      showError("That image was already ruled out: it is not the secret. Pick another one.", "ruled_out");
      return;
    }
    if (view.expects !== "guess" && view.expects !== "final_guess") {
      const why = {
        question: `Ask ${partner} a question first; you pick your best guess after the answer.`,
        answer: `Wait for ${partner}'s answer, then click your best guess.`,
        feedback: "You already found the secret image.",
        done: "This game is over.",
      }[view.phase] || "You cannot pick an image now.";
      showError(why, "not_now");
      return;
    }
    if (busy) return;
    busy = true;
    showError("");
    client.act({ type: "guess", image_id: id });
    renderPool(view);
  }

  /* ---------------------------------------------------------------- hover preview */
  let previewTimer = null;
  function schedulePreview(node, id, n) {
    clearTimeout(previewTimer);
    previewTimer = setTimeout(() => {
      const p = $("preview"), r = node.getBoundingClientRect(), w = 480, h = 344;
      // the thumbnail (already loaded) fills the preview at once; the full image covers it when it comes
      const img = p.querySelector("img");
      img.style.backgroundImage = `url("${imgUrl(id, "thumb")}")`;
      img.src = imgUrl(id, "full");
      p.querySelector("span").textContent = `image ${n}`;
      let left = r.right + 10;
      if (left + w > window.innerWidth - 8) left = r.left - 10 - w;
      if (left < 8) left = 8;
      const top = Math.max(8, Math.min(r.top - 60, window.innerHeight - h - 8));
      p.style.left = left + "px"; p.style.top = top + "px";
      p.hidden = false;
    }, 450);
  }
  function hidePreview() {
    clearTimeout(previewTimer);
    const p = $("preview");
    if (p) p.hidden = true;
  }

  /* ---------------------------------------------------------------- chat */
  function bubble(kind, who, text) {
    return el("div", { class: "msg " + kind }, el("span", { class: "who", text: who }), el("span", { class: "text", text }));
  }

  function renderChat(v) {
    const chat = $("chat");
    chat.replaceChildren();
    if (!v.dialog.length) {
      chat.append(el("div", { class: "msg system", text: Q ? `Read the caption, then ask ${partner} your first question.`
        : "Your partner's questions will appear here." }));
    }
    for (const d of v.dialog) {
      chat.append(el("div", { class: "msg system round-sep", text: `Round ${d.round}` }));
      chat.append(bubble(Q ? "mine q" : "theirs q", Q ? "You" : "Your partner", d.question));
      if (d.answer !== null && d.answer !== undefined) {
        chat.append(bubble(Q ? "theirs a" : "mine a", Q ? Partner : "You", d.answer));
      } else if (Q && v.phase === "answer") {
        chat.append(el("div", { class: "msg theirs typing" }, el("span", { class: "who", text: Partner }), "is answering…"));
      }
      if (Q && d.guess) chat.append(el("div", { class: "msg system guess", text: `Your best guess: image ${nOf(d.guess)}` }));
    }
    if (Q) {
      const ruled = new Set(v.ruled_out || []);
      (v.final_clicks || []).forEach((id, i) => {
        chat.append(el("div", { class: "msg system click " + (ruled.has(id) ? "wrong" : "right"),
          text: `Final click ${i + 1}: image ${nOf(id)} ${ruled.has(id) ? "is not it" : "is the secret!"}` }));
      });
    }
    chat.scrollTop = chat.scrollHeight;
  }

  /* ---------------------------------------------------------------- bonus, result, feedback */
  const signed = (n) => (n < 0 ? "\u2212" + Math.abs(n) : "+" + n);

  function renderBonus(v) {
    const b = v.bonus, box = $("bonus");
    if (!b || !box) return;
    box.replaceChildren();
    if (b.total === null || b.total === undefined) {
      box.append("Bonus: ", el("strong", { text: `${b.base} to start` }),
        ` · ${signed(b.per_wrong_click)} per wrong final click`,
        b.wrong_clicks ? ` (so far ${b.wrong_clicks})` : "",
        ` · ${signed(b.per_right_round)} per round whose best guess was right (counted at the end)`);
    } else {
      box.append("Your bonus: ", el("strong", { id: "bonus-total", text: `${b.total} points` }),
        ` (${b.base} to start · ${plural(b.wrong_clicks, "wrong final click")} × ${signed(b.per_wrong_click)} · `
        + `${plural(b.right_round_guesses, "right best guess", "es")} × ${signed(b.per_right_round)})`);
    }
  }

  function renderResult(v) {
    const r = $("result");
    if (Q) {
      if (!v.secret_id) { r.hidden = true; return; }
      r.hidden = false;
      r.replaceChildren(
        el("div", { class: "result-head" }, "You found the secret image: ", el("strong", { text: `image ${nOf(v.secret_id)}` })),
        el("div", {}, "Its rank: ", el("strong", { id: "rank", text: String(v.rank) }),
          ` of ${v.pool.length} (found on click ${v.rank}).`),
        el("div", {}, "Your bonus: ", el("strong", { id: "bonus-final", text: String(v.bonus.total) }), " points."));
    } else {
      if (v.phase !== "done") { r.hidden = true; return; }
      r.hidden = false;
      r.replaceChildren(el("div", {}, "Your partner found the image. Team bonus: ",
        el("strong", { id: "bonus-final", text: String(v.bonus.total) }), " points."));
    }
  }

  function buildRatings(form) {
    const box = $("ratings");
    box.replaceChildren();
    for (const key of form.ratings) {
      const scale = el("div", { class: "scale", role: "radiogroup", "aria-label": RATING_LABELS[key] || key });
      for (let x = form.min; x <= form.max; x++) {
        scale.append(el("label", { title: String(x) },
          el("input", { type: "radio", name: "rate-" + key, value: String(x), "data-key": key }),
          el("span", { text: String(x) })));
      }
      box.append(el("div", { class: "rating-row", "data-key": key },
        el("span", { class: "rating-label", text: RATING_LABELS[key] || key.replace(/_/g, " ") }), scale));
    }
    $("comment").maxLength = form.comment_max;
    ratingsBuilt = true;
  }

  function renderFeedback(v) {
    const fb = $("feedback");
    if (!fb) return;
    fb.hidden = v.phase !== "feedback" || aborted;
    if (v.phase === "feedback" && !ratingsBuilt && v.feedback_form) buildRatings(v.feedback_form);
    $("fb-submit").disabled = busy; $("fb-skip").disabled = busy;
  }

  /* ---------------------------------------------------------------- the whole page */
  function questionerPrompt(v) {
    switch (v.phase) {
      case "question":
        return [v.dialog.length ? `Ask ${partner} question ${v.round} of ${v.rounds_total} about the secret image.`
          : `Read the caption, then ask ${partner} a question about the secret image.`, true];
      case "answer": return [`Waiting for ${partner}'s answer…`, false];
      case "guess": return [`Click your best guess: the image you now think is the secret.`, true];
      case "final": return [(v.final_clicks.length ? "Not that one. Keep clicking" : "The questions are over. Click images")
        + " until you find the secret one.", true];
      case "feedback": return [`You found it! Please rate ${partner}.`, true];
      default: return ["The game is over. Thank you!", false];
    }
  }

  function answererPrompt(v) {
    switch (v.phase) {
      case "question": return [v.dialog.length ? "Your partner is thinking of the next question…"
        : "Waiting for your partner's first question…", false];
      case "answer": return ["Answer your partner's question about the image.", true];
      case "guess": return ["Your partner is picking the image they think it is…", false];
      case "final": return ["The questions are over: your partner is looking for the image.", false];
      case "feedback": return ["Your partner found the image and is giving feedback…", false];
      default: return ["The game is over. Thank you!", false];
    }
  }

  function render(v) {
    view = v;
    $("round-label").textContent = `Round ${v.round} of ${v.rounds_total}`;
    $("caption").textContent = v.caption;
    const [text, acting] = aborted ? ["This game has ended.", false] : (Q ? questionerPrompt(v) : answererPrompt(v));
    setPrompt(text, acting);
    if (Q) {
      renderPool(v);
      renderBonus(v);
      renderFeedback(v);
      const form = $("askform");
      form.hidden = !["question", "answer", "guess"].includes(v.phase) || aborted;
      const can = v.expects === "question" && !busy && !aborted;
      $("askinput").disabled = !can; $("ask").disabled = !can;
      $("askinput").placeholder = can ? "Ask a question about the secret image…"
        : v.phase === "answer" ? `Waiting for ${partner}'s answer…` : "Click your best guess first…";
      if (can && document.activeElement !== $("askinput")) $("askinput").focus({ preventScroll: true });
    } else {
      const img = $("secret-image");
      const src = imgUrl(v.image.id, "large");
      if (img.getAttribute("src") !== src) img.src = src;
      const form = $("answerform");
      form.hidden = ["final", "feedback", "done"].includes(v.phase) || aborted;
      const can = v.expects === "answer" && !busy && !aborted;
      $("answerinput").disabled = !can; $("answer").disabled = !can;
      $("answerinput").placeholder = can ? "Answer the question…" : "Waiting for a question…";
      if (can && document.activeElement !== $("answerinput")) $("answerinput").focus({ preventScroll: true });
    }
    renderChat(v);
    renderResult(v);
    P.renderPending(v, aborted);
    if (v.phase === "done" || aborted) {
      $("finished").hidden = false;
      let final = "This game is over. Thank you!";
      if (aborted) final = "This game has ended.";
      else if (Q && v.feedback && v.feedback.skipped) final = "The game is over. Thank you for playing!";
      else if (Q && v.feedback) final = "Thank you for your ratings!";
      $("final").textContent = final;
    }
    $("chat").scrollTop = $("chat").scrollHeight;   // after every part has taken its height
  }

  /* ---------------------------------------------------------------- sending */
  function wireTextForm(formId, inputId, type) {
    const input = $(inputId);
    input.addEventListener("input", () => {
      const n = input.value.trim().length;
      $("counter").textContent = n ? `${n}/${MAX_LEN}` : "";
      $("counter").style.color = n > MAX_LEN ? "var(--bad)" : "";
    });
    $(formId).addEventListener("submit", (e) => {
      e.preventDefault();
      if (!view || busy) return;
      const text = input.value.trim();
      const what = type === "ask" ? "question" : "answer";
      if (!text) { showError(`Type your ${what} first: it cannot be empty.`, "empty_message"); return; }
      if (text.length > MAX_LEN) { showError(`Your ${what} is ${text.length} characters long; the limit is ${MAX_LEN}.`, "message_too_long"); return; }
      busy = true;
      showError("");
      client.act({ type, text });
      input.value = ""; $("counter").textContent = "";
      render(view);
    });
  }

  if (Q) {
    wireTextForm("askform", "askinput", "ask");
    $("feedback").addEventListener("submit", (e) => {
      e.preventDefault();
      if (!view || busy || !view.feedback_form) return;
      const ratings = {};
      const missing = [];
      for (const key of view.feedback_form.ratings) {
        const checked = document.querySelector(`input[name="rate-${key}"]:checked`);
        if (checked) ratings[key] = Number(checked.value); else missing.push(RATING_LABELS[key] || key);
      }
      if (missing.length) {
        showError(`Please give all ${view.feedback_form.ratings.length} ratings (missing: ${missing.join("; ")}), or Skip.`, "missing_rating");
        return;
      }
      const comment = $("comment").value.trim();
      if (comment.length > view.feedback_form.comment_max) {
        showError(`The comment is ${comment.length} characters long; the limit is ${view.feedback_form.comment_max}.`, "message_too_long");
        return;
      }
      busy = true; showError("");
      client.act({ type: "feedback", ratings, comment });
      render(view);
    });
    $("fb-skip").addEventListener("click", () => {
      if (!view || busy) return;
      busy = true; showError("");
      client.act({ type: "skip_feedback" });
      render(view);
    });
  } else {
    wireTextForm("answerform", "answerinput", "answer");
  }

  const client = new GT.SeatClient({
    wsPath: S.wsPath, token: S.token,
    onView: (v, msg) => {
      if (msg && msg.status === "aborted") aborted = true;
      if (v) { busy = false; render(v); }
    },
    onError: (e) => {
      busy = false;
      showError(e.message, e.code);
      if (view) render(view);
    },
    ...P.seatHandlers({ S, partnerIsAgent: S.partnerName === "ALICE", getView: () => view,
                        onAborted: () => { aborted = true; } }),
  });
  window.gtClient = client;
})();
