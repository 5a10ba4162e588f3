// Filters rows by verdict; the choice lives in the URL hash (#verdict=NAME)
// so a filtered view can be linked and reloaded.
(function () {
  "use strict";
  var buttons = document.querySelectorAll("#filters button");
  var rows = document.querySelectorAll("#rows .row");
  function apply() {
    var m = /^#verdict=(.+)$/.exec(location.hash);
    var want = m ? decodeURIComponent(m[1]) : "all";
    var shown = 0;
    rows.forEach(function (r) {
      var show = want === "all" || r.getAttribute("data-verdict") === want;
      r.hidden = !show;
      if (show) { shown++; }
    });
    buttons.forEach(function (b) {
      b.setAttribute("aria-pressed", String(b.getAttribute("data-filter") === want));
    });
    document.body.setAttribute("data-filter", want);
    document.body.setAttribute("data-shown", String(shown));
  }
  buttons.forEach(function (b) {
    b.addEventListener("click", function () {
      var f = b.getAttribute("data-filter");
      if (f === "all") {
        history.replaceState(null, "", location.pathname + location.search);
      } else {
        history.replaceState(null, "", "#verdict=" + encodeURIComponent(f));
      }
      apply();
    });
  });
  window.addEventListener("hashchange", apply);
  apply();
})();
