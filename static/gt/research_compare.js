// The research compare page (templates/research/compare.html): the form reloads with the
// groups of the chosen game, batches and grouping; the result (json_script "compare-data") is
// drawn as a table and charts (static/gt/monitor.js).
(function () {
  "use strict";
  // changing the game, the batches, the grouping or the matches reloads the form with their groups
  const form = document.getElementById("compare-form");
  if (!form) return;
  for (const name of ["game", "batch", "role", "play"]) {
    form.querySelectorAll(`[name="${name}"]`).forEach((input) => input.addEventListener("change", () => {
      if (name === "game") form.querySelectorAll('[name="batch"]').forEach((b) => { b.checked = false; });
      if (name !== "play") { form.querySelector('[name="a"]').value = ""; form.querySelector('[name="b"]').value = ""; }
      form.submit();
    }));
  }
  const armsData = document.getElementById("arms-data");
  if (armsData && window.GTArms) {   // arms within one batch (research/arm_monitor.py); a new delta reloads
    window.GTArms.render(JSON.parse(armsData.textContent), (delta) => {
      const u = new URL(window.location.href);
      if (String(delta).trim()) u.searchParams.set("delta", String(delta).trim()); else u.searchParams.delete("delta");
      window.location.assign(u.toString());
    });
    window.gtArmsDrawn = true;
  }
  const data = document.getElementById("compare-data");
  if (data) {
    const r = JSON.parse(data.textContent), spec = GTMonitor.GAME_CHARTS[r.game_id];
    if (spec) {   // the game's score table and charts come from its monitor script (GameSpec.monitor_script)
      document.getElementById("result-table").append(GTMonitor.scoreTable(r.game_id, r.groups));
      const charts = document.getElementById("charts");
      for (const name of spec.charts) charts.append(GTMonitor.el("div", { class: "chart" }, GTMonitor.el("canvas", { id: "chart-" + name })));
      spec.draw("chart-", r.groups);
    }
    window.gtCompareDrawn = true;
  }
})();
