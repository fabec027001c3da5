/* The researcher's monitor pages (templates/research/*.html; docs/monitor.md): number formatting,
 * Chart.js plots with 95 % interval whiskers, the batch monitor's poll, the match replay and the
 * comparison's plots. Chart.js is served from /static/vendor/ (scripts/vendor.sh). */
(function () {
  "use strict";
  const COLORS = ["#2f6fed", "#d64545", "#1f9d55", "#b7791f", "#7b4fd6", "#0f8b8d", "#c2417a", "#5f6b7a"];
  const GAME_CHARTS = {};

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "text") node.textContent = v;
      else if (k === "class") node.className = v;
      // through the CSSOM: a style attribute is refused by the Content-Security-Policy (style-src 'self')
      else if (k === "style") node.style.cssText = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children.flat()) if (c !== null && c !== undefined) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    return node;
  }
  const fmt = (x, d = 2) => (x === null || x === undefined || Number.isNaN(x)) ? "–" : Number(x).toFixed(d);
  const pct = (x, d = 1) => (x === null || x === undefined) ? "–" : (100 * x).toFixed(d) + " %";
  const ci = (c, f = fmt) => (!c || c[0] === null || c[0] === undefined) ? "" : `[${f(c[0])}, ${f(c[1])}]`;
  const ciPct = (c) => ci(c, (x) => (100 * x).toFixed(1));   // "[30.1, 95.4]" after "75.0 %"
  const color = (i) => COLORS[i % COLORS.length];
  // the formats of research/agent_calls.py: "840 ms" / "1.25 s"; "$12.34" / "$0.0153" / "$0.000012"
  const ms = (x) => (x === null || x === undefined) ? "–" : x < 1000 ? `${Math.round(x)} ms` : `${(x / 1000).toFixed(2)} s`;
  const money = (x) => (x === null || x === undefined) ? "–" : x === 0 ? "$0" : x >= 10 ? "$" + x.toFixed(2)
    : x >= 0.0001 ? "$" + Number(x.toPrecision(3)) : "$" + x.toFixed(6).replace(/0+$/, "");

  /* Whiskers for the 95 % intervals: a dataset's `ci` holds [low, high] per point. */
  const errorBars = {
    id: "gtErrorBars",
    afterDatasetsDraw(chart) {
      const ctx = chart.ctx, y = chart.scales.y;
      chart.data.datasets.forEach((ds, di) => {
        const meta = chart.getDatasetMeta(di);
        if (!ds.ci || meta.hidden) return;
        ctx.save(); ctx.strokeStyle = "#1d2433"; ctx.lineWidth = 1.3;
        meta.data.forEach((pt, i) => {
          const c = ds.ci[i];
          if (!c || c[0] === null || c[1] === null || c[0] === undefined) return;
          const lo = y.getPixelForValue(c[0]), hi = y.getPixelForValue(c[1]), x = pt.x;
          ctx.beginPath(); ctx.moveTo(x, lo); ctx.lineTo(x, hi);
          ctx.moveTo(x - 5, lo); ctx.lineTo(x + 5, lo); ctx.moveTo(x - 5, hi); ctx.lineTo(x + 5, hi); ctx.stroke();
        });
        ctx.restore();
      });
    },
  };

  /* One chart per canvas id, created once and then updated in place (no flicker while polling). */
  function ciMax(data) {   // the y axis reaches the highest whisker, not only the highest bar
    let top = null;
    for (const ds of data.datasets) for (const c of ds.ci || []) if (c && c[1] !== null && c[1] !== undefined) top = Math.max(top ?? c[1], c[1]);
    return top;
  }
  function chart(canvasId, config) {
    const canvas = document.getElementById(canvasId);
    if (!canvas) return null;
    const existing = Chart.getChart(canvas);
    const top = ciMax(config.data);
    if (existing) {
      existing.data = config.data;
      existing.options.plugins.title.text = config.options.plugins.title.text;
      if (top !== null && existing.options.scales.y.max === undefined) existing.options.scales.y.suggestedMax = top;
      existing.update("none");
      return existing;
    }
    if (top !== null && config.options.scales.y.max === undefined) config.options.scales.y.suggestedMax = top;
    config.options = Object.assign({ animation: false, responsive: true, maintainAspectRatio: false }, config.options);
    config.plugins = [errorBars];
    return new Chart(canvas, config);
  }
  function opts(title, yTitle, extra) {
    return Object.assign({
      plugins: { title: { display: true, text: title }, legend: { position: "bottom" } },
      scales: { y: { title: { display: true, text: yTitle }, beginAtZero: true } },
    }, extra || {});
  }

  /* ------------------------------------------------------------------ the score table: each game's columns
   * (GAME_CHARTS[game id], set by the game's monitor script: games/<game>/static/games/<game>/monitor.js) */

  function scoreTable(game, groups) {
    const spec = GAME_CHARTS[game];
    return el("table", { class: "data scores" },
      el("thead", {}, el("tr", {}, spec.head.map((h) => el("th", { text: h })))),
      el("tbody", {}, groups.map((g, i) => {
        // the swatch is the group's color in the plots; the "all groups" row is not plotted
        const k = i - (groups[0].all ? 1 : 0), swatch = g.all ? "#c3c9d4" : color(k);
        return el("tr", { "data-group": g.label }, spec.row(g).map((c, j) => el("td", j === 0 ? { class: "group" } : {},
          j === 0 ? [el("span", { class: "swatch", style: `background:${swatch}` }), String(c)] : String(c))));
      })));
  }

  /* ------------------------------------------------------------------ the batch monitor */
  function batchMonitor(root) {
    const game = root.dataset.game, url = root.dataset.url;
    // delta: the planner's difference to detect (research/arm_monitor.py), sent as ?delta=
    const state = { polls: 0, last: null, error: null, delta: "", armsDrawn: null, timer: null };
    window.gtMonitor = state;
    const spec = GAME_CHARTS[game];
    const charts = document.getElementById("charts");
    if (spec && charts && !charts.childElementCount) {
      for (const name of spec.charts) charts.append(el("div", { class: "chart" }, el("canvas", { id: "chart-" + name })));
    }
    function counts(d) {
      const m = d.matches, p = d.participants;
      document.getElementById("match-counts").replaceChildren(
        ...["active", "finished", "timed_out", "aborted"].map((k) => el("span", { class: "count", "data-status": k }, el("b", { text: m[k] || 0 }), " " + k.replace("_", " "))));
      const order = ["consent", "instructions", "waiting", "playing", "done", "declined"];
      document.getElementById("participant-counts").replaceChildren(
        ...order.map((k) => el("span", { class: "count", "data-state": k }, el("b", { text: p[k] || 0 }), " " + k)));
    }
    function scores(d) {
      const s = d.scores, out = document.getElementById("scores");
      if (!spec) { out.replaceChildren(el("p", { class: "muted", text: `No score view for ${game}.` })); return; }
      const groups = s.groups.length > 1 ? [{ label: "all groups", scores: s.all, all: true }, ...s.groups] : s.groups;
      out.replaceChildren(
        el("p", { class: "muted", id: "scores-note", text: `${s.ended} ended match${s.ended === 1 ? "" : "es"} (finished or timed out) count; active and aborted ones do not.` }),
        s.ended ? scoreTable(game, groups) : el("p", { text: "No ended matches yet: the scores appear when the first match ends." }));
      charts.hidden = !s.ended;
      if (s.ended) spec.draw("chart-", s.groups.length > 1 ? s.groups : groups);
    }
    function recent(d) {
      document.querySelector("#matches tbody").replaceChildren(...d.recent.map((m) => el("tr", { "data-match": m.id },
        el("td", {}, el("a", { href: `/research/matches/${m.id}/`, text: m.id.slice(0, 8) })),
        el("td", {}, el("span", { class: "status-pill st-" + m.status, text: m.status.replace("_", " ") })),
        el("td", { text: m.seats }), el("td", { text: m.summary }), el("td", { text: m.seq }),
        el("td", { text: new Date(m.updated_at).toLocaleTimeString() }))));
    }
    function llmCalls(d) {   // research/agent_calls.py batch_call_stats
      const c = d.llm_calls, card = document.getElementById("llm-card");
      if (!card || !c) return;
      card.hidden = !c.agents.length;
      const n = (x) => (x === null || x === undefined) ? "–" : Number(x).toLocaleString("en-US");
      const row = (a, name) => el("tr", { "data-agent": name },
        el("td", { text: name }), ...[a.turns, a.calls, a.repairs, a.fallbacks, a.errors, a.prompt_tokens,
          a.completion_tokens].map((x) => el("td", { class: "num", text: n(x) })),
        el("td", { class: "num", text: money(a.cost_usd) }),
        el("td", { class: "num", text: a.ttft_ms ? `${ms(a.ttft_ms.mean)} / ${ms(a.ttft_ms.p95)}` : "" }),
        el("td", { class: "num", text: a.total_ms ? `${ms(a.total_ms.mean)} / ${ms(a.total_ms.p95)}` : "" }));
      const rows = c.agents.map((a) => row(a, a.agent));
      if (c.agents.length > 1) rows.push(row(c.totals, "all agents"));
      document.querySelector("#llm-stats tbody").replaceChildren(...rows);
    }
    function cannotRun(d) {   // live.batches.batch_problems: e.g. an agent whose worker is not running
      const box = document.getElementById("cannot-run");
      if (!box || !d.cannot_run) return;
      box.hidden = !d.cannot_run.length;
      box.replaceChildren(el("b", { text: "Cannot run: " }), d.cannot_run.join(" "));
    }
    function setDelta(value) { state.delta = String(value).trim(); clearTimeout(state.timer); poll(); }
    function experiment(d) {   // research/arm_monitor.py: drawn again only when the statistics changed
      if (!window.GTArms || !d.arms) return;
      const key = JSON.stringify(d.arms);
      if (key !== state.armsDrawn) { window.GTArms.render(d.arms, setDelta); state.armsDrawn = key; }
      const st = document.getElementById("plan-status");
      if (state.planError && st) { st.replaceChildren(el("b", { class: "bad", text: state.planError })); state.planError = null; }
      window.GTArms.costs(d.costs);
    }
    async function poll() {
      try {
        const r = await fetch(state.delta ? `${url}&delta=${encodeURIComponent(state.delta)}` : url, { cache: "no-store", credentials: "same-origin" });
        if (r.status === 400 && state.delta) {   // a difference the server refuses: the planner says why, default again
          const bad = await r.json().catch(() => ({}));
          state.delta = ""; state.planError = bad.error || "That difference cannot be used."; state.armsDrawn = null;
          return poll();
        }
        if (!r.ok) throw new Error(`the server answered ${r.status}`);
        const d = await r.json();
        counts(d); scores(d); llmCalls(d); recent(d); cannotRun(d); experiment(d);
        state.last = d; state.error = null;
        document.getElementById("live").textContent = "updated " + new Date().toLocaleTimeString();
        document.getElementById("live").classList.remove("bad");
      } catch (e) {
        state.error = String(e);
        document.getElementById("live").textContent = "not updating: " + e.message;
        document.getElementById("live").classList.add("bad");
      }
      state.polls += 1;
      clearTimeout(state.timer);
      state.timer = setTimeout(poll, 2000);
    }
    poll();
  }

  /* ------------------------------------------------------------------ the match replay */
  function hsl(c) { return `hsl(${c[0]}, ${c[1]}%, ${c[2]}%)`; }
  function chatLines(lines) {
    return el("div", { class: "dialog" }, lines.map((m) => el("p", { class: "line" }, el("b", { text: m.who + ": " }), m.text)));
  }

  function matchReplay(data) {
    const slider = document.getElementById("replay-slider"), steps = data.steps;
    const info = document.getElementById("replay-step"), boardEl = document.getElementById("replay-board");
    const eventEl = document.getElementById("replay-event");
    const rows = new Map([...document.querySelectorAll("#log tr[data-seq]")].map((r) => [Number(r.dataset.seq), r]));
    // a game's board view comes from its monitor script (GameSpec.monitor_script)
    const render = (GAME_CHARTS[data.game_id] || {}).board || ((b) => [el("pre", { text: JSON.stringify(b, null, 1) })]);
    const replay = { index: steps.length - 1, shown: null };
    window.gtReplay = replay;
    function show(i) {
      i = Math.max(0, Math.min(steps.length - 1, i));
      replay.index = i;
      const step = steps[i], board = data.boards[step.board];
      slider.value = String(i);
      info.textContent = `Step ${i + 1} of ${steps.length} · event ${step.seq} · ${step.actor}`;
      eventEl.replaceChildren(el("b", { text: step.type.replaceAll("_", " ") + ": " }), step.summary);
      boardEl.replaceChildren(...(board.unavailable ? [el("p", { class: "bad", text: "No replay: " + board.unavailable })] : render(board)));
      if (data.images && data.images.pool && !board.unavailable) markPool(data, board);
      for (const r of rows.values()) r.classList.remove("current");
      const row = rows.get(step.seq);
      if (row) row.classList.add("current");
      document.getElementById("replay-prev").disabled = i === 0;
      document.getElementById("replay-next").disabled = i === steps.length - 1;
      replay.shown = step.seq;
    }
    slider.max = String(steps.length - 1);
    slider.addEventListener("input", () => show(Number(slider.value)));
    document.getElementById("replay-prev").addEventListener("click", () => show(replay.index - 1));
    document.getElementById("replay-next").addEventListener("click", () => show(replay.index + 1));
    document.getElementById("replay-first").addEventListener("click", () => show(0));
    document.getElementById("replay-last").addEventListener("click", () => show(steps.length - 1));
    document.addEventListener("keydown", (ev) => {
      if (ev.target.closest("input, textarea, select")) return;
      if (ev.key === "ArrowLeft") show(replay.index - 1);
      if (ev.key === "ArrowRight") show(replay.index + 1);
    });
    for (const [seq, row] of rows) row.querySelector(".goto").addEventListener("click", () => {
      show(steps.findIndex((s) => s.seq === seq));
      document.getElementById("replay").scrollIntoView({ block: "nearest" });
    });
    show(steps.length - 1);
  }
  function markPool(data, board) {
    const guesses = new Map();
    for (const d of board.dialog) if (d.guess) guesses.set(d.guess, (guesses.get(d.guess) || []).concat("r" + d.round));
    for (const fig of document.querySelectorAll("#pool figure")) {
      const id = fig.dataset.image, marks = fig.querySelector(".marks");
      const g = guesses.get(id) || [], click = board.final_clicks.indexOf(id);
      fig.classList.toggle("guessed", g.length > 0);
      fig.classList.toggle("clicked", click >= 0);
      marks.textContent = [g.length ? "guess " + g.join(", ") : "", click >= 0 ? `click ${click + 1}` : ""].filter(Boolean).join(" · ");
    }
  }

  // GAME_CHARTS[game id]: a game's score table (head, row), charts (charts, draw) and replay board
  // (board), added by its monitor script (GameSpec.monitor_script) before the page's script runs
  window.GTMonitor = { el, fmt, ms, money, pct, ci, ciPct, color, chart, opts, chatLines, hsl, GAME_CHARTS, scoreTable,
                       batchMonitor, matchReplay };
})();
