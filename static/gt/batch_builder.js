// The admin's batch builder (research/batch_builder.py): show only the fieldset of the chosen game,
// so that its roles, agents and settings are the only ones offered. Without this script every
// game's fieldset shows, and only the chosen game's fields are read. A click on an entry link
// selects it (an inline onclick would be refused by the Content-Security-Policy).
//
// The experiment's arms (issue 24): the JSON field ``arms`` is what is saved; a table under it edits
// it (name, weight, one agent per agent seat from the chosen game's choices, add and remove rows).
// A change in the table rewrites the JSON, keeping what the table does not show (an arm's config,
// human_roles); a change in the JSON redraws the table. JSON that is not a list of arms leaves the
// table out until it is fixed. The server's problems with an arm (``arms[1].agents.listener (arm
// 'b'): ...``, in the field's error list) are shown beside that arm's row and field too.
(function () {
  "use strict";
  function sync() {
    const select = document.getElementById("id_game_id");
    if (!select) return;
    for (const set of document.querySelectorAll("fieldset.gt-game")) {
      const mine = set.classList.contains("gt-game-" + select.value);
      set.hidden = !mine;
      set.style.display = mine ? "" : "none";
    }
  }

  function h(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "text") node.textContent = v; else node.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children.flat()) if (c !== null && c !== undefined) node.append(c);
    return node;
  }

  function armsEditor(area) {
    const choices = JSON.parse(area.dataset.agents || "{}");
    const box = h("div", { class: "gt-arms-editor", id: "arms-editor" });
    // under the field (the admin lays a field and what follows it out in a row: the table goes below)
    (area.closest(".flex-container") || area).insertAdjacentElement("afterend", box);
    // the server's problems with an arm, from the field's error list (rendered before the field)
    const problems = [];
    const row = area.closest(".form-row") || area.parentElement;
    for (const li of (row ? row.querySelectorAll(".errorlist li") : [])) {
      const m = /^arms\[(\d+)\](?:\.(\w+)(?:\.(\w+))?)?/.exec(li.textContent.trim());
      if (m) problems.push({ index: Number(m[1]), field: m[2] || "", role: m[3] || "", text: li.textContent.trim() });
    }
    let showProblems = true;

    function game() { const s = document.getElementById("id_game_id"); return s ? s.value : ""; }
    function parse() {
      const text = area.value.trim();
      if (!text) return { arms: [] };
      try {
        const arms = JSON.parse(text);
        if (!Array.isArray(arms)) return { error: "it is not a JSON list" };
        if (!arms.every((a) => a && typeof a === "object" && !Array.isArray(a))) return { error: "every arm must be a JSON object" };
        return { arms };
      } catch (e) { return { error: e.message }; }
    }
    function seats(arms) {
      const g = choices[game()];
      if (!g) return [];
      const people = [...document.querySelectorAll(`#id_${game()}__roles input:checked`)].map((i) => i.value);
      let roles = g.roles.filter((r) => !people.includes(r));
      if (!roles.length) roles = g.roles.slice();   // none ticked (or all): any seat may be an agent's
      for (const a of arms) for (const r of Object.keys((a.agents && typeof a.agents === "object") ? a.agents : {}))
        if (g.roles.includes(r) && !roles.includes(r)) roles.push(r);
      return g.roles.filter((r) => roles.includes(r));
    }
    function write(arms) {
      area.value = arms.length ? JSON.stringify(arms, null, 2) : "[]";
      area.dispatchEvent(new CustomEvent("gt-arms-written"));
    }
    function change(mutate) {
      const p = parse();
      if (p.error) return;
      mutate(p.arms);
      write(p.arms);
      draw();
    }

    function draw() {
      const p = parse();
      if (p.error) {
        box.replaceChildren(h("p", { class: "gt-problem", id: "arms-json-problem",
          text: `The arms above cannot be read as a JSON list of arms (${p.error}): fix the JSON there; the table follows it.` }));
        return;
      }
      const arms = p.arms, roles = seats(arms), g = choices[game()] || { agents: {} };
      const head = h("tr", {}, h("th", { text: "Arm name" }), h("th", { text: "Weight" }),
        roles.map((r) => h("th", { text: `Agent as ${r}` })), h("th", { text: "" }), h("th", { text: "Problems" }));
      const rows = arms.map((arm, i) => {
        const mine = showProblems ? problems.filter((q) => q.index === i) : [];
        const bad = (field, role) => mine.some((q) => q.field === field && (!role || q.role === role));
        const name = h("input", { type: "text", value: typeof arm.name === "string" ? arm.name : "", "data-field": "name",
                                  "aria-label": `arm ${i + 1} name`, "aria-invalid": bad("name") ? "true" : null, size: 16 });
        name.addEventListener("change", () => change((a) => { a[i].name = name.value.trim(); }));
        const weight = h("input", { type: "number", min: "1", step: "1", value: arm.weight === undefined ? "1" : String(arm.weight),
                                    "data-field": "weight", "aria-label": `arm ${i + 1} weight`, "aria-invalid": bad("weight") ? "true" : null });
        weight.addEventListener("change", () => change((a) => {
          const v = weight.value.trim();
          a[i].weight = /^\d+$/.test(v) ? Number(v) : v;   // anything else: the server says why not
        }));
        const agents = (arm.agents && typeof arm.agents === "object") ? arm.agents : {};
        const cells = roles.map((r) => {
          const sel = h("select", { "data-role": r, "aria-label": `arm ${i + 1} agent as ${r}`,
                                    "aria-invalid": bad("agents", r) || bad("agents") ? "true" : null });
          const opts = (g.agents[r] || [["", "— none —"]]).map(([v, label]) => [v, v ? v : "— none (a person) —", label]);
          if (agents[r] && !opts.some(([v]) => v === agents[r])) opts.push([agents[r], `${agents[r]} (not an agent for ${r})`, ""]);
          for (const [v, text, title] of opts) sel.append(h("option", { value: v, text, title: title || null, selected: (agents[r] || "") === v }));
          sel.addEventListener("change", () => change((a) => {
            const ag = (a[i].agents && typeof a[i].agents === "object") ? a[i].agents : {};
            if (sel.value) ag[r] = sel.value; else delete ag[r];
            a[i].agents = ag;
          }));
          return h("td", {}, sel);
        });
        const remove = h("button", { type: "button", class: "button gt-arm-remove", text: "Remove", "aria-label": `remove arm ${i + 1}` });
        remove.addEventListener("click", () => { showProblems = false; change((a) => { a.splice(i, 1); }); });
        return h("tr", { "data-arm-index": String(i), class: mine.length ? "gt-arm-bad" : null },
          h("td", {}, name), h("td", {}, weight), cells, h("td", {}, remove),
          h("td", { class: "gt-problem gt-arm-problems" }, mine.map((q) => h("div", { text: q.text }))));
      });
      const add = h("button", { type: "button", class: "button", id: "arm-add", text: "Add an arm" });
      add.addEventListener("click", () => change((a) => {
        const names = new Set(a.map((x) => x.name));
        let n = a.length + 1;
        while (names.has(`arm ${n}`)) n += 1;
        a.push({ name: `arm ${n}`, agents: {}, weight: 1 });
      }));
      const note = h("p", { class: "help", text: arms.length
        ? "Each row is one arm of the JSON above (its config and human_roles stay as written there). An arm with no agent is human-human."
        : "No arms: one arm, the batch's own agents. Add arms to randomise people between them." });
      box.replaceChildren(h("table", { class: "gt-arms-table", id: "arms-table" }, h("thead", {}, head), h("tbody", {}, rows)),
                          h("p", {}, add), note);
    }

    area.addEventListener("input", () => { showProblems = false; draw(); });
    const gameSelect = document.getElementById("id_game_id");
    if (gameSelect) gameSelect.addEventListener("change", draw);
    document.addEventListener("change", (e) => { if (e.target && e.target.matches && e.target.matches("[id$='__roles'] input")) draw(); });
    draw();
  }

  document.addEventListener("DOMContentLoaded", function () {
    // the entry links (BatchAdmin.entry_links): a click selects the whole link, ready to copy
    for (const input of document.querySelectorAll("input.gt-entry-link")) {
      input.addEventListener("click", function () { input.select(); });
    }
    const select = document.getElementById("id_game_id");
    if (select) { select.addEventListener("change", sync); sync(); }
    const area = document.querySelector("textarea.gt-arms-json");
    if (area) armsEditor(area);
  });
})();
