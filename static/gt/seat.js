// The game page's seat (window.GT_SEAT: match, token, role, socket path, ...), from the page's
// json_script block "gt-seat" that the server writes (crowd/pages.py, seat_config). A data block
// (type="application/json") is never run, so the page needs no inline script: the
// Content-Security-Policy allows scripts from this site's files only (groundtalk_web/csp.py).
// Loaded before every other script of the page.
(function () {
  "use strict";
  const block = document.getElementById("gt-seat");
  window.GT_SEAT = block ? JSON.parse(block.textContent) : null;
})();
