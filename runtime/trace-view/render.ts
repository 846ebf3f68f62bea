/**
 * One self-contained HTML file for a trace: the data as a JSON block, the viewer's stylesheet and
 * script inline, nothing fetched.
 *
 * The trace is untrusted. Three layers keep its content inert:
 * - the data sits in `<script type="application/json">` with every `<`, `>`, `&`, U+2028 and
 *   U+2029 written as a `\uXXXX` escape, so no string in it can end the block or open a tag;
 * - the script renders it with `textContent` and attributes only (see `viewer-assets.ts`);
 * - a Content-Security-Policy allows exactly this page's own stylesheet and script (by hash) and
 *   nothing else: no other script, no network, no images, forms or frames.
 */
import { createHash } from "node:crypto";
import type { TraceModel } from "./model.js";
import { VIEWER_CSS, VIEWER_SCRIPT } from "./viewer-assets.js";

export interface RenderOptions {
  title: string;
  /** Messages drawn at once (default 2000); longer traces get earlier / later buttons. */
  pageSize?: number;
}

/** JSON that is safe inside any HTML element, script blocks included. */
export function jsonForHtml(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

/** Text for an HTML text node or a quoted attribute. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const sha256 = (text: string) => `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;

export function renderTraceHtml(model: TraceModel, options: RenderOptions): string {
  const data = jsonForHtml({ title: options.title, ...model });
  const csp = [
    "default-src 'none'",
    `style-src ${sha256(VIEWER_CSS)}`,
    `script-src ${sha256(VIEWER_SCRIPT)}`,
    "img-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="cordon trace view">
<title>${escapeHtml(options.title)}</title>
<style>${VIEWER_CSS}</style>
</head>
<body data-page-size="${Math.max(1, Math.floor(Number(options.pageSize ?? 2000)) || 2000)}">
<header>
  <h1 id="title"></h1>
  <span class="stats" id="stats"></span>
  <label>Session <select id="session-filter"></select></label>
  <label>Method <select id="method-filter"></select></label>
  <label>Kind <select id="kind-filter"></select></label>
  <label><input type="checkbox" id="show-logs" checked> log lines</label>
  <span class="stats" id="shown"></span>
  <span id="pager" hidden><button type="button" id="prev">◀ earlier</button> <button type="button" id="next">later ▶</button></span>
  <span class="legend"><span class="k-request"><i></i>request</span><span class="k-response"><i></i>response</span><span class="k-notification"><i></i>notification</span><span class="k-error"><i></i>error</span><span class="k-dropped"><i></i>dropped by Cordon</span><span class="k-past"><i></i>routed past (that proxy did not see it)</span></span>
  <span class="warning" id="warning"></span>
</header>
<main>
  <div id="diagram-wrap">
    <div id="lane-heads"></div>
    <svg id="diagram" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="sequence diagram"></svg>
  </div>
  <aside id="detail">
    <h2 id="detail-title">Message</h2>
    <p class="hint" id="detail-hint"></p>
    <pre id="detail-body"></pre>
  </aside>
</main>
<script type="application/json" id="trace-data">${data}</script>
<script>${VIEWER_SCRIPT}</script>
</body>
</html>
`;
}
