// pagetwin report: tabs by location.hash, and paging of long tables. Reads nothing but the
// page itself; every crawled string in the page is escaped text, never markup.
(function () {
  "use strict";
  var sections = Array.prototype.slice.call(document.querySelectorAll("main > section"));
  var links = Array.prototype.slice.call(document.querySelectorAll("nav a"));
  var pairs = Array.prototype.slice.call(document.querySelectorAll(".pair"));

  function show() {
    var id = (location.hash || "#overview").slice(1);
    var target = document.getElementById(id);
    var section = target ? target.closest("main > section") : null;
    if (!section) { section = sections[0]; id = section.id; }
    sections.forEach(function (s) { s.classList.toggle("hidden", s !== section); });
    links.forEach(function (a) { a.classList.toggle("on", a.getAttribute("href") === "#" + section.id); });
    // A pair asked for by name is shown alone (a link from a cluster, or a bookmark).
    var one = target && target.classList.contains("pair") ? target : null;
    pairs.forEach(function (p) { p.classList.toggle("hidden", one !== null && p !== one); });
    Array.prototype.slice.call(document.querySelectorAll(".pair-index")).forEach(function (l) { l.hidden = one !== null; });
    // After the browser's own jump to the anchor: the shown section starts at the top.
    setTimeout(function () { window.scrollTo(0, 0); }, 0);
  }

  function page(table) {
    var size = parseInt(table.getAttribute("data-page-size"), 10) || 25;
    var rows = Array.prototype.slice.call(table.tBodies[0].rows);
    if (rows.length <= size) return;
    var pages = Math.ceil(rows.length / size), at = 0;
    var bar = document.createElement("div");
    bar.className = "pager";
    var prev = document.createElement("button"), next = document.createElement("button");
    var label = document.createElement("span");
    prev.textContent = "\u2190 previous"; next.textContent = "next \u2192";
    bar.appendChild(prev); bar.appendChild(label); bar.appendChild(next);
    table.parentNode.insertBefore(bar, table.nextSibling);
    function draw() {
      rows.forEach(function (r, i) { r.hidden = Math.floor(i / size) !== at; });
      label.textContent = "page " + (at + 1) + " of " + pages + " (" + rows.length + " rows)";
      prev.disabled = at === 0; next.disabled = at === pages - 1;
    }
    prev.addEventListener("click", function () { if (at > 0) { at -= 1; draw(); } });
    next.addEventListener("click", function () { if (at < pages - 1) { at += 1; draw(); } });
    draw();
  }

  Array.prototype.slice.call(document.querySelectorAll("table[data-page-size]")).forEach(page);
  window.addEventListener("hashchange", show);
  window.addEventListener("load", function () { setTimeout(function () { window.scrollTo(0, 0); }, 0); });
  show();
  document.documentElement.setAttribute("data-report-ready", "1");
})();
