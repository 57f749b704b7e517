// deepresearch web viewer: live run progress over server-sent events. No dependencies.
(function () {
  "use strict";

  // Scroll the highlighted quote into view on the source page.
  var quote = document.getElementById("quote");
  if (quote && document.getElementById("text")) {
    quote.scrollIntoView({ block: "center" });
  }

  var root = document.getElementById("run");
  if (!root) return;
  var runID = root.dataset.run;
  var wasLive = root.dataset.live === "true";
  var stageOrder = ["scope", "search", "read", "verify", "synth"];
  var subqs = {};      // id -> {li, count}
  var sources = {};    // url -> li
  var evCount = 0;

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function setStage(stage, state) {
    var idx = stageOrder.indexOf(stage);
    if (idx < 0) return;
    document.querySelectorAll("#stages li").forEach(function (li, i) {
      if (state === "start") {
        li.classList.toggle("active", i === idx);
        if (i < idx) li.classList.add("done");
      } else if (state === "done" && i === idx) {
        li.classList.remove("active");
        li.classList.add("done");
      }
    });
  }

  function counters(p) {
    if (!p) return;
    document.querySelectorAll("#counters [data-c]").forEach(function (b) {
      var k = b.dataset.c, v = p[k];
      if (v === undefined) v = 0;
      b.textContent = k === "cost_usd" ? "$" + Number(v).toFixed(4) : String(v);
    });
  }

  function plan(pl) {
    var ol = document.getElementById("subqs");
    ol.textContent = "";
    subqs = {};
    (pl.sub_questions || []).forEach(function (sq) {
      var li = el("li", "", sq.question);
      li.dataset.sq = sq.id;
      var n = el("span", "n", "");
      li.appendChild(n);
      ol.appendChild(li);
      subqs[sq.id] = { li: li, n: n, count: 0 };
    });
  }

  // shortName keeps a source readable in a narrow column: the file name and its line anchor, or host and path.
  function shortName(url) {
    var m = /^file:\/\/[^#]*\/([^\/#]+)(#.*)?$/.exec(url);
    if (m) return m[1] + (m[2] || "");
    return url.replace(/^https?:\/\//, "");
  }

  function source(url, title, cls) {
    if (!url) return;
    var li = sources[url];
    if (!li) {
      li = el("li", "", title || shortName(url));
      li.title = url;
      document.getElementById("sources").appendChild(li);
      sources[url] = li;
    } else if (title) {
      li.textContent = title;
    }
    if (cls) li.className = cls;
  }

  function evidence(ev) {
    evCount++;
    document.getElementById("ev-count").textContent = "(" + evCount + ")";
    var li = el("li");
    li.dataset.id = ev.id;
    li.appendChild(el("div", "claim", ev.claim));
    li.appendChild(el("div", "q", "“" + ev.quote + "”"));
    li.appendChild(el("div", "src", (ev.title ? ev.title + " · " : "") + ev.source + " · confidence " + Math.round((ev.confidence || 0) * 100) + "%"));
    var list = document.getElementById("evidence");
    list.insertBefore(li, list.firstChild);
    var sq = subqs[ev.sub_question];
    if (sq) { sq.count++; sq.n.textContent = "· " + sq.count + " evidence"; }
  }

  function log(e) {
    var parts = [e.stage, e.kind];
    if (e.sub_question) parts.push(e.sub_question);
    if (e.message) parts.push(e.message);
    if (e.url) parts.push(e.url);
    if (e.error) parts.push("error: " + e.error);
    var li = el("li", "", parts.join(" · "));
    var ol = document.getElementById("log");
    ol.appendChild(li);
    ol.scrollTop = ol.scrollHeight;
  }

  function handle(e) {
    counters(e.progress);
    switch (e.kind) {
      case "stage_start": setStage(e.stage, "start"); break;
      case "stage_done": setStage(e.stage, "done"); break;
      case "plan": if (e.plan) plan(e.plan); break;
      case "candidates": break;
      case "read": source(e.url, null, "read"); break;
      case "skip": source(e.url, null, "skipped"); break;
      case "evidence":
        if (e.evidence) {
          evidence(e.evidence);
          source(e.evidence.source, e.evidence.title);
        }
        break;
      case "report": stageOrder.forEach(function (s) { setStage(s, "done"); }); break;
    }
    if (e.candidate) source(e.candidate.URL || e.candidate.url, e.candidate.Title || e.candidate.title);
    if (e.kind !== "evidence" && e.kind !== "spend") log(e);
  }

  var es = new EventSource("/runs/" + encodeURIComponent(runID) + "/events");
  es.addEventListener("progress", function (m) {
    try { handle(JSON.parse(m.data)); } catch (err) { console.error(err); }
  });
  es.addEventListener("end", function (m) {
    es.close();
    var end = JSON.parse(m.data);
    var status = document.getElementById("status");
    status.innerHTML = "";
    status.appendChild(el("span", "badge badge-" + end.status, end.status));
    if (end.error) {
      var p = el("p", "error", end.error);
      p.id = "run-error";
      root.querySelector(".card").appendChild(p);
    }
    // A run watched live reloads once to show its report.
    if (wasLive && end.status === "done") window.location.reload();
  });
})();
