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
header select { max-width: 240px; }
.legend span { display: inline-block; margin-right: 10px; }
.legend i { display: inline-block; width: 18px; height: 3px; vertical-align: middle; margin-right: 4px; }
.legend .k-request i { background: var(--request); } .legend .k-response i { background: var(--response); }
.legend .k-notification i { background: var(--notification); } .legend .k-error i { background: var(--error); }
.legend .k-dropped i { background: var(--dropped); }
.legend .k-past i { width: 9px; height: 9px; border-radius: 50%; border: 1.6px solid #374151; background: #fff; }
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
.arrow text, .note text { font-size: 11.5px; paint-order: stroke; stroke: #fff; stroke-width: 3px; stroke-linejoin: round; }
.past-mark { fill: #fff; stroke-width: 1.6; }
.kind-request .past-mark { stroke: var(--request); } .kind-response .past-mark { stroke: var(--response); }
.kind-notification .past-mark { stroke: var(--notification); } .kind-error .past-mark { stroke: var(--error); }
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
#detail { flex: 0 0 340px; max-width: 30vw; overflow: auto; border-left: 1px solid #e5e7eb; background: #f9fafb; padding: 10px 12px; }
#detail h2 { font-size: 13px; margin: 0 0 6px; }
#detail pre { margin: 0; white-space: pre-wrap; word-break: break-all; font: 12px/1.45 ui-monospace, SFMono-Regular, Menlo, monospace; }
#detail .hint { color: #6b7280; }
`;

export const VIEWER_SCRIPT = `
(function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";
  // Lanes share the diagram's width (between MIN_LANE and MAX_LANE each), so a chain of 8 fits at
  // 1400 px; LEFT is the time column, which no label may enter.
  var MIN_LANE = 96, MAX_LANE = 180, LEFT = 70, ROW_H = 26, TOP = 16, DROP_W = 60;
  var LANE_W = MAX_LANE, width = 0;
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
  function names(list) { return list.map(function (i) { return lanes[i].name; }).join(", "); }

  // Header: title, counts, legend, filters.
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
  // Methods (a response counts under its request's method) and kinds, each with its count.
  var methods = [];
  var methodCount = {};
  messages.forEach(function (m) {
    if (!m.method) return;
    if (!Object.prototype.hasOwnProperty.call(methodCount, "m:" + m.method)) { methodCount["m:" + m.method] = 0; methods.push(m.method); }
    methodCount["m:" + m.method]++;
  });
  methods.sort();
  var methodFilter = document.getElementById("method-filter");
  methodFilter.appendChild(el("option", { value: "*" }, "all methods"));
  methods.forEach(function (name, i) { methodFilter.appendChild(el("option", { value: String(i) }, name + " (" + methodCount["m:" + name] + ")")); });
  var kindFilter = document.getElementById("kind-filter");
  kindFilter.appendChild(el("option", { value: "*" }, "all kinds"));
  ["request", "response", "notification", "error", "dropped", "log"].forEach(function (k) {
    if (counts[k]) kindFilter.appendChild(el("option", { value: k }, k + " (" + counts[k] + ")"));
  });
  var showLogs = document.getElementById("show-logs");

  // Lane headers (sticky) and the diagram.
  var wrap = document.getElementById("diagram-wrap");
  var heads = document.getElementById("lane-heads");
  var headNodes = lanes.map(function (lane, i) {
    var head = el("div", { "class": "lane-head role-" + lane.role, title: lane.name, "data-lane": String(i) }, lane.name);
    heads.appendChild(head);
    return head;
  });
  function layout() {
    var room = wrap.clientWidth - LEFT - DROP_W;
    LANE_W = Math.max(MIN_LANE, Math.min(MAX_LANE, Math.floor(room / Math.max(1, lanes.length))));
    width = LEFT + lanes.length * LANE_W + DROP_W;
    heads.style.width = width + "px";
    headNodes.forEach(function (head, i) {
      head.style.left = (laneX(i) - (LANE_W - 12) / 2) + "px";
      head.style.width = (LANE_W - 12) + "px";
    });
  }

  var diagram = document.getElementById("diagram");
  var detail = document.getElementById("detail-body");
  var detailTitle = document.getElementById("detail-title");
  var selected = null;

  // A label is one line that stays right of the time column and inside the diagram: moved along
  // its row when it would cross either edge, shortened with an ellipsis only when the row is too
  // narrow (its full text is in the arrow's title and, once selected, drawn whole).
  function fit(node, text, room) {
    node.textContent = text;
    var full = node.getComputedTextLength();
    if (full <= room) return full;
    var chars = Array.from(text);
    var n = Math.max(0, Math.floor(chars.length * room / full) - 1);
    node.textContent = chars.slice(0, n).join("") + "…";
    while (n > 0 && node.getComputedTextLength() > room) { n--; node.textContent = chars.slice(0, n).join("") + "…"; }
    return node.getComputedTextLength();
  }
  function place(node, text, want, align, whole) {
    var room = width - LEFT - 8;
    var w = fit(node, text, whole ? Infinity : room);
    if (whole && w > room) {
      diagram.setAttribute("width", String(LEFT + w + 12)); // the selected label is never cut off: the diagram grows
    }
    var right = Math.max(width, LEFT + w + 12) - 4;
    var left = align === "middle" ? want - w / 2 : align === "end" ? want - w : want;
    left = Math.max(LEFT + 4, Math.min(left, right - w));
    node.setAttribute("x", String(left));
    node.setAttribute("text-anchor", "start");
  }

  function select(node, m) {
    if (selected) {
      selected.node.classList.remove("selected");
      selected.relabel(false);
    }
    diagram.setAttribute("width", String(width));
    selected = { node: node, relabel: node.relabel };
    node.classList.add("selected");
    node.relabel(true);
    var what = m.kind === "log" ? "log line" : m.kind === "dropped" ? "dropped message" : m.kind;
    detailTitle.textContent = "#" + (m.seq + 1) + " " + what + ": " + lanes[m.from].name + (m.to >= 0 ? " → " + lanes[m.to].name : "") +
      (m.ts === null ? "" : " at " + m.ts.toFixed(3) + " s") + (m.past.length ? "; routed past " + names(m.past) + ", which did not see it" : "");
    detail.textContent = JSON.stringify(m.event, null, 2);
  }

  function visible(m) {
    if (m.kind === "log" && !showLogs.checked) return false;
    if (kindFilter.value !== "*" && m.kind !== kindFilter.value) return false;
    if (methodFilter.value !== "*" && m.method !== methods[Number(methodFilter.value)]) return false;
    var f = filter.value;
    if (f === "*") return true;
    if (f === "none") return m.session === null;
    return m.session === sessions[Number(f)];
  }

  function draw() {
    while (diagram.firstChild) diagram.removeChild(diagram.firstChild);
    selected = null;
    layout();
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
      var x1 = laneX(m.from), g, label, want, align;
      var title = svg("title", null, m.label + (m.past.length ? " (routed past " + names(m.past) + ", which did not see it)" : ""));
      if (m.kind === "log") {
        g = svg("g", { "class": "note", "data-seq": m.seq });
        g.appendChild(title);
        g.appendChild(svg("circle", { cx: x1, cy: y, r: 3 }));
        label = svg("text", { y: y + 4 });
        want = x1 + 8; align = "start";
      } else if (m.kind === "dropped") {
        // Refused by Cordon: a short stub from the sender ending in a cross.
        var dir = m.from === lanes.length - 1 ? -1 : 1;
        var x2 = x1 + dir * DROP_W;
        g = svg("g", { "class": "arrow kind-dropped", "data-seq": m.seq, "data-kind": m.kind });
        g.appendChild(title);
        g.appendChild(svg("line", { "class": "hit", x1: x1, y1: y, x2: x2, y2: y }));
        g.appendChild(svg("line", { x1: x1, y1: y, x2: x2, y2: y }));
        g.appendChild(svg("path", { "class": "head", d: "M" + (x2 - 5) + " " + (y - 5) + " L" + (x2 + 5) + " " + (y + 5) + " M" + (x2 - 5) + " " + (y + 5) + " L" + (x2 + 5) + " " + (y - 5) }));
        label = svg("text", { y: y + 4 });
        want = dir > 0 ? x2 + 10 : x2 - 10; align = dir > 0 ? "start" : "end";
      } else {
        g = svg("g", { "class": "arrow kind-" + m.kind + (m.past.length ? " routed-past" : ""), "data-seq": m.seq, "data-kind": m.kind });
        if (m.past.length) g.setAttribute("data-past", names(m.past));
        g.appendChild(title);
        if (m.from === m.to) {
          var d = "M" + x1 + " " + (y - 6) + " h 30 v 12 h -30";
          g.appendChild(svg("path", { "class": "hit", d: d }));
          g.appendChild(svg("path", { "class": "shaft", d: d }));
          g.appendChild(svg("path", { "class": "head", d: "M" + x1 + " " + (y + 6) + " l 7 -4 v 8 z" }));
          label = svg("text", { y: y + 4 });
          want = x1 + 36; align = "start";
        } else {
          var xt = laneX(m.to), s = xt > x1 ? 1 : -1;
          g.appendChild(svg("line", { "class": "hit", x1: x1, y1: y, x2: xt, y2: y }));
          g.appendChild(svg("line", { x1: x1, y1: y, x2: xt - s * 7, y2: y }));
          g.appendChild(svg("path", { "class": "head", d: "M" + xt + " " + y + " l " + (-s * 8) + " -4.5 v 9 z" }));
          // Routed past a lane: a hollow ring where the arrow crosses it (delivered arrows end at a lane, never cross one).
          m.past.forEach(function (p) {
            var ring = svg("circle", { "class": "past-mark", cx: laneX(p), cy: y, r: 4.5, "data-lane": p });
            ring.appendChild(svg("title", null, "routed past " + lanes[p].name + ": it did not see this message"));
            g.appendChild(ring);
          });
          label = svg("text", { y: y - 4 });
          want = (x1 + xt) / 2; align = "middle";
        }
      }
      g.appendChild(label);
      g.setAttribute("tabindex", "0");
      g.setAttribute("role", "button");
      diagram.appendChild(g);
      g.relabel = function (whole) { place(label, m.label, want, align, whole); };
      g.relabel(false);
      g.addEventListener("click", function () { select(g, m); });
      g.addEventListener("keydown", function (ev) {
        if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); select(g, m); }
      });
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

  [filter, methodFilter, kindFilter, showLogs].forEach(function (control) {
    control.addEventListener("change", function () { page = 0; draw(); });
  });
  document.getElementById("prev").addEventListener("click", function () { page--; draw(); });
  document.getElementById("next").addEventListener("click", function () { page++; draw(); });
  var resizing = 0;
  window.addEventListener("resize", function () {
    clearTimeout(resizing);
    resizing = setTimeout(function () { var w = LANE_W; layout(); if (LANE_W !== w) draw(); }, 150);
  });
  draw();
  document.body.setAttribute("data-ready", "1");
})();
`;
