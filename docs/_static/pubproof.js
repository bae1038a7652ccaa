/* pubproof site: the clause page's parallel view and the search by rule id. No network:
   everything it reads is on the site. */
(function () {
  "use strict";
  var KEY = "pubproof.languages";
  var DEFAULT = ["en", "de"];
  /* the picker's limits, as its legend says: two to five languages side by side */
  var MIN = 2, MAX = 5;
  var WORDS = ["none", "one", "two", "three", "four", "five"];

  function chosen(all) {
    var saved = null;
    try { saved = JSON.parse(window.localStorage.getItem(KEY) || "null"); } catch (e) { saved = null; }
    if (!Array.isArray(saved)) { return DEFAULT.slice(); }
    saved = saved.filter(function (l) { return all.indexOf(l) >= 0; });
    return saved.length >= MIN ? saved.slice(0, MAX) : DEFAULT.slice();
  }

  function apply(langs) {
    document.querySelectorAll(".pp-parallel").forEach(function (grid) {
      grid.style.setProperty("--pp-cols", String(langs.length));
      grid.querySelectorAll(".pp-col").forEach(function (col) {
        var match = /pp-col-([a-z]{2})\b/.exec(col.className);
        if (!match) { return; }
        var on = langs.indexOf(match[1]) >= 0;
        col.classList.toggle("pp-off", !on);
        col.style.order = on ? String(langs.indexOf(match[1])) : "";
      });
    });
  }

  function picker() {
    var box = document.getElementById("pp-language-picker");
    if (!box) { return; }
    var pairs = (box.getAttribute("data-languages") || "").split(" ").map(function (p) {
      var at = p.indexOf(":");
      return [p.slice(0, at), p.slice(at + 1)];
    });
    var all = pairs.map(function (p) { return p[0]; });
    var langs = chosen(all);
    var legend = document.createElement("span");
    legend.className = "pp-picker-legend";
    legend.textContent = "Languages side by side (" + WORDS[MIN] + " to " + WORDS[MAX] + "):";
    box.appendChild(legend);
    pairs.forEach(function (pair) {
      var label = document.createElement("label");
      var input = document.createElement("input");
      input.type = "checkbox";
      input.value = pair[0];
      input.checked = langs.indexOf(pair[0]) >= 0;
      input.setAttribute("data-lang", pair[0]);
      input.addEventListener("change", function () {
        var now = Array.prototype.slice.call(box.querySelectorAll("input"))
          .filter(function (i) { return i.checked; }).map(function (i) { return i.value; });
        if (now.length < MIN || now.length > MAX) { input.checked = !input.checked; return; }
        try { window.localStorage.setItem(KEY, JSON.stringify(now)); } catch (e) { /* private mode */ }
        apply(now);
      });
      label.appendChild(input);
      label.appendChild(document.createTextNode(" " + pair[1]));
      box.appendChild(label);
    });
    apply(langs);
  }

  /* --- search by rule id: Sphinx's index splits "MQTT-3.3.1-4" into numbers; the site's
     own table (pp-ruleids.js, written at build time) maps each id, the standard's
     (MQTT-3.3.1-4) and the project's (PP31-3.3-topic-empty), to its clause, statement,
     rules, theorems and tests and the matrix rows and evidence pages that cite it; the
     search page shows those first. An id the table lacks is no rule: the page says so
     and hides Sphinx's hits on its numbers. */
  var RULE_ID = /(?:MQTT-)?(\d+(?:\.\d+)+-\d+)|\b(PP\d*-[A-Za-z0-9][A-Za-z0-9.\-]*)/i;

  function ruleResults() {
    if (!document.getElementById("search-results")) { return; }
    var query = new URLSearchParams(window.location.search).get("q") || "";
    var match = RULE_ID.exec(query.trim());
    if (!match) { return; }
    var id = match[1] ? "MQTT-" + match[1] : match[2];
    var root = document.documentElement.getAttribute("data-content_root") || "./";
    var script = document.createElement("script");
    script.src = root + "_static/pp-ruleids.js";
    script.onload = function () { showRule(id, root); };
    document.head.appendChild(script);
  }

  function showRule(id, root) {
    var table = window.PP_RULE_IDS || {};
    var byLower = {};
    Object.keys(table).forEach(function (k) { byLower[k.toLowerCase()] = k; });
    var found = [id, "5.0:" + id].map(function (k) { return byLower[k.toLowerCase()]; })
      .filter(function (k) { return k; });
    var section = document.createElement("section");
    section.id = "pp-rule-results";
    var title = document.createElement("h2");
    var results = document.getElementById("search-results");
    if (found.length) {
      title.textContent = "Rule id " + found[0].replace(/^5\.0:/, "");
    } else {
      title.textContent = "No such rule: " + id;
      var why = document.createElement("p");
      why.className = "pp-no-rule";
      why.textContent = id + " is not a rule id of MQTT 3.1, 3.1.1 or 5.0 nor one of the " +
        "project's (PP31-, PP311-, PP50-) on this site. ";
      var glossary = document.createElement("a");
      glossary.href = root + "glossary.html";
      glossary.textContent = "The glossary explains the id schemes.";
      why.appendChild(glossary);
      section.appendChild(title);
      section.appendChild(why);
      results.classList.add("pp-hidden");
      results.parentNode.insertBefore(section, results);
      return;
    }
    section.appendChild(title);
    found.forEach(function (key) {
      var list = document.createElement("ul");
      table[key].forEach(function (hit) {
        var item = document.createElement("li");
        item.setAttribute("data-kind", hit[0]);
        var kind = document.createElement("span");
        kind.className = "pp-hit-kind";
        kind.textContent = hit[0] + ": ";
        var link = document.createElement("a");
        link.href = root + hit[2];
        link.textContent = hit[1];
        item.appendChild(kind);
        item.appendChild(link);
        list.appendChild(item);
      });
      if (key.indexOf("5.0:") === 0) {
        var sub = document.createElement("h3");
        sub.textContent = "MQTT 5.0";
        section.appendChild(sub);
      }
      section.appendChild(list);
    });
    results.parentNode.insertBefore(section, results);
  }

  /* --- the ambiguity catalog's filter: each entry carries its facets as data attributes
     (p.pp-entry: the editions and languages it quotes, its clause, its kinds); the box
     #pp-catalog-filter lists the values on offer. Choosing values hides the entries (and
     their rows of the summary table) that do not have them all. */
  var FACETS = [["edition", "edition"], ["lang", "language"], ["clause", "clause"], ["kind", "kind"]];

  function catalogFilter() {
    var box = document.getElementById("pp-catalog-filter");
    if (!box) { return; }
    var entries = Array.prototype.slice.call(document.querySelectorAll("p.pp-entry"));
    var selects = {};
    var count = document.createElement("span");
    count.id = "pp-catalog-count";
    FACETS.forEach(function (facet) {
      var label = document.createElement("label");
      label.textContent = facet[1] + " ";
      var select = document.createElement("select");
      select.setAttribute("data-facet", facet[0]);
      var any = document.createElement("option");
      any.value = "";
      any.textContent = "any";
      select.appendChild(any);
      (box.getAttribute("data-" + facet[0]) || "").split(" ").filter(Boolean).forEach(function (pair) {
        var at = pair.indexOf(":");
        var option = document.createElement("option");
        option.value = pair.slice(0, at);
        option.textContent = pair.slice(at + 1).replace(/_/g, " ");
        select.appendChild(option);
      });
      select.addEventListener("change", update);
      selects[facet[0]] = select;
      label.appendChild(select);
      box.appendChild(label);
    });
    box.appendChild(count);
    function update() {
      var shown = 0;
      entries.forEach(function (entry) {
        var keep = FACETS.every(function (facet) {
          var want = selects[facet[0]].value;
          return !want || (entry.getAttribute("data-" + facet[0]) || "").split(" ").indexOf(want) >= 0;
        });
        var section = entry.closest("section");
        if (section) { section.classList.toggle("pp-off", !keep); }
        var self = entry.querySelector("a.pp-entry-id");
        document.querySelectorAll('tr a[href="' + self.getAttribute("href") + '"]').forEach(function (link) {
          link.closest("tr").classList.toggle("pp-off", !keep);
        });
        if (keep) { shown += 1; }
      });
      count.textContent = shown + " of " + entries.length + " entries";
    }
    update();
  }

  /* a notebook's figure at a readable size, with a link to the full-size image */
  function fullSize() {
    document.querySelectorAll(".cell_output img").forEach(function (img) {
      if (!img.src || img.closest("a")) { return; }
      var link = document.createElement("a");
      link.href = img.src;
      link.className = "pp-fullsize";
      link.textContent = "open the figure at full size";
      img.insertAdjacentElement("afterend", link);
    });
  }

  function start() { picker(); ruleResults(); catalogFilter(); fullSize(); }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
