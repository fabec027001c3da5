/* CoDraw in the browser, for both seats (window.GT_SEAT.role: "teller" or "drawer").
 *
 * Server truth: every picture is drawn from the seat's view (rules.view_for): the Teller's target,
 * the Drawer's canvas, the chat, whose turn it is, the timer's deadline and the final score.
 * Every canvas change is one action in the rules' format (place / update / remove) sent through
 * GT.SeatClient.act; the canvas is redrawn from the next view, so a refused move snaps back (and
 * its error is shown). While the Drawer's drag is in flight the piece stays where it was dropped.
 *
 * The art: window.GT_CODRAW_ART (from /codraw/art-config.js): the project's SVGs, or the original
 * Abstract Scenes PNGs when the server has GT_CODRAW_ART_DIR (falling back to the SVG of a piece
 * whose PNG does not load). A piece is drawn centred on (x, y) at its natural size times the
 * depth scale (1, 0.7, 0.49), mirrored when flipped, in the CoDraw draw order.
 */
(function () {
  "use strict";
  const S = window.GT_SEAT, ART = window.GT_CODRAW_ART, el = GT.el;
  const $ = (id) => document.getElementById(id);
  const TELLER = S.role === "teller", DRAWER = S.role === "drawer";
  const [W, H] = ART.canvas;
  const SCALES = ART.depth_scales;
  const SIZE_NAMES = ["large", "medium", "small"];
  const MIKE = 18, JENNY = 19, SUN = 3, N_SKY = 8;
  const isHuman = (idx) => idx === MIKE || idx === JENNY;
  const poseOf = (sub) => Math.floor(sub / 5), exprOf = (sub) => sub % 5;
  /* The server's clock seen from the page: offset = server time - browser time, whatever the skew
   * between the two clocks. The page was rendered at server time S.serverNowMs (milliseconds), after
   * the browser sent its request and before this script runs, so the offset lies between
   * serverNowMs - (now at parse) and serverNowMs - (request start). The estimate is the middle of
   * that range (Navigation Timing), and never below its lower bound, which every server time the
   * page learns later raises (the match's start: the server's clock is past it). */
  const serverClock = (() => {
    const parsedAt = Date.now();
    let low = S.serverNowMs ? S.serverNowMs - parsedAt : -Infinity, offset = low === -Infinity ? 0 : low;
    try {
      const nav = performance.getEntriesByType("navigation")[0];
      const sinceSent = nav && nav.requestStart > 0 ? performance.now() - nav.requestStart : null;   // durations only
      if (S.serverNowMs && sinceSent !== null && sinceSent >= 0) offset = S.serverNowMs - (parsedAt - sinceSent / 2);
    } catch (e) { /* no Navigation Timing: keep the lower bound */ }
    return {
      atLeast(serverMs) { low = Math.max(low, serverMs - Date.now()); },   // the server's clock is past serverMs now
      now() { return Date.now() + Math.max(offset, low); },
    };
  })();

  let view = null, status = "active", client = null, goneTimer = null, peekOpenSeen = false;
  const actionKinds = new Map();          // client action id -> "canvas" | "chat" | "teller"

  /* ------------------------------------------------------------------------------ the art */
  function artUrl(idx, sub) {
    sub = isHuman(idx) ? (sub || 0) : 0;
    if (ART.mode === "png") return ART.png_base + ART.png_names[idx][sub];
    return svgUrl(idx, sub);
  }
  function svgUrl(idx, sub) { return ART.svg_base + idx + "_" + (isHuman(idx) ? (sub || 0) : 0) + ".svg"; }

  const imageCache = new Map();
  function loadImage(url, fallback) {
    if (imageCache.has(url)) return imageCache.get(url);
    const promise = new Promise((resolve) => {
      const img = new Image();
      img.onload = () => resolve(img);
      img.onerror = () => {
        if (fallback && fallback !== url) loadImage(fallback, null).then(resolve);
        else resolve(null);
      };
      img.src = url;
    });
    imageCache.set(url, promise);
    return promise;
  }
  const pieceImage = (idx, sub) => loadImage(artUrl(idx, sub), svgUrl(idx, sub));
  const backgroundImage = () => loadImage(ART.background, ART.svg_base + "background.svg");

  function imgTag(idx, sub, attrs) {
    const img = el("img", Object.assign({ src: artUrl(idx, sub), alt: "", draggable: "false" }, attrs || {}));
    img.addEventListener("error", () => { if (!img.dataset.fallback) { img.dataset.fallback = "1"; img.src = svgUrl(idx, sub); } });
    return img;
  }

  function orderKey(p) { return [p.idx === SUN ? 0 : 1, p.idx >= N_SKY ? 1 : 0, -p.depth, p.idx]; }
  function drawOrder(a, b) {
    const ka = orderKey(a), kb = orderKey(b);
    for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return ka[i] - kb[i];
    return 0;
  }
  function describe(p) {
    let name = p.name || ("piece " + p.idx);
    if (isHuman(p.idx)) name += ` (${ART.poses[poseOf(p.subtype)]}, ${ART.expressions[exprOf(p.subtype)]})`;
    return name;
  }

  /* ------------------------------------------------- a 500x400 scene drawn with Konva */
  const sceneViews = [];   // every SceneView of the page, for gtCodraw.settled()
  class SceneView {
    constructor(container, opts) {
      opts = opts || {};
      this.scale = opts.scale || 1;
      this.interactive = !!opts.interactive;
      this.listEl = opts.listEl || null;
      this.onSelect = opts.onSelect || (() => {});
      this.onMove = opts.onMove || (() => {});
      this.stage = new Konva.Stage({ container, width: W * this.scale, height: H * this.scale,
                                     scaleX: this.scale, scaleY: this.scale });
      this.bgLayer = new Konva.Layer({ listening: false });
      this.layer = new Konva.Layer();
      this.uiLayer = new Konva.Layer({ listening: false });
      this.stage.add(this.bgLayer, this.layer, this.uiLayer);
      this.bgDrawn = false;
      backgroundImage().then((img) => {
        if (img) { this.bgLayer.add(new Konva.Image({ image: img, x: 0, y: 0, width: W, height: H })); this.bgLayer.draw(); }
        this.bgDrawn = true;
      });
      this.pieces = [];
      this.nodes = new Map();
      this.selected = null;
      this.editable = false;
      this.dragging = false;
      this.deferred = false;
      this.token = 0;
      this.drawn = 0;              // the token of the last set() whose pieces are drawn
      sceneViews.push(this);
      this.overrides = new Map();  // idx -> {x, y}: a move sent but not yet in a view
      if (this.interactive) {
        this.stage.on("mousedown touchstart", (e) => { if (e.target === this.stage) this.select(null); });
      }
    }

    async set(pieces) {
      this.pieces = pieces || [];
      if (this.dragging) { this.deferred = true; return; }
      const token = ++this.token;
      const shown = this.pieces.map((p) => Object.assign({}, p, this.overrides.get(p.idx) || {}));
      const images = await Promise.all(shown.map((p) => pieceImage(p.idx, p.subtype)));
      if (token !== this.token) return;
      this.layer.destroyChildren();
      this.nodes.clear();
      const order = shown.map((p, i) => [p, images[i]]).sort((a, b) => drawOrder(a[0], b[0]));
      for (const [p, img] of order) {
        if (!img) continue;
        const node = this.makeNode(p, img);
        this.layer.add(node);
        this.nodes.set(p.idx, node);
      }
      if (this.selected !== null && !this.nodes.has(this.selected)) this.selected = null;
      this.layer.draw();
      this.drawSelection();
      this.renderList();
      this.onSelect(this.selected, true);
      this.drawn = token;
    }

    /* true when the pieces of the last set() (and the background) are drawn, and no drag holds them back */
    get settled() { return this.bgDrawn && this.drawn === this.token && !this.dragging && !this.deferred; }

    makeNode(p, img) {
      const s = SCALES[p.depth] || 1, nw = img.naturalWidth || img.width || 100, nh = img.naturalHeight || img.height || 100;
      const node = new Konva.Image({
        image: img, x: p.x, y: p.y, width: nw, height: nh, offsetX: nw / 2, offsetY: nh / 2,
        scaleX: p.flip ? -s : s, scaleY: s, draggable: this.interactive && this.editable, name: "piece",
      });
      node.setAttr("pieceIdx", p.idx);
      if (!this.interactive) { node.listening(false); return node; }
      try {  // click through transparent parts to the piece behind
        node.cache({ pixelRatio: Math.max(1, window.devicePixelRatio || 1) });
        node.drawHitFromCache(8);
      } catch (e) { /* an image the canvas may not read: the box is the hit area */ }
      const hw = (nw * s) / 2, hh = (nh * s) / 2;
      const mx = Math.max(0, Math.min(ART.off_canvas_margin, hw - 12));
      const my = Math.max(0, Math.min(ART.off_canvas_margin, hh - 12));
      node.dragBoundFunc((pos) => {
        const sc = this.scale;
        return { x: Math.min(Math.max(pos.x, -mx * sc), (W + mx) * sc), y: Math.min(Math.max(pos.y, -my * sc), (H + my) * sc) };
      });
      node.on("mouseenter", () => { this.stage.container().style.cursor = this.editable ? "move" : "pointer"; });
      node.on("mouseleave", () => { this.stage.container().style.cursor = ""; });
      node.on("mousedown touchstart", () => this.select(p.idx));
      node.on("dragstart", () => { this.dragging = true; this.select(p.idx); node.moveToTop(); });
      node.on("dragmove", () => this.drawSelection());
      node.on("dragend", () => {
        this.dragging = false;
        const x = Math.round(node.x()), y = Math.round(node.y());
        this.overrides.set(p.idx, { x, y });
        this.onMove(p.idx, x, y);
        if (this.deferred) { this.deferred = false; this.set(this.pieces); }
      });
      return node;
    }

    setEditable(on) {
      this.editable = !!on;
      for (const node of this.nodes.values()) node.draggable(this.interactive && this.editable);
    }

    select(idx) {
      this.selected = idx;
      this.drawSelection();
      this.onSelect(idx, false);
    }

    drawSelection() {
      this.uiLayer.destroyChildren();
      const node = this.selected === null ? null : this.nodes.get(this.selected);
      if (node) {
        const r = node.getClientRect({ relativeTo: this.layer });
        const box = { x: r.x - 3, y: r.y - 3, width: r.width + 6, height: r.height + 6 };
        this.uiLayer.add(new Konva.Rect(Object.assign({ stroke: "#ffffff", strokeWidth: 4, cornerRadius: 4 }, box)));
        this.uiLayer.add(new Konva.Rect(Object.assign({ stroke: "#2f6fed", strokeWidth: 2, dash: [6, 4], cornerRadius: 4 }, box)));
      }
      this.uiLayer.draw();
    }

    dropOverride(idx) { this.overrides.delete(idx); }

    renderList() {
      if (!this.listEl) return;
      this.listEl.replaceChildren(...this.pieces.slice().sort(drawOrder).map((p) => el("li", {
        "data-idx": p.idx, "data-x": p.x, "data-y": p.y, "data-depth": p.depth, "data-flip": p.flip, "data-subtype": p.subtype,
        text: `${describe(p)}, ${SIZE_NAMES[p.depth]}, facing ${p.flip ? "left" : "right"}, at ${p.x}, ${p.y}`,
      })));
    }
  }

  /* ------------------------------------------------------------------------ messages */
  function banner(text, kind) {
    const b = $("banner");
    b.hidden = !text; b.textContent = text || ""; b.className = "banner" + (kind ? " " + kind : "");
    delete b.dataset.presence;
  }
  function toolsError(text) { $("tools-error").textContent = text || ""; }

  function act(action, kind) {
    const id = client.act(action);
    actionKinds.set(id, kind);
    return id;
  }

  /* ------------------------------------------------------------------------------ views */
  const can = (type) => status === "active" && !!(view && view.can && view.can.includes(type));

  function renderTurn() {
    const t = $("turn"), text = $("turn-text");
    let cls = "wait", msg;
    if (status === "aborted") { cls = "over"; msg = "This game has ended."; }
    else if (!view) msg = "Connecting…";
    else if (view.over) { cls = "over"; msg = "Game over."; }
    else if (TELLER) {
      if (view.peek && view.peek.open) { cls = "mine"; msg = "You are peeking at the Drawer's canvas. Close the peek to chat again."; }
      else if (view.your_turn) { cls = "mine"; msg = view.chat.length ? "Your turn: answer the Drawer, or describe the next part of the scene." : "Your turn: describe the scene to the Drawer (one message)."; }
      else msg = "The Drawer is drawing and will reply. Wait for their message…";
    } else {
      if (view.your_turn) { cls = "mine"; msg = "Your turn: change your canvas, then send a reply to end your turn."; }
      else if (peekOpenSeen) msg = "The Teller is peeking at your canvas…";
      else msg = view.chat.length ? "Wait: the Teller is writing the next message…" : "Wait: the Teller is looking at the scene and will describe it…";
    }
    t.className = "turn " + cls;
    text.textContent = msg;
    $("round-label").textContent = view && !view.over ? `Round ${view.round + 1}` : "";
  }

  function renderChat() {
    const chat = $("chat");
    chat.replaceChildren();
    if (!view.chat.length) {
      chat.append(el("p", { class: "empty", text: TELLER
        ? "Start with the big things: which trees, sky pieces and people are there, then where, how big and which way they face."
        : "The Teller's description will appear here." }));
    }
    for (const m of view.chat) {
      const mine = m.role === S.role;
      chat.append(el("div", { class: "msg " + (mine ? "mine" : "theirs"), "data-role": m.role },
        el("span", { class: "who", text: mine ? "You" : (m.role === "teller" ? "Teller" : "Drawer") }),
        el("span", { class: "text", text: m.text })));
    }
    chat.scrollTop = chat.scrollHeight;
    const canChat = can("chat");
    $("chatinput").disabled = !canChat;
    $("send").disabled = !canChat;
    const max = view.max_message_len || 140;
    $("chatinput").maxLength = max;
    updateCounter();
    const hint = $("chat-hint");
    hint.className = "chat-hint";
    if (view.over || status === "aborted") { hint.textContent = ""; }
    else if (TELLER) {
      if (view.peek && view.peek.open) { hint.textContent = "Chat is paused while the peek window is open."; hint.className += " wait"; }
      else if (canChat) hint.textContent = `One message of up to ${max} characters, then the Drawer replies.`;
      else { hint.textContent = "Waiting for the Drawer's reply…"; hint.className += " wait"; }
    } else if (canChat) hint.textContent = "Send your reply to end your turn.";
    else { hint.textContent = "You can reply after the Teller's next message."; hint.className += " wait"; }
  }

  function updateCounter() {
    const max = view ? view.max_message_len : 140, n = $("chatinput").value.trim().length, c = $("counter");
    c.textContent = `${n}/${max}`;
    c.className = "counter" + (n >= max ? " full" : n >= max - 20 ? " near" : "");
  }

  const deadline = (t) => t.deadline || (t.started_at ? t.started_at + (t.limit_s || 1200) * 1000 : null);
  /* the timer: the server's deadline against the server's clock (serverClock above). What is shown
   * stays within [0, limit]: the match started before the page could see it, so no estimate of the
   * server's clock may show more time than the whole game has. */
  function renderTimer() {
    const box = $("timer"), value = $("timer-value");
    if (!view) return;
    const t = view.time || {};
    const limitMs = (t.limit_s || 1200) * 1000;
    let left;
    if (view.over || status !== "active") left = null;
    else if (deadline(t)) left = Math.min(limitMs, Math.max(0, deadline(t) - serverClock.now()));
    else left = limitMs;
    box.hidden = left === null;
    if (left === null) return;
    const secs = Math.ceil(left / 1000), m = Math.floor(secs / 60), s = secs % 60;
    value.textContent = `${m}:${String(s).padStart(2, "0")}`;
    box.className = "timer" + (secs === 0 ? " out" : secs <= 120 ? " low" : "");
    box.dataset.deadline = deadline(t) || "";
  }

  let finalTarget = null, finalCanvas = null, abortedMsg = "";
  function renderFinished(msg) {
    const over = view && view.over;
    if (!over && status !== "aborted") { $("finished").hidden = true; return; }
    const box = $("finished");
    if (!box.hidden && box.dataset.done === (over ? "over" : "aborted")) return;
    box.dataset.done = over ? "over" : "aborted";
    box.hidden = false;
    if (TELLER) { $("peek-overlay").hidden = true; const d = $("confirm-end"); if (d.open) d.close(); }
    if (over) {
      const r = view.result;
      const reason = { teller: "The Teller ended the game.", time_up: "Time is up." }[view.ended_by] || "The game has ended.";
      $("final-reason").textContent = reason + ` You played ${r.rounds} round${r.rounds === 1 ? "" : "s"}.`;
      const score = $("final-score");
      score.textContent = Number(r.score).toFixed(2);
      score.dataset.score = String(r.score);
      $("final-score-line").hidden = false;
      $("final-compare").hidden = false;
      if (!finalTarget) {
        finalTarget = new SceneView($("final-target"), { scale: 0.8 });
        finalCanvas = new SceneView($("final-canvas"), { scale: 0.8 });
      }
      finalTarget.set(r.target);
      finalCanvas.set(r.canvas);
    } else {
      $("final-reason").textContent = abortedMsg || "The game ended early (your partner left or the researcher stopped it). You will be paid for your time.";
    }
  }

  let lastPhase = null;
  function render(v, msg) {
    if (lastPhase !== null && v.phase !== lastPhase) { toolsError(""); $("chaterror").textContent = ""; }
    lastPhase = v.phase;
    view = v;
    if (v.time && v.time.started_at) serverClock.atLeast(v.time.started_at);
    if (msg && msg.status) status = msg.status;
    renderTurn();
    renderChat();
    renderTimer();
    if (TELLER) renderTeller(); else renderDrawer();
    renderFinished(msg);
  }

  /* -------------------------------------------------------------------------- Teller */
  let target = null, peekTarget = null, peekCanvas = null;
  function renderTeller() {
    if (!target) target = new SceneView($("stage"), { listEl: $("stage-list") });
    target.set(view.target);
    const peek = view.peek || {};
    const peekBtn = $("peek");
    peekBtn.disabled = !can("peek");
    $("peek-label").textContent = peek.available ? "Peek at the Drawer's canvas (once)" : "Peek used";
    peekBtn.title = peek.available ? (can("peek") ? "See the Drawer's canvas once" : "You can peek on your turn") : "You have used your one peek";
    $("end").disabled = !can("end");
    $("end").title = can("end") ? "" : "You can end the game on your turn";
    const overlay = $("peek-overlay");
    if (peek.open && !view.over) {
      overlay.hidden = false;
      if (!peekTarget) {
        peekTarget = new SceneView($("peek-target"), { scale: 0.9 });
        peekCanvas = new SceneView($("peek-canvas"), { scale: 0.9 });
      }
      peekTarget.set(view.target);
      peekCanvas.set(peek.canvas || []);
      $("close-peek").disabled = !can("close_peek");
    } else overlay.hidden = true;
  }

  function setupTeller() {
    $("peek").addEventListener("click", () => { if (can("peek")) { toolsError(""); act({ type: "peek" }, "teller"); $("peek").disabled = true; } });
    $("close-peek").addEventListener("click", () => { $("peek-error").textContent = ""; act({ type: "close_peek" }, "teller"); $("close-peek").disabled = true; });
    const dialog = $("confirm-end");
    $("end").addEventListener("click", () => { if (can("end")) dialog.showModal(); });
    $("end-cancel").addEventListener("click", () => dialog.close());
    $("end-confirm").addEventListener("click", () => { dialog.close(); if (can("end")) act({ type: "end" }, "teller"); });
  }

  /* -------------------------------------------------------------------------- Drawer */
  let canvasView = null;
  function canEdit() { return can("place"); }

  function renderDrawer() {
    canvasView.setEditable(canEdit());
    canvasView.set(view.canvas);
    $("stage").classList.toggle("locked", !canEdit() && !view.over);
    renderPalette();
  }

  function renderPalette() {
    const pal = $("palette"), editable = canEdit();
    const items = view.palette.slice().sort((a, b) => (isHuman(b.idx) - isHuman(a.idx)) || 0);
    const existing = new Map([...pal.children].map((n) => [Number(n.dataset.idx), n]));
    const wanted = items.map((it) => it.idx).join(",");
    if (pal.dataset.items !== wanted) {
      pal.replaceChildren(...items.map((it) => {
        const b = existing.get(it.idx) || el("button", { type: "button", class: "pal-item", role: "listitem", "data-idx": it.idx,
          title: it.name, "aria-label": it.name }, imgTag(it.idx, isHuman(it.idx) ? 2 : 0), el("span", { text: it.name }));
        return b;
      }));
      pal.dataset.items = wanted;
    }
    for (const it of items) {
      const b = pal.querySelector(`[data-idx="${it.idx}"]`);
      b.classList.toggle("placed", it.on_canvas);
      b.disabled = !editable && !it.on_canvas;
      b.title = it.on_canvas ? `${it.name} (on the canvas: click to select it)` : (editable ? `Drag the ${it.name} onto the canvas` : it.name);
    }
    const hint = $("palette-hint");
    hint.textContent = editable ? "Drag a picture onto your canvas." : view.over ? "The game is over." : "Wait for the Teller's message.";
    hint.classList.toggle("locked", !editable);
  }

  function selectedPiece() {
    if (!view || canvasView.selected === null) return null;
    return (view.canvas || []).find((p) => p.idx === canvasView.selected) || null;
  }

  function renderTools() {
    const p = selectedPiece(), editable = canEdit();
    $("tools-empty").hidden = !!p;
    $("tools-piece").hidden = !p;
    if (!p) return;
    $("sel-name").textContent = p.name;
    $("sel-name").title = describe(p);
    for (const b of document.querySelectorAll(".seg-btn")) {
      b.setAttribute("aria-pressed", String(Number(b.dataset.depth) === p.depth));
      b.disabled = !editable;
    }
    $("flip").disabled = !editable;
    $("remove").disabled = !editable;
    const human = isHuman(p.idx);
    for (const row of document.querySelectorAll(".human-only")) row.hidden = !human;
    if (!human) return;
    const poses = $("poses"), faces = $("faces");
    const key = `${p.idx}:${p.subtype}`;
    if (poses.dataset.key !== key) {
      poses.dataset.key = key;
      poses.replaceChildren(...ART.poses.map((name, pose) => {
        const sub = pose * 5 + exprOf(p.subtype);
        return el("button", { type: "button", class: "thumb fit", "data-pose": pose, title: name, "aria-label": "pose: " + name,
          "aria-pressed": String(pose === poseOf(p.subtype)), onclick: () => changePiece({ pose }) }, imgTag(p.idx, sub));
      }));
      faces.replaceChildren(...ART.expressions.map((name, expr) => {
        const sub = poseOf(p.subtype) * 5 + expr;
        return el("button", { type: "button", class: "thumb" + (ART.mode === "png" ? " fit" : ""), "data-expression": expr, title: name,
          "aria-label": "face: " + name, "aria-pressed": String(expr === exprOf(p.subtype)), onclick: () => changePiece({ expression: expr }) },
          faceImg(p.idx, sub));
      }));
    }
    for (const b of poses.children) b.disabled = !editable;
    for (const b of faces.children) b.disabled = !editable;
  }

  /* an expression thumbnail: the kid's head, zoomed (the full picture for PNG art) */
  function faceImg(idx, sub) {
    const img = imgTag(idx, sub);
    const face = ART.faces[`${idx}_${sub}`];
    if (ART.mode === "png" || !face) return img;
    const [ex, ey, w, h] = face, box = 40, k = (box * 0.9) / (2 * ART.head_radius);
    Object.assign(img.style, { width: `${w * k}px`, height: `${h * k}px`, left: `${box / 2 - ex * k}px`, top: `${box / 2 + 3 - ey * k}px` });
    return img;
  }

  function changePiece(fields) {
    const p = selectedPiece();
    if (!p || !canEdit()) return;
    toolsError("");
    act(Object.assign({ type: "update", idx: p.idx }, fields), "canvas");
  }

  function setupDrawer() {
    canvasView = new SceneView($("stage"), {
      interactive: true, listEl: $("stage-list"),
      onSelect: () => renderTools(),
      onMove: (idx, x, y) => {
        toolsError("");
        const id = act({ type: "update", idx, x, y }, "canvas");
        moves.set(id, idx);
      },
    });
    for (const b of document.querySelectorAll(".seg-btn")) {
      b.addEventListener("click", () => { const p = selectedPiece(); if (p && Number(b.dataset.depth) !== p.depth) changePiece({ depth: Number(b.dataset.depth) }); });
    }
    $("flip").addEventListener("click", () => { const p = selectedPiece(); if (p) changePiece({ flip: p.flip ? 0 : 1 }); });
    $("remove").addEventListener("click", removeSelected);
    document.addEventListener("keydown", (e) => {
      if (e.target.closest && e.target.closest("input, textarea")) return;
      if ((e.key === "Delete" || e.key === "Backspace") && selectedPiece()) { e.preventDefault(); removeSelected(); }
      else if (e.key === "Escape") canvasView.select(null);
    });
    setupPaletteDrag();
  }

  function removeSelected() {
    const p = selectedPiece();
    if (!p || !canEdit()) return;
    toolsError("");
    act({ type: "remove", idx: p.idx }, "canvas");
    canvasView.select(null);
  }

  const moves = new Map();      // client id of a drag's update -> idx
  let selectWhenPlaced = null;

  /* palette -> canvas: pointer-driven drag with a ghost of the piece at its "large" size */
  function setupPaletteDrag() {
    const pal = $("palette"), stageBox = $("stage");
    let drag = null;
    function overStage(e) {
      const r = stageBox.getBoundingClientRect();
      return e.clientX >= r.left && e.clientX <= r.right && e.clientY >= r.top && e.clientY <= r.bottom ? r : null;
    }
    function place(idx, x, y) {
      toolsError("");
      const action = { type: "place", idx, x: Math.round(x), y: Math.round(y), depth: 0, flip: 0 };
      if (isHuman(idx)) { action.pose = 0; action.expression = 2; }   // standing, smiling
      selectWhenPlaced = idx;
      act(action, "canvas");
    }
    pal.addEventListener("pointerdown", (e) => {
      const item = e.target.closest(".pal-item");
      if (!item || e.button !== 0 || !view) return;
      const idx = Number(item.dataset.idx), info = view.palette.find((p) => p.idx === idx);
      if (!info) return;
      e.preventDefault();
      if (info.on_canvas) { canvasView.select(idx); return; }
      if (!canEdit()) return;
      item.setPointerCapture(e.pointerId);
      drag = { idx, item, x0: e.clientX, y0: e.clientY, ghost: null, pointerId: e.pointerId };
    });
    pal.addEventListener("pointermove", (e) => {
      if (!drag || e.pointerId !== drag.pointerId) return;
      if (!drag.ghost && Math.hypot(e.clientX - drag.x0, e.clientY - drag.y0) < 5) return;
      if (!drag.ghost) {
        const ghost = imgTag(drag.idx, isHuman(drag.idx) ? 2 : 0, { class: "ghost" });
        drag.ghost = ghost;
        document.body.append(ghost);
        pieceImage(drag.idx, isHuman(drag.idx) ? 2 : 0).then((img) => {
          if (img && drag && drag.ghost === ghost) { ghost.style.width = `${img.naturalWidth}px`; ghost.style.height = `${img.naturalHeight}px`; moveGhost(); }
        });
      }
      drag.cx = e.clientX; drag.cy = e.clientY;
      moveGhost();
      stageBox.classList.toggle("drop-target", !!overStage(e));
    });
    function moveGhost() {
      if (!drag || !drag.ghost) return;
      const g = drag.ghost, w = g.offsetWidth || 60, h = g.offsetHeight || 60;
      g.style.left = `${drag.cx - w / 2}px`; g.style.top = `${drag.cy - h / 2}px`;
    }
    function finish(e, cancelled) {
      if (!drag || e.pointerId !== drag.pointerId) return;
      const d = drag;
      drag = null;
      stageBox.classList.remove("drop-target");
      if (d.ghost) {
        d.ghost.remove();
        const r = !cancelled && overStage(e);
        if (r && canEdit()) place(d.idx, (e.clientX - r.left) * (W / r.width), (e.clientY - r.top) * (H / r.height));
      } else if (!cancelled && canEdit()) {
        place(d.idx, W / 2, H * 0.62);   // a click: put it in the middle of the grass
      }
    }
    pal.addEventListener("pointerup", (e) => finish(e, false));
    pal.addEventListener("pointercancel", (e) => finish(e, true));
    pal.addEventListener("click", (e) => {   // keyboard (Enter/Space) on a palette item
      const item = e.target.closest(".pal-item");
      if (!item || e.detail !== 0 || !view) return;
      const idx = Number(item.dataset.idx), info = view.palette.find((p) => p.idx === idx);
      if (info && info.on_canvas) canvasView.select(idx);
      else if (info && canEdit()) place(idx, W / 2, H * 0.62);
    });
  }

  /* --------------------------------------------------------------------------- setup */
  $("chatinput").addEventListener("input", updateCounter);
  $("chatform").addEventListener("submit", (e) => {
    e.preventDefault();
    const text = $("chatinput").value.trim();
    if (!text || !view || !can("chat")) return;
    if (text.length > view.max_message_len) { $("chaterror").textContent = `At most ${view.max_message_len} characters.`; return; }
    $("chaterror").textContent = "";
    const id = act({ type: "chat", text }, "chat");
    sentChats.set(id, text);
    $("chatinput").value = "";
    updateCounter();
    $("send").disabled = true;
  });
  const sentChats = new Map();
  $("end-gone").addEventListener("click", () => GT.partnerGone(S.matchId, S.token).then((r) => {
    if (!r.ended) banner(r.message, "error");
  }));

  if (TELLER) setupTeller(); else setupDrawer();

  function onError(e) {
    const kind = e.id ? actionKinds.get(e.id) : null;
    if (e.id) actionKinds.delete(e.id);
    if (kind === "canvas") {
      if (moves.has(e.id)) { canvasView.dropOverride(moves.get(e.id)); moves.delete(e.id); }
      if (selectWhenPlaced !== null) selectWhenPlaced = null;
      toolsError(e.message);
      if (view) canvasView.set(view.canvas);   // snap back to the server's canvas
    } else if (kind === "chat") {
      $("chaterror").textContent = e.message;
      if (sentChats.has(e.id) && !$("chatinput").value) $("chatinput").value = sentChats.get(e.id);
      sentChats.delete(e.id);
      updateCounter();
      if (view) renderChat();
    } else if (kind === "teller") {
      if (view && view.peek && view.peek.open) $("peek-error").textContent = e.message; else toolsError(e.message);
      if (view) renderTeller();
    } else {
      banner(e.message, "error");
    }
  }

  function onAck(a) {
    actionKinds.delete(a.id);
    sentChats.delete(a.id);
    if (moves.has(a.id)) moves.set(a.id, { idx: moves.get(a.id), seq: a.seq });
    pruneMoves();
  }
  function pruneMoves() {   // a drag's override ends once a view at or after its ack is shown
    if (!canvasView || !client) return;
    for (const [id, m] of moves) {
      if (typeof m === "object" && client.lastSeq !== null && client.lastSeq >= m.seq) {
        moves.delete(id);
        if (![...moves.values()].some((o) => (typeof o === "object" ? o.idx : o) === m.idx)) {
          canvasView.dropOverride(m.idx);
          if (view) canvasView.set(view.canvas);
        }
      }
    }
  }

  client = new GT.SeatClient({
    wsPath: S.wsPath, token: S.token,
    onView: (v, msg) => {
      if (!v) return;
      render(v, msg);
      if (DRAWER) {
        pruneMoves();
        if (selectWhenPlaced !== null && (v.canvas || []).some((p) => p.idx === selectWhenPlaced)) {
          const idx = selectWhenPlaced; selectWhenPlaced = null;
          canvasView.selected = idx;
          canvasView.set(v.canvas);
        }
      }
    },
    onEvent: (ev) => {
      if (ev.type === "agent_timed_out") banner(ev.payload.message);
      else if (ev.type === "match_aborted") { status = "aborted"; const said = GT.abortedText(ev.payload, S.nextUrl); banner(said);
        if (ev.payload.reason === "partner_never_joined") abortedMsg = said; }   // the overlay says it too
      else if (ev.type === "peek_opened") peekOpenSeen = true;
      else if (ev.type === "peek_closed") peekOpenSeen = false;
      else if (ev.type === "game_ended") peekOpenSeen = false;
    },
    onError,
    onAck,
    onPresence: (p) => {
      clearTimeout(goneTimer);
      if (p.connected) { $("gone").hidden = true; if ($("banner").dataset.presence) banner(""); return; }
      banner("Your partner's connection dropped; waiting for them to come back…");
      $("banner").dataset.presence = "1";
      goneTimer = setTimeout(() => { if (view && !view.over && status === "active") $("gone").hidden = false; }, S.partnerGoneS * 1000);
    },
    onStatus: (s) => {
      const c = $("conn"); c.textContent = s; c.className = "status-pill" + (s === "connected" ? "" : " bad");
    },
  });
  setInterval(renderTimer, 500);

  /* for tests and debugging: the seat client and what the canvas shows */
  window.gtClient = client;
  window.gtCodraw = {
    act: (action) => act(action, action.type === "chat" ? "chat" : ["place", "update", "remove"].includes(action.type) ? "canvas" : "teller"),
    view: () => view,
    shown: () => {
      const sv = TELLER ? target : canvasView;
      if (!sv) return [];
      return [...sv.nodes.values()].map((n) => ({ idx: n.getAttr("pieceIdx"), x: Math.round(n.x()), y: Math.round(n.y()),
        scaleX: n.scaleX(), scaleY: n.scaleY(), width: n.width(), height: n.height(), src: n.image() && n.image().src }));
    },
    selected: () => (canvasView ? canvasView.selected : null),
    settled: () => sceneViews.every((sv) => sv.settled),   // every canvas shows the latest view given to it
  };
})();
