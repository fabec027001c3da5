/* An experiment's arms on the research pages (issue 24; docs/monitor.md "Arms on the monitor"):
 * each arm's metrics with 95 % intervals and a chart of the primary one, every pairwise
 * difference with its test and raw and Holm p, the within-subject pairs, the sample-size
 * planner, and the cost per arm. Draws what research/arm_monitor.py returns (research/arms.py's
 * statistics, crowd/costs.py's money); loaded after static/gt/monitor.js. */
(function () {
  "use strict";
  const { el, fmt, pct, color, chart, opts, money } = window.GTMonitor;
  // dollars: cents shown from a dollar up ("$7.60"), small amounts as the LLM table shows them ("$0.032")
  const usd = (x) => (x === null || x === undefined) ? "–" : Math.abs(x) >= 1 ? "$" + x.toFixed(2) : money(x);
  const p4 = (p) => (p === null || p === undefined) ? "–" : p < 0.0001 ? "< 0.0001" : Number(p).toFixed(4);

  // a metric's numbers in its own units: a proportion as a percentage, else two decimals
  function valueOf(metric, x) { return metric.kind === "proportion" ? pct(x) : fmt(x); }
  function ciOf(metric, c) {
    if (!c || c[0] === null || c[0] === undefined) return "";
    return metric.kind === "proportion" ? `[${(100 * c[0]).toFixed(1)}, ${(100 * c[1]).toFixed(1)}]` : `[${fmt(c[0])}, ${fmt(c[1])}]`;
  }
  function diffOf(metric, x) {
    if (x === null || x === undefined) return "–";
    const s = x > 0 ? "+" : "";
    return metric.kind === "proportion" ? `${s}${(100 * x).toFixed(1)} points` : s + fmt(x);
  }

  function armTable(s) {
    const ms = s.metrics;
    return el("table", { class: "data arms-table", id: "arms-table" },
      el("thead", {}, el("tr", {}, el("th", { text: "Arm" }), el("th", { text: "Ended matches" }),
        ms.map((m, i) => el("th", { text: (i === 0 ? "★ " : "") + m.metric.label + " (95 % CI)" + (m.metric.higher_is_better ? "" : " · lower is better") })))),
      el("tbody", {}, s.arms.map((arm, k) => el("tr", { "data-arm": arm },
        el("td", { class: "group" }, el("span", { class: "swatch", style: `background:${color(k)}` }), arm),
        el("td", { class: "num", text: (ms[0] ? ms[0].arms[k].matches : "–") }),
        ms.map((m) => {
          const r = m.arms[k];
          return el("td", { class: "num", "data-metric": m.metric.key },
            el("b", { text: valueOf(m.metric, r.value) }), " ", el("span", { class: "muted", text: ciOf(m.metric, r.ci95) }),
            el("span", { class: "muted n", text: ` n=${r.n}` }));
        })))));
  }

  function drawChart(canvasId, s) {
    const m = s.metrics[0];
    if (!m) return;
    const scale = m.metric.kind === "proportion" ? 100 : 1;
    const v = (x) => (x === null || x === undefined) ? null : x * scale;
    chart(canvasId, { type: "bar", data: {
      labels: m.arms.map((r) => r.arm),
      datasets: [{ label: m.metric.label, backgroundColor: m.arms.map((_, i) => color(i) + "bb"),
                   data: m.arms.map((r) => v(r.value)),
                   ci: m.arms.map((r) => r.ci95[0] === null ? null : [v(r.ci95[0]), v(r.ci95[1])]) }] },
      options: opts(`${m.metric.label} per arm (95 % CI)`, m.metric.kind === "proportion" ? "%" : (m.metric.unit || m.metric.label),
                    Object.assign({}, { plugins: { title: { display: true, text: `${m.metric.label} per arm (95 % CI)` }, legend: { display: false } } },
                                  m.metric.kind === "proportion" ? { scales: { y: { min: 0, max: 100, title: { display: true, text: "%" } } } } : {})) });
  }

  function pairTable(s) {
    const rows = [];
    for (const m of s.metrics) for (const r of m.pairwise.pairs) {
      rows.push(el("tr", { "data-pair": `${r.a}|${r.b}`, "data-metric": m.metric.key },
        el("td", { text: m.metric.label }), el("td", { text: `${r.a} − ${r.b}` }),
        el("td", { class: "num", text: `${r.n_a} / ${r.n_b}` }),
        el("td", { class: "num" }, el("b", { text: diffOf(m.metric, r.difference) }), " ",
          el("span", { class: "muted", text: r.difference === null ? (r.reason || "") : ciOf(m.metric, r.ci95) })),
        el("td", { text: r.test }),
        el("td", { class: "num", text: r.statistic === null ? "–" : `${r.statistic_name} = ${fmt(r.statistic)}` }),
        el("td", { class: "num p-raw", text: p4(r.p_value) }),
        el("td", { class: "num p-holm" + (r.p_holm !== null && r.p_holm < 0.05 ? " good" : ""), text: p4(r.p_holm) }),
        el("td", { text: r.better || "–" })));
    }
    if (!rows.length) return el("p", { class: "muted", text: "One arm: nothing to compare." });
    return el("table", { class: "data pairs-table", id: "pairs-table" },
      el("thead", {}, el("tr", {}, ["Metric", "Arms (a − b)", "n a / b", "Difference (95 % CI)", "Test", "Statistic", "p", "Holm p", "Favours (Holm p < 0.05)"].map((h) => el("th", { text: h })))),
      el("tbody", {}, rows));
  }

  function pairedTable(s) {
    const rows = [];
    for (const m of s.metrics) for (const r of m.paired.pairs) {
      if (!r.pairs) continue;
      rows.push(el("tr", { "data-pair": `${r.a}|${r.b}`, "data-metric": m.metric.key },
        el("td", { text: m.metric.label }), el("td", { text: `${r.a} − ${r.b}` }), el("td", { class: "num", text: r.pairs }),
        el("td", { class: "num" }, el("b", { text: diffOf(m.metric, r.mean_difference) }), " ",
          el("span", { class: "muted", text: r.reason ? r.reason : ciOf(m.metric, r.ci95) })),
        el("td", { class: "num", text: `${p4(r.t_p_value)} / ${p4(r.t_p_holm)}` }),
        el("td", { class: "num", text: `${p4(r.wilcoxon_p_value)} / ${p4(r.wilcoxon_p_holm)}` })));
    }
    if (!rows.length) return null;
    return el("table", { class: "data paired-table", id: "paired-table" },
      el("thead", {}, el("tr", {}, ["Metric", "Arms (a − b)", "People", "Mean difference (95 % CI)", "Paired t: p / Holm p", "Wilcoxon: p / Holm p"].map((h) => el("th", { text: h })))),
      el("tbody", {}, rows));
  }

  function planner(s, onDelta) {
    const m = s.metrics[0];
    if (!m) return null;
    const pl = m.plan, kind = m.metric.kind;
    const input = el("input", { type: "number", id: "plan-delta", step: "any", min: "0", value: String(pl.delta),
                                "aria-label": "difference to detect" });
    input.addEventListener("change", () => onDelta(input.value));
    const unit = kind === "proportion" ? "(a proportion: 0.05 is five points)" : (m.metric.unit || "");
    const head = el("p", { class: "planner-form" }, el("label", { for: "plan-delta", text: `Difference to detect in ${m.metric.label}: ` }),
      input, " ", el("span", { class: "muted", text: unit }), " ",
      el("button", { type: "button", id: "plan-default", onclick: () => onDelta("") }, `default (${m.metric.delta})`));
    const status = pl.status === "ok"
      ? el("p", { id: "plan-status" }, el("b", { text: `${pl.per_arm} matches per arm` }),
          ` to find a difference of ${pl.delta} with ${Math.round(100 * pl.power)} % power (two-sided, alpha ${pl.alpha}); ${pl.method}.`)
      : el("p", { id: "plan-status", class: "muted" }, el("b", { text: pl.status }), pl.reason ? `: ${pl.reason}` : "");
    const table = el("table", { class: "data plan-table", id: "plan-table" },
      el("thead", {}, el("tr", {}, ["Arm", "Matches with a value", "More needed"].map((h) => el("th", { text: h })))),
      el("tbody", {}, pl.arms.map((a) => el("tr", { "data-arm": a.arm }, el("td", { text: a.arm }), el("td", { class: "num", text: a.have }),
        el("td", { class: "num", text: a.more === null ? "–" : a.more })))));
    return [head, status, table];
  }

  const ci01 = (c) => (!c || c[0] === null || c[0] === undefined) ? "" : `[${(100 * c[0]).toFixed(1)}, ${(100 * c[1]).toFixed(1)}]`;

  /* Pairwise preferences (ACUTE-Eval style), per question: each pair's answers and win rate, each
   * arm's win rate, the Bradley-Terry ranking with bootstrap intervals. */
  function preferenceTables(p) {
    if (!p) return [];
    const out = [el("h3", { text: "Pairwise preferences" }),
      el("p", { class: "muted", text: "People who played two arms chose the partner they preferred (partners named only by the order met). Win rate over the answers with a preference, Wilson 95 % CI, binomial test against 50 %, Holm over the pairs; Bradley-Terry ranking with 95 % bootstrap intervals over people." })];
    for (const [key, q] of Object.entries(p.questions)) {
      out.push(el("h4", { text: `${q.text || key} (${q.answers} answer${q.answers === 1 ? "" : "s"}, ${q.people} ${q.people === 1 ? "person" : "people"})` }));
      out.push(el("table", { class: "data prefs-table", "data-question": key },
        el("thead", {}, el("tr", {}, ["Arms (a vs b)", "Answers", "a wins", "b wins", "No preference", "Win rate of a (95 % CI)", "p", "Holm p"].map((h) => el("th", { text: h })))),
        el("tbody", {}, q.pairs.map((r) => el("tr", { "data-pair": `${r.a}|${r.b}` },
          el("td", { text: `${r.a} vs ${r.b}` }), el("td", { class: "num", text: r.answers }),
          el("td", { class: "num", text: r.wins_a }), el("td", { class: "num", text: r.wins_b }), el("td", { class: "num", text: r.no_preference }),
          el("td", { class: "num" }, el("b", { text: pct(r.win_rate) }), " ", el("span", { class: "muted", text: ci01(r.ci95) })),
          el("td", { class: "num", text: p4(r.p_value) }),
          el("td", { class: "num" + (r.p_holm !== null && r.p_holm < 0.05 ? " good" : ""), text: p4(r.p_holm) }))))));
      const wins = new Map(q.arms.map((a) => [a.arm, a]));
      if (q.ranking) {
        out.push(el("p", { class: "muted", text: "Bradley-Terry ranking (P(a preferred to b) = s_a / (s_a + s_b)):" }));
        out.push(el("table", { class: "data bt-table", "data-question": key },
          el("thead", {}, el("tr", {}, ["Rank (95 % CI)", "Arm", "Win rate (95 % CI)", "Bradley-Terry log strength (95 % CI)", "P(preferred to an average arm)"].map((h) => el("th", { text: h })))),
          el("tbody", {}, q.ranking.map((r) => {
            const w = wins.get(r.arm) || {};
            return el("tr", { "data-arm": r.arm },
              el("td", { class: "num", text: `${r.rank} [${r.rank_ci95[0] ?? "–"}, ${r.rank_ci95[1] ?? "–"}]` }), el("td", { text: r.arm }),
              el("td", { class: "num" }, el("b", { text: pct(w.win_rate) }), " ", el("span", { class: "muted", text: ci01(w.ci95) })),
              el("td", { class: "num" }, el("b", { text: fmt(r.log_strength) }), " ", el("span", { class: "muted", text: r.ci95[0] === null ? "" : `[${fmt(r.ci95[0])}, ${fmt(r.ci95[1])}]` })),
              el("td", { class: "num", text: pct(r.p_beats_average) }));
          }))));
        if (q.bootstrap) out.push(el("p", { class: "muted", text: `${q.bootstrap.resamples} of ${q.bootstrap.of} bootstrap resamples of people (seed ${q.bootstrap.seed}) had every arm meet.` }));
      } else {
        out.push(el("p", { class: "muted bt-none", text: `No Bradley-Terry ranking: ${q.reason || "not enough answers"}.` }));
      }
    }
    return out;
  }

  /* "Was your partner a person or an AI?": per arm the rate of being taken for a person. */
  function takenTable(t) {
    if (!t) return [];
    const rows = t.arms.map((r) => el("tr", { "data-arm": r.arm },
      el("td", { text: r.arm }), el("td", { class: "num", text: r.answers }), el("td", { class: "num", text: r.said_person }),
      el("td", { class: "num" }, el("b", { text: pct(r.rate) }), " ", el("span", { class: "muted", text: ci01(r.ci95) })),
      el("td", { class: "num", text: r.mean_confidence === null ? "–" : `${fmt(r.mean_confidence)} / 5` })));
    const pairs = (t.pairwise && t.pairwise.pairs) || [];
    const out = [el("h3", { text: "Taken for a person" }),
      el("p", { class: "muted", text: "“Was your partner a person or an AI?” after each match: the rate of answering “a person” per arm (Wilson 95 % CI) and the answers' mean confidence (1 a guess, 5 certain)." }),
      el("table", { class: "data taken-table", id: "taken-table" },
        el("thead", {}, el("tr", {}, ["Arm", "Answers", "Said a person", "Rate (95 % CI)", "Mean confidence"].map((h) => el("th", { text: h })))),
        el("tbody", {}, rows))];
    if (pairs.length) out.push(el("p", { class: "muted", id: "taken-pairs", text: pairs.map((r) => `${r.a} vs ${r.b}: Fisher p ${p4(r.p_value)}, Holm p ${p4(r.p_holm)}`).join("; ") }));
    return out;
  }

  /* The arms card: root holds #arms-body and a canvas #chart-arms. */
  function render(s, onDelta) {
    const body = document.getElementById("arms-body");
    if (!body) return;
    if (!s.metrics.length) {
      body.replaceChildren(el("p", { class: "muted", text: `This game declares no metrics to compare arms on (${s.matches} ended matches).` }));
      return;
    }
    const how = s.has_arms ? (s.assignment === "within" ? "within subjects (each person meets every arm)" : "between subjects (each seating draws an arm)")
                           : "no arms: one arm, all of the batch's matches";
    const parts = [el("p", { class: "muted", id: "arms-note", text: `${s.matches} ended match${s.matches === 1 ? "" : "es"} in ${s.arms.length} arm${s.arms.length === 1 ? "" : "s"}, ${how}. ★ the primary metric.` }),
      armTable(s), el("h3", { text: "Every pair of arms" }),
      el("p", { class: "muted", text: "Two-sided tests; the Holm-corrected p accounts for comparing every pair (per metric)." }),
      pairTable(s)];
    const paired = pairedTable(s);
    if (paired) parts.push(el("h3", { text: "Within subjects, paired by person" }),
      el("p", { class: "muted", text: "People who played both arms: each person's value per arm, the mean of their differences." }), paired);
    parts.push(el("h3", { text: "Sample-size planner (80 % power)" }), ...(planner(s, onDelta) || []));
    parts.push(...preferenceTables(s.preferences), ...takenTable(s.taken_for_person));
    body.replaceChildren(...parts);
    const chartBox = document.getElementById("arms-chart");
    if (chartBox) { chartBox.hidden = !s.matches; if (s.matches) drawChart("chart-arms", s); }
  }

  function costs(c) {
    const body = document.getElementById("costs-body");
    if (!body || !c) return;
    const num = (x, d = 1) => (x === null || x === undefined) ? "–" : Number(x).toFixed(d).replace(/\.0$/, "");
    const row = (r, total) => el("tr", { "data-arm": r.arm || "all", class: total ? "total" : null },
      el("td", { text: total ? "all" : r.arm }), el("td", { class: "num", text: num(r.people) }),
      ...[r.base, r.bonus, r.fee, r.crowd, r.model, r.total].map((x) => el("td", { class: "num", text: usd(x) })),
      el("td", { class: "num", text: r.completed }), el("td", { class: "num per-match", text: usd(r.per_completed) }));
    const fees = Object.entries(c.fees).map(([p, f]) => `${p} ${num(f, 2)} %`).join(", ");
    const parts = [el("table", { class: "data costs-table", id: "costs-table" },
      el("thead", {}, el("tr", {}, ["Arm", "People", "Base pay", "Bonuses", "Platform fees", "Crowd pay", "Model calls", "Total", "Completed matches", "Per completed match"].map((h) => el("th", { text: h })))),
      el("tbody", {}, c.arms.map((r) => row(r, false)), row(c.totals, true))),
      el("p", { class: "muted", text: `Crowd pay: MTurk and Prolific participants (base pay as their outcome earns it, the batch's pay while in progress; bonuses sent or being sent; platform fees: ${fees}); a person seated in several arms is split over them. Model calls: the LLM calls' cost.` })];
    const b = c.budget;
    if (b) parts.unshift(el("p", { id: "budget", class: b.full ? "banner error" : "" },
      el("b", { text: `Budget ${usd(b.budget)}: ` }), `${usd(b.committed)} committed, ${usd(b.left)} left`,
      b.full ? ` — the study is full: new entries are refused (one more participant costs ${usd(b.next_entry)}).` : ` (one more participant: ${usd(b.next_entry)}).`));
    body.replaceChildren(...parts);
  }

  window.GTArms = { render, costs, drawChart, armTable, pairTable, pairedTable, preferenceTables, takenTable };
})();
