// deepresearch web viewer: live run progress over server-sent events. No dependencies.
(function () {
  "use strict";

  // Scroll the highlighted quote into view inside the source text box only: the page itself stays at its top,
  // so the evidence card above the text is what the reader sees first.
  var quote = document.getElementById("quote");
  var text = document.getElementById("text");
  if (quote && text) {
    var q = quote.getBoundingClientRect(), t = text.getBoundingClientRect();
    text.scrollTop += (q.top - t.top) - (text.clientHeight - Math.min(q.height, text.clientHeight)) / 2;
  }

  var root = document.getElementById("run");
  if (!root) return;
  var runID = root.dataset.run;
  var wasLive = root.dataset.live === "true";
  var stageOrder = ["scope", "search", "read", "verify", "synth"];
  var subqs = {};      // id -> {li, count}
  var docs = {};       // document (URL without its #fragment) -> {li, reads, evidence, cited}
  var docCount = 0;
  var evCount = 0;
  var picked = 0;
  var words = {};
  try { words = JSON.parse(document.getElementById("labels").textContent); } catch (err) { words = {}; }
  function w(k, def) { return words[k] || def; }
  var cited = {};
  (root.dataset.cited || "").split(",").forEach(function (id) { if (id) cited[id] = true; });

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

  // docKey is the document a passage belongs to: its URL without the #L… line anchor.
  function docKey(url) { return String(url).split("#")[0]; }

  // where is the document's host, or its folder for a local file: the second line of its row.
  function where(key) {
    var m = /^file:\/\/(.*)$/.exec(key);
    if (m) { var p = decodeURIComponent(m[1]); return p; }
    m = /^https?:\/\/([^\/]+)(\/[^?]*)?/.exec(key);
    return m ? m[1] + (m[2] && m[2] !== "/" ? m[2] : "") : key;
  }

  function fileName(key) {
    var m = /\/([^\/]+)$/.exec(key.replace(/\/+$/, ""));
    return m ? decodeURIComponent(m[1]) : key;
  }

  // source adds a passage of a document to the Sources column: one row per document, however many passages of it
  // were read, with how many were read, gave evidence and are cited.
  function source(url, title, what, evID) {
    if (!url) return;
    var key = docKey(url), d = docs[key];
    if (!d) {
      var li = el("li", "doc");
      // A web page opens from its row; a local file cannot be opened from this page (its passages open from the
      // report's citations once the run is done).
      var name = /^https?:\/\//i.test(key) ? el("a", "name", title || fileName(key)) : el("span", "name", title || fileName(key));
      if (name.tagName === "A") { name.href = key; name.target = "_blank"; name.rel = "noopener noreferrer"; }
      var loc = el("span", "where", where(key));
      var n = el("span", "n", "");
      li.title = key;
      li.appendChild(name); li.appendChild(loc); li.appendChild(n);
      document.getElementById("sources").appendChild(li);
      d = docs[key] = { li: li, name: name, n: n, reads: 0, evidence: 0, cited: 0, titled: !!title };
      docCount++;
      document.getElementById("src-count").textContent = "(" + docCount + ")";
    } else if (title && !d.titled) {
      d.name.textContent = title; d.titled = true;
    }
    if (what === "read") d.reads++;
    if (what === "evidence") { d.evidence++; if (cited[evID]) d.cited++; }
    if (what === "skip" && d.reads === 0) d.li.classList.add("skipped");
    if (d.reads > 0) d.li.classList.remove("skipped");
    var parts = [d.reads + " " + w("passages", "passages") + " " + w("read", "read")];
    if (d.evidence) parts.push(d.evidence + " " + w("evidence", "evidence"));
    if (d.cited) parts.push(d.cited + " " + w("cited", "cited"));
    d.n.textContent = parts.join(" · ");
    d.li.classList.toggle("cited", d.cited > 0);
    note();
  }

  function note() {
    var p = document.getElementById("src-note");
    if (docCount === 0 && picked > 0) p.textContent = picked + " " + w("picked", "sources picked; reading…");
    else p.textContent = "";
  }

  // task shows any event that counts done of total (indexing a corpus, for one) as a bar.
  function task(e) {
    var total = e.total || 0;
    if (!(total > 0)) return;
    var done = e.done !== undefined ? e.done : (e.count || 0);
    var box = document.getElementById("task");
    box.hidden = false;
    document.getElementById("task-label").textContent = e.message || (e.stage + " " + e.kind);
    var bar = document.getElementById("task-bar");
    bar.max = total; bar.value = Math.min(done, total);
    document.getElementById("task-count").textContent = done + " / " + total;
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
    if (sq) { sq.count++; sq.n.textContent = "· " + sq.count + " " + w("evidence", "evidence"); }
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
      case "candidates": picked += e.count || 0; note(); break;
      case "read": source(e.url, null, "read"); break;
      case "skip": source(e.url, null, "skip"); break;
      case "evidence":
        if (e.evidence) {
          evidence(e.evidence);
          source(e.evidence.source, e.evidence.title, "evidence", e.evidence.id);
        }
        break;
      case "report": stageOrder.forEach(function (s) { setStage(s, "done"); }); break;
    }
    task(e);
    if (e.kind !== "evidence" && e.kind !== "spend") log(e);
  }

  var es = new EventSource("/runs/" + encodeURIComponent(runID) + "/events");
  // The page shows the planner's clarifying questions as the server had them when it was made: a clarify or
  // unanswered event after that (the questions put, or their time run out) reloads it once to show the change.
  var shownEvents = Number(root.dataset.events || 0);
  var reloading = false;
  es.addEventListener("progress", function (m) {
    var e;
    try { e = JSON.parse(m.data); handle(e); } catch (err) { console.error(err); return; }
    if (wasLive && !reloading && (e.kind === "clarify" || e.kind === "unanswered") && Number(m.lastEventId) >= shownEvents) {
      reloading = true;
      es.close();
      window.location.reload();
    }
  });
  es.addEventListener("end", function (m) {
    es.close();
    var end = JSON.parse(m.data);
    var status = document.getElementById("status");
    status.textContent = "";
    status.appendChild(el("span", "badge badge-" + end.status, end.status));
    var stop = document.getElementById("stop-form");
    if (stop) stop.remove();
    var box = document.getElementById("task");
    if (box) box.hidden = true;
    // One error element, filled in place: a reconnecting stream never adds a second.
    var p = document.getElementById("run-error");
    if (end.error && p) { p.textContent = end.error; p.hidden = false; }
    // A run watched live reloads once to show its report, or the note on how to resume it.
    if (wasLive && (end.status === "done" || end.status === "stopped")) window.location.reload();
  });
})();
