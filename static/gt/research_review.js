// The review page (templates/research/review.html): "select all" ticks every participant's box.
(function () {
  "use strict";
  const all = document.getElementById("select-all");
  if (!all) return;
  all.addEventListener("change", function (e) {
    document.querySelectorAll('input[name="p"]').forEach(function (c) { c.checked = e.target.checked; });
  });
})();
