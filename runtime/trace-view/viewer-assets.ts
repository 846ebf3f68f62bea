/**
 * The trace viewer page's stylesheet and script, inlined into every HTML file it writes.
 *
 * The script builds the whole page from the JSON data block with DOM calls that never parse
 * markup (`textContent`, `createElement(NS)`, attributes set one by one): no `innerHTML`, no
 * `eval`, no URL from the data. Whatever a proxy put in a message is shown as text.
 * (Plain ES2017 inside a string: no template literals, no `${` and no backslashes, so a plain template literal holds it verbatim.)
 */

export const VIEWER_CSS = `
:root { --request: #2563eb; --response: #15803d; --notification: #7c3aed; --error: #dc2626; --dropped: #ea580c; --log: #6b7280; }
* { box-sizing: border-box; }
body { margin: 0; height: 100vh; display: flex; flex-direction: column; overflow: hidden; font: 13px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; color: #111827; background: #fff; }
header { flex: 0 0 auto; background: #f9fafb; border-bottom: 1px solid #e5e7eb; padding: 8px 12px; display: flex; gap: 16px; align-items: center; flex-wrap: wrap; }
header h1 { font-size: 15px; margin: 0; font-weight: 600; }
header .stats { color: #4b5563; }
header .warning { color: var(--error); }
.legend span { display: inline-block; margin-right: 10px; }
.legend i { display: inline-block; width: 18px; height: 3px; vertical-align: middle; margin-right: 4px; }
.legend .k-request i { background: var(--request); } .legend .k-response i { background: var(--response); }
.legend .k-notification i { background: var(--notification); } .legend .k-error i { background: var(--error); }
.legend .k-dropped i { background: var(--dropped); }
main { flex: 1 1 auto; min-height: 0; display: flex; }
#diagram-wrap { flex: 1 1 auto; overflow: auto; position: relative; }
#lane-heads { position: sticky; top: 0; z-index: 2; height: 34px; background: #fff; border-bottom: 1px solid #e5e7eb; }
.lane-head { position: absolute; top: 6px; height: 22px; padding: 2px 6px; border-radius: 4px; text-align: center; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; font-weight: 600; background: #eef2ff; border: 1px solid #c7d2fe; }
.lane-head.role-client, .lane-head.role-agent { background: #ecfdf5; border-color: #a7f3d0; }
.lane-head.role-bridge { background: #fef3c7; border-color: #fde68a; }
svg { display: block; }
.lane-line { stroke: #d1d5db; stroke-width: 1; }
.arrow, .note { cursor: pointer; }
.arrow line, .arrow path.shaft { stroke-width: 1.6; fill: none; }
.arrow text, .note text { font-size: 11.5px; }
.arrow .hit { stroke: transparent; stroke-width: 14; }
.kind-request line, .kind-request path.shaft { stroke: var(--request); } .kind-request .head { fill: var(--request); } .kind-request text { fill: #1e3a8a; }
.kind-response line, .kind-response path.shaft { stroke: var(--response); stroke-dasharray: 5 3; } .kind-response .head { fill: var(--response); } .kind-response text { fill: #14532d; }
.kind-notification line, .kind-notification path.shaft { stroke: var(--notification); } .kind-notification .head { fill: var(--notification); } .kind-notification text { fill: #4c1d95; }
.kind-error line, .kind-error path.shaft { stroke: var(--error); stroke-dasharray: 5 3; } .kind-error .head { fill: var(--error); } .kind-error text { fill: #991b1b; }
.kind-dropped line { stroke: var(--dropped); stroke-dasharray: 2 3; } .kind-dropped .head { stroke: var(--dropped); stroke-width: 2; } .kind-dropped text { fill: #9a3412; }
.note text { fill: var(--log); font-style: italic; }
.note circle { fill: var(--log); }
.arrow.selected text, .note.selected text { font-weight: 700; }
.arrow:focus, .note:focus { outline: none; } .arrow:focus text, .note:focus text { text-decoration: underline; }
.arrow.selected line, .arrow.selected path.shaft { stroke-width: 3; }
.ts { fill: #9ca3af; font-size: 10.5px; font-family: ui-monospace, monospace; }
#detail { flex: 0 0 420px; max-width: 45vw; overflow: auto; border-left: 1px solid #e5e7eb; background: #f9fafb; padding: 10px 12px; }
#detail h2 { font-size: 13px; margin: 0 0 6px; }
#detail pre { margin: 0; white-space: pre-wrap; word-break: break-all; font: 12px/1.45 ui-monospace, SFMono-Regular, Menlo, monospace; }
#detail .hint { color: #6b7280; }
`;

export const VIEWER_SCRIPT = `
(function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";
  var LANE_W = 180, LEFT = 70, ROW_H = 26, TOP = 16, DROP_W = 60;
  // A long trace is drawn a page at a time, so the page stays responsive.
  var PAGE = Number(document.body.getAttribute("data-page-size")) || 2000;
  var page = 0;
  var data = JSON.parse(document.getElementById("trace-data").textContent);
  var lanes = data.lanes, messages = data.messages, sessions = data.sessions;

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    if (attrs) for (var k in attrs) if (Object.prototype.hasOwnProperty.call(attrs, k)) node.setAttribute(k, attrs[k]);
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function svg(tag, attrs, text) {
    var node = document.createElementNS(SVG, tag);
    if (attrs) for (var k in attrs) if (Object.prototype.hasOwnProperty.call(attrs, k)) node.setAttribute(k, String(attrs[k]));
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function laneX(i) { return LEFT + i * LANE_W + LANE_W / 2; }

  // Header: title, counts, legend, session filter.
  document.getElementById("title").textContent = data.title;
  var counts = { request: 0, response: 0, notification: 0, error: 0, dropped: 0, log: 0 };
  messages.forEach(function (m) { counts[m.kind] = (counts[m.kind] || 0) + 1; });
  document.getElementById("stats").textContent =
    messages.length - counts.log + " messages (" + counts.request + " requests, " + (counts.response + counts.error) + " responses, " +
    counts.notification + " notifications, " + counts.error + " errors, " + counts.dropped + " dropped) across " + lanes.length + " participants";
  if (data.skipped > 0) document.getElementById("warning").textContent = data.skipped + " line(s) of the trace could not be read and are not shown";

  var filter = document.getElementById("session-filter");
  filter.appendChild(el("option", { value: "*" }, "all sessions"));
  sessions.forEach(function (s, i) {
    var n = messages.filter(function (m) { return m.session === s; }).length;
    filter.appendChild(el("option", { value: String(i) }, s + " (" + n + ")"));
  });
  filter.appendChild(el("option", { value: "none" }, "outside any session"));
  var showLogs = document.getElementById("show-logs");

  // Lane headers (sticky) and the diagram.
  var heads = document.getElementById("lane-heads");
  var width = LEFT + lanes.length * LANE_W + DROP_W;
  heads.style.width = width + "px";
  lanes.forEach(function (lane, i) {
    var head = el("div", { "class": "lane-head role-" + lane.role, title: lane.name, "data-lane": String(i) }, lane.name);
    head.style.left = (laneX(i) - (LANE_W - 16) / 2) + "px";
    head.style.width = (LANE_W - 16) + "px";
    heads.appendChild(head);
  });

  var diagram = document.getElementById("diagram");
  var detail = document.getElementById("detail-body");
  var detailTitle = document.getElementById("detail-title");
  var selected = null;

  function select(node, m) {
    if (selected) selected.classList.remove("selected");
    selected = node;
    node.classList.add("selected");
    var what = m.kind === "log" ? "log line" : m.kind === "dropped" ? "dropped message" : m.kind;
    detailTitle.textContent = "#" + (m.seq + 1) + " " + what + ": " + lanes[m.from].name + (m.to >= 0 ? " → " + lanes[m.to].name : "") +
      (m.ts === null ? "" : " at " + m.ts.toFixed(3) + " s");
    detail.textContent = JSON.stringify(m.event, null, 2);
  }

  function visible(m) {
    if (m.kind === "log" && !showLogs.checked) return false;
    var f = filter.value;
    if (f === "*") return true;
    if (f === "none") return m.session === null;
    return m.session === sessions[Number(f)];
  }

  function draw() {
    while (diagram.firstChild) diagram.removeChild(diagram.firstChild);
    selected = null;
    var matching = messages.filter(visible);
    var pages = Math.max(1, Math.ceil(matching.length / PAGE));
    if (page >= pages) page = pages - 1;
    var first = page * PAGE;
    var shown = matching.slice(first, first + PAGE);
    var height = TOP * 2 + Math.max(shown.length, 1) * ROW_H;
    diagram.setAttribute("width", String(width));
    diagram.setAttribute("height", String(height));
    lanes.forEach(function (lane, i) {
      diagram.appendChild(svg("line", { "class": "lane-line", x1: laneX(i), y1: 0, x2: laneX(i), y2: height }));
    });
    shown.forEach(function (m, row) {
      var y = TOP + row * ROW_H + ROW_H / 2 + 6;
      if (m.ts !== null) diagram.appendChild(svg("text", { "class": "ts", x: 4, y: y + 3 }, m.ts.toFixed(3)));
      var x1 = laneX(m.from), g, label;
      var title = svg("title", null, m.label);
      if (m.kind === "log") {
        g = svg("g", { "class": "note", "data-seq": m.seq });
        g.appendChild(title);
        g.appendChild(svg("circle", { cx: x1, cy: y, r: 3 }));
        label = svg("text", { x: x1 + 8, y: y + 4 }, m.label);
        g.appendChild(label);
      } else if (m.kind === "dropped") {
        // Refused by Cordon: a short stub from the sender ending in a cross.
        var dir = m.from === lanes.length - 1 ? -1 : 1;
        var x2 = x1 + dir * DROP_W;
        g = svg("g", { "class": "arrow kind-dropped", "data-seq": m.seq, "data-kind": m.kind });
        g.appendChild(title);
        g.appendChild(svg("line", { "class": "hit", x1: x1, y1: y, x2: x2, y2: y }));
        g.appendChild(svg("line", { x1: x1, y1: y, x2: x2, y2: y }));
        g.appendChild(svg("path", { "class": "head", d: "M" + (x2 - 5) + " " + (y - 5) + " L" + (x2 + 5) + " " + (y + 5) + " M" + (x2 - 5) + " " + (y + 5) + " L" + (x2 + 5) + " " + (y - 5) }));
        label = svg("text", { x: dir > 0 ? x2 + 10 : x2 - 10, y: y + 4, "text-anchor": dir > 0 ? "start" : "end" }, m.label);
        g.appendChild(label);
      } else {
        g = svg("g", { "class": "arrow kind-" + m.kind, "data-seq": m.seq, "data-kind": m.kind });
        g.appendChild(title);
        if (m.from === m.to) {
          var d = "M" + x1 + " " + (y - 6) + " h 30 v 12 h -30";
          g.appendChild(svg("path", { "class": "hit", d: d }));
          g.appendChild(svg("path", { "class": "shaft", d: d }));
          g.appendChild(svg("path", { "class": "head", d: "M" + x1 + " " + (y + 6) + " l 7 -4 v 8 z" }));
          label = svg("text", { x: x1 + 36, y: y + 4 }, m.label);
        } else {
          var xt = laneX(m.to), s = xt > x1 ? 1 : -1;
          g.appendChild(svg("line", { "class": "hit", x1: x1, y1: y, x2: xt, y2: y }));
          g.appendChild(svg("line", { x1: x1, y1: y, x2: xt - s * 7, y2: y }));
          g.appendChild(svg("path", { "class": "head", d: "M" + xt + " " + y + " l " + (-s * 8) + " -4.5 v 9 z" }));
          label = svg("text", { x: (x1 + xt) / 2, y: y - 4, "text-anchor": "middle" }, m.label);
        }
        g.appendChild(label);
      }
      g.setAttribute("tabindex", "0");
      g.setAttribute("role", "button");
      g.addEventListener("click", function () { select(g, m); });
      g.addEventListener("keydown", function (ev) {
        if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); select(g, m); }
      });
      diagram.appendChild(g);
    });
    document.getElementById("shown").textContent = shown.length === messages.length ? "" :
      "showing " + (matching.length ? first + 1 : 0) + "–" + (first + shown.length) + " of " + matching.length +
      (matching.length === messages.length ? "" : " matching (" + messages.length + " in all)");
    document.getElementById("pager").hidden = pages === 1;
    document.getElementById("prev").disabled = page === 0;
    document.getElementById("next").disabled = page >= pages - 1;
    detailTitle.textContent = "Message";
    detail.textContent = "";
    document.getElementById("detail-hint").textContent = "Click an arrow to see its JSON.";
  }

  filter.addEventListener("change", function () { page = 0; draw(); });
  showLogs.addEventListener("change", function () { page = 0; draw(); });
  document.getElementById("prev").addEventListener("click", function () { page--; draw(); });
  document.getElementById("next").addEventListener("click", function () { page++; draw(); });
  draw();
  document.body.setAttribute("data-ready", "1");
})();
`;
