// The admin's batch builder (research/batch_builder.py): show only the fieldset of the chosen game,
// so that its roles, agents and settings are the only ones offered. Without this script every
// game's fieldset shows, and only the chosen game's fields are read. A click on an entry link
// selects it (an inline onclick would be refused by the Content-Security-Policy).
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
  document.addEventListener("DOMContentLoaded", function () {
    // the entry links (BatchAdmin.entry_links): a click selects the whole link, ready to copy
    for (const input of document.querySelectorAll("input.gt-entry-link")) {
      input.addEventListener("click", function () { input.select(); });
    }
    const select = document.getElementById("id_game_id");
    if (!select) return;
    select.addEventListener("change", sync);
    sync();
  });
})();
