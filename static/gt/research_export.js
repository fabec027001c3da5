// The export page (templates/research/export.html).
(function () {
  "use strict";
  // The count of matches the filters select, refreshed as they change (the download itself is a plain
  // GET: the browser shows its progress as bytes arrive).
  var form = document.getElementById("export-form"), out = document.getElementById("export-count");
  if (!form) return;
  function refresh() {
    var params = new URLSearchParams(new FormData(form));
    params.set("count", "1");
    fetch(form.action + "?" + params.toString(), {credentials: "same-origin"})
      .then(function (r) { return r.json(); })
      .then(function (j) {
        out.textContent = j.errors ? "Fix the form to see a count." : j.matches + " matches selected (" + j.filename + ").";
      })
      .catch(function () { out.textContent = ""; });
  }
  form.addEventListener("change", refresh);
  form.addEventListener("submit", function (ev) {
    if (ev.submitter && ev.submitter.id === "export-download") {
      document.getElementById("export-progress").textContent = "Download started: the file streams as it is written.";
    }
  });
  refresh();
})();
