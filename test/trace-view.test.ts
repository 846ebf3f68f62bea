/**
 * `cordon trace view` end to end: a real chain is traced (including a message Cordon drops and
 * prompt text a hostile proxy or agent could send), hostile lines are added, the HTML is written
 * by the CLI and opened in headless Chromium (Debian's `chromium` package, driven by
 * playwright-core). Checked in the DOM: the lanes in chain order, one arrow per message, the
 * session filter, a message's JSON on click, that nothing from the trace ran or became markup;
 * and a screenshot of non-trivial size.
 *
 * Where no Chromium is installed (or CORDON_CHROMIUM names none), the browser test is skipped
 * and says so; the HTML is still generated and checked as text.
 */
import { execFile } from "node:child_process";
import { appendFileSync, existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { buildTraceModel } from "../runtime/trace-view/model.js";
import { CORDON, NODE, REFERENCE_AGENT, ROOT } from "./helpers/paths.js";
import { RawClient } from "./helpers/raw-client.js";

const exec = promisify(execFile);
const CHROMIUM = process.env.CORDON_CHROMIUM ?? "/usr/bin/chromium";
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
const HOSTILE = `</script><script>window.__pwned=1</script><img src=x onerror="window.__pwned=2"><b>bold</b>`;

async function playwright(): Promise<typeof import("playwright-core") | null> {
  try {
    return await import("playwright-core");
  } catch {
    return null;
  }
}

const browserMissing = !existsSync(CHROMIUM)
  ? `no Chromium at ${CHROMIUM} (install Debian's chromium package, or set CORDON_CHROMIUM)`
  : (await playwright()) === null
    ? "playwright-core is not installed (npm ci)"
    : null;
if (browserMissing) console.warn(`SKIPPED trace viewer browser test: ${browserMissing}`);

let dir: string;
let tracePath: string;
let htmlPath: string;
let traceText: string;
let demoPath: string;
let demoHtml: string;
let demoText: string;
const DEMO_CHAIN = join(ROOT, "examples", "demo-chain.json");

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "cordon-trace-view-"));
  tracePath = join(dir, "trace.jsonl");
  // A real chain, the demo's: five proxies, the bridge, the reference agent (8 lanes); two
  // sessions; a dropped message.
  const client = new RawClient(NODE, [CORDON, "run", "--trace", tracePath, "--config", DEMO_CHAIN, "--", ...REFERENCE_AGENT]);
  try {
    expect((await client.request("initialize", { protocolVersion: 1, clientCapabilities: {} })).result).toBeDefined();
    const s1 = (await client.request("session/new", { cwd: ROOT, mcpServers: [] })).result.sessionId as string;
    const s2 = (await client.request("session/new", { cwd: ROOT, mcpServers: [] })).result.sessionId as string;
    await client.request("session/prompt", { sessionId: s1, prompt: [{ type: "text", text: `hello ${HOSTILE}` }] });
    await client.request("session/prompt", { sessionId: s2, prompt: [{ type: "text", text: "think about it" }] });
    client.send({ jsonrpc: "2.0", id: 4242, result: { stray: HOSTILE } }); // an answer to nothing: Cordon drops it
    await client.request("session/prompt", { sessionId: s1, prompt: [{ type: "text", text: "bye" }] });
  } finally {
    await client.close();
  }
  // The demo's trace as it was, plus two long labels: one on the leftmost hop, next to the time column.
  demoText = readFileSync(tracePath, "utf8");
  const long = (from: string, to: string, id: number, past?: string[]) =>
    JSON.stringify({
      ts: 8,
      type: "request",
      protocol: "acp",
      from,
      to,
      id,
      method: `_long/${"m".repeat(120)}`,
      session: null,
      params: {},
      past,
    });
  const between = ["context", "redact", "tool-guard", "workspace-tools", "arrow", "mcp-bridge"];
  demoText += `${long("client", "context", 990)}\n${long("agent", "client", 991, between)}\n`;
  demoPath = join(dir, "demo.jsonl");
  writeFileSync(demoPath, demoText);
  demoHtml = join(dir, "demo.html");
  await exec(NODE, [CORDON, "trace", "view", demoPath, "-o", demoHtml]);
  // What a hostile component could make Cordon write: markup in names, methods, ids and messages.
  appendFileSync(
    tracePath,
    [
      { ts: 9, type: "notification", protocol: "acp", from: "agent", to: HOSTILE, method: HOSTILE, session: null, params: { x: HOSTILE } },
      { ts: 9, type: "request", protocol: "acp", from: HOSTILE, to: "agent", id: HOSTILE, method: "_x/y", session: HOSTILE, params: {} },
      { ts: 9, type: "trace", component: HOSTILE, level: "warn", message: HOSTILE },
    ]
      .map((e) => JSON.stringify(e) + "\n")
      .join(""),
  );
  traceText = readFileSync(tracePath, "utf8");
  htmlPath = join(dir, "trace.html");
  const { stderr } = await exec(NODE, [CORDON, "trace", "view", tracePath, "-o", htmlPath]);
  expect(stderr).toMatch(/wrote .*trace\.html \(\d+ messages, \d+ participants/);
}, 60_000);

/** What the page must show, computed from the trace file directly (not through the viewer's model). */
function expected() {
  const events = traceText
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const arrows = events.filter((e) => e.type !== "trace" || "dropped" in e).length;
  const participants = new Set<string>();
  for (const e of events) {
    if (e.type === "trace") participants.add(e.component as string);
    else {
      participants.add(e.from as string);
      participants.add(e.to as string);
    }
  }
  return { events, arrows, participants };
}

describe("cordon trace view", () => {
  it("writes one self-contained file: no external resources, the trace's markup inert", () => {
    const html = readFileSync(htmlPath, "utf8");
    expect(statSync(htmlPath).mode & 0o777).toBe(0o600);
    expect(html.match(/<script\b/gi)).toHaveLength(2);
    expect(html).not.toMatch(/<img|<b>/);
    const page = html.replace(/<script type="application\/json" id="trace-data">[\s\S]*?<\/script>/, "");
    expect(page).not.toMatch(/\b(src|href)=/);
    const { events } = expected();
    expect(events.some((e) => e.type === "trace" && "dropped" in e)).toBe(true);
  });

  it("names proxy:N lanes after the chain config's proxies with --config", async () => {
    const trace = join(dir, "positional.jsonl");
    const config = join(dir, "chain.json");
    const event = (from: string, to: string) =>
      JSON.stringify({ ts: 0, type: "request", protocol: "acp", from, to, id: 1, method: "initialize", session: null, params: {} });
    appendFileSync(trace, [event("client", "proxy:0"), event("proxy:0", "proxy:1"), event("proxy:1", "agent")].join("\n") + "\n");
    appendFileSync(config, JSON.stringify({ proxies: [{ name: "rules", wasm: "a.wasm" }, { wasm: "dir/arrow.wasm" }] }));
    await exec(NODE, [CORDON, "trace", "view", trace, "--config", config]);
    const html = readFileSync(join(dir, "positional.html"), "utf8");
    const data = JSON.parse(/<script type="application\/json" id="trace-data">([\s\S]*?)<\/script>/.exec(html)![1]);
    expect(data.lanes.map((l: { name: string }) => l.name)).toEqual(["client", "rules", "arrow", "agent"]);
  });

  it.skipIf(browserMissing !== null)(
    `renders in headless Chromium: lanes, one arrow per message, session filter, JSON on click, nothing injected runs${browserMissing ? ` — SKIPPED: ${browserMissing}` : ""}`,
    async () => {
      const { chromium } = (await playwright())!;
      const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
      try {
        const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
        const dialogs: string[] = [];
        const errors: string[] = [];
        const requests: string[] = [];
        page.on("dialog", (d) => (dialogs.push(d.message()), void d.dismiss()));
        page.on("pageerror", (e) => errors.push(e.message));
        page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
        page.on("request", (r) => requests.push(r.url()));
        await page.goto(`file://${htmlPath}`);
        await page.waitForSelector("body[data-ready='1']", { timeout: 10_000 });

        const { arrows, participants, events } = expected();
        const lanes = await page.locator(".lane-head").allTextContents();
        expect(new Set(lanes)).toEqual(participants);
        expect(lanes[0]).toBe("client");
        // Proxies appear by configured name, or as proxy:N in traces that do not name them.
        const [first, second] = participants.has("context") ? ["context", "arrow"] : ["proxy:0", "proxy:1"];
        expect(lanes.indexOf(first)).toBeGreaterThan(0);
        expect(lanes.indexOf(first)).toBeLessThan(lanes.indexOf(second));
        expect(lanes.indexOf(second)).toBeLessThan(lanes.indexOf("mcp-bridge"));
        expect(lanes.indexOf("mcp-bridge")).toBeLessThan(lanes.indexOf("agent"));
        expect(await page.locator("svg#diagram g.arrow").count()).toBe(arrows);
        expect(await page.locator("svg#diagram g.arrow.kind-dropped").count()).toBe(
          events.filter((e) => e.type === "trace" && "dropped" in e).length,
        );
        expect(await page.locator("svg#diagram g.arrow.kind-request").count()).toBe(events.filter((e) => e.type === "request").length);
        expect(await page.locator("svg#diagram g.note").count()).toBe(events.filter((e) => e.type === "trace" && !("dropped" in e)).length);
        // Colour by kind: a request and a response are drawn in different colours.
        const stroke = (kind: string) =>
          page
            .locator(`g.arrow.kind-${kind} line:not(.hit)`)
            .first()
            .evaluate((l) => getComputedStyle(l).stroke);
        expect(await stroke("request")).not.toBe(await stroke("response"));

        // The JSON of a message on click: the prompt with the hostile text, shown as text.
        const prompt = page.locator("svg#diagram g.arrow.kind-request", { hasText: "session/prompt" }).first();
        await prompt.click();
        const shown = JSON.parse((await page.locator("#detail-body").textContent())!);
        expect(shown.method).toBe("session/prompt");
        expect(shown.params.prompt[0].text).toBe(`hello ${HOSTILE}`);
        const seq = Number(await prompt.getAttribute("data-seq"));
        expect(shown).toEqual(events[seq]);

        // And from the keyboard: focus the next arrow, press Enter.
        const next = page.locator("svg#diagram g.arrow").nth(seq + 1);
        await next.focus();
        await page.keyboard.press("Enter");
        expect(JSON.parse((await page.locator("#detail-body").textContent())!)).toEqual(
          events[Number(await next.getAttribute("data-seq"))],
        );

        // The session filter: one session's messages only.
        const model = buildTraceModel(traceText);
        const options = await page.locator("#session-filter option").allTextContents();
        expect(options.length).toBe(model.sessions.length + 2);
        await page.selectOption("#session-filter", "0");
        const inSession = model.messages.filter((m) => m.session === model.sessions[0]);
        expect(await page.locator("svg#diagram g.arrow").count()).toBe(inSession.filter((m) => m.kind !== "log").length);
        expect(inSession.length).toBeGreaterThan(0);
        expect(inSession.length).toBeLessThan(model.messages.length);
        await page.selectOption("#session-filter", "*");
        expect(await page.locator("svg#diagram g.arrow").count()).toBe(arrows);

        // A long trace is drawn a page at a time (here 10 messages a page).
        const paged = join(dir, "paged.html");
        await exec(NODE, [CORDON, "trace", "view", tracePath, "-o", paged, "--page-size", "10"]);
        const pagedView = await browser.newPage();
        await pagedView.goto(`file://${paged}`);
        await pagedView.waitForSelector("body[data-ready='1']", { timeout: 10_000 });
        const drawn = () => pagedView.locator("svg#diagram g.arrow, svg#diagram g.note").count();
        expect(await drawn()).toBe(10);
        expect(await pagedView.locator("#prev").isDisabled()).toBe(true);
        let total = 10;
        while (!(await pagedView.locator("#next").isDisabled())) {
          await pagedView.click("#next");
          total += await drawn();
        }
        expect(total).toBe(model.messages.length);
        expect(await pagedView.locator("#shown").textContent()).toMatch(new RegExp(`of ${model.messages.length}$`));
        await pagedView.close();

        // Nothing from the trace became markup or ran; nothing was fetched; no dialogs.
        expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
        expect(await page.locator("img, b, iframe, object, embed").count()).toBe(0);
        expect(await page.locator("script").count()).toBe(2);
        expect(lanes).toContain(HOSTILE);
        expect(dialogs).toEqual([]);
        expect(errors).toEqual([]);
        expect(requests.filter((u) => !u.startsWith("file://"))).toEqual([]);

        const png = join(dir, "trace.png");
        await page.screenshot({ path: png, fullPage: true });
        const bytes = readFileSync(png);
        expect(bytes.subarray(1, 4).toString()).toBe("PNG");
        expect(bytes.length).toBeGreaterThan(20_000);
      } finally {
        await browser.close();
      }
    },
    60_000,
  );

  it.skipIf(browserMissing !== null)(
    `draws the demo's 8 lanes within 1400 px, rings where an arrow was routed past a proxy, labels clear of the time column and whole when selected, filters by method and kind${browserMissing ? ` — SKIPPED: ${browserMissing}` : ""}`,
    async () => {
      const { chromium } = (await playwright())!;
      const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
      try {
        const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
        const errors: string[] = [];
        page.on("pageerror", (e) => errors.push(e.message));
        await page.goto(`file://${demoHtml}`);
        await page.waitForSelector("body[data-ready='1']", { timeout: 10_000 });
        const events = demoText
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l) as Record<string, unknown>);
        const model = buildTraceModel(demoText);
        type Box = { x: number; y: number; width: number; height: number };
        const box = async (selector: string): Promise<Box> => (await page.locator(selector).first().boundingBox())!;
        const boxes = (selector: string): Promise<Box[]> =>
          page.locator(selector).evaluateAll((nodes) =>
            nodes.map((n) => {
              const r = n.getBoundingClientRect();
              return { x: r.x, y: r.y, width: r.width, height: r.height };
            }),
          );

        // All 8 lanes in view without scrolling, side by side.
        const heads = await boxes(".lane-head");
        expect(heads).toHaveLength(8);
        const wrap = await box("#diagram-wrap");
        for (const h of heads) {
          expect(h.x).toBeGreaterThanOrEqual(wrap.x);
          expect(h.x + h.width).toBeLessThanOrEqual(wrap.x + wrap.width);
        }
        for (let i = 1; i < heads.length; i++) expect(heads[i].x).toBeGreaterThanOrEqual(heads[i - 1].x + heads[i - 1].width);
        expect(await page.locator("#diagram-wrap").evaluate((w) => w.scrollWidth <= w.clientWidth)).toBe(true);

        // Routed past: one arrow per event that records it, a ring on each lane it crossed unseen,
        // and none on arrows delivered hop to hop.
        const routed = events.filter((e) => Array.isArray(e.past) && (e.past as unknown[]).length > 0);
        expect(routed.length).toBeGreaterThan(0);
        expect(routed.some((e) => (e.past as string[]).includes("redact"))).toBe(true);
        expect(await page.locator("svg#diagram g.arrow.routed-past").count()).toBe(routed.length);
        expect(await page.locator("svg#diagram g.arrow:not(.routed-past) .past-mark").count()).toBe(0);
        const headCentre = new Map(
          (await page.locator(".lane-head").allTextContents()).map((name, i) => [name, heads[i].x + heads[i].width / 2]),
        );
        for (const g of await page.locator("svg#diagram g.arrow.routed-past").all()) {
          const past = (events[Number(await g.getAttribute("data-seq"))].past as string[]).filter((p) => headCentre.has(p));
          const rings = await g.locator(".past-mark").evaluateAll((nodes) =>
            nodes.map((n) => {
              const r = n.getBoundingClientRect();
              return { x: r.x + r.width / 2, fill: getComputedStyle(n).fill, stroke: getComputedStyle(n).stroke };
            }),
          );
          expect(rings.map((r) => Math.round(r.x))).toEqual(past.map((p) => Math.round(headCentre.get(p)!)));
          for (const r of rings) {
            expect(r.fill).toBe("rgb(255, 255, 255)"); // hollow: looks unlike a delivery, which ends in a filled head
            expect(r.stroke).not.toBe("none");
          }
        }

        // Labels: never into the time column, never past the diagram's edge.
        const timeRight = Math.max(...(await boxes("svg#diagram text.ts")).map((b) => b.x + b.width));
        const diagram = await box("svg#diagram");
        const labels = await boxes("svg#diagram g.arrow > text, svg#diagram g.note > text");
        expect(labels.length).toBe(model.messages.length);
        for (const l of labels) {
          expect(l.x).toBeGreaterThanOrEqual(timeRight);
          expect(l.x + l.width).toBeLessThanOrEqual(diagram.x + diagram.width + 0.5);
        }
        // A long label, selected: drawn whole (bold), still clear of the time column and inside the diagram.
        for (const id of [990, 991]) {
          const m = model.messages.find((x) => x.id === id)!;
          const g = page.locator(`svg#diagram g.arrow[data-seq="${m.seq}"]`);
          await g.click();
          expect(await g.locator("> text").textContent()).toBe(m.label);
          const l = (await g.locator("> text").boundingBox())!;
          const d = (await page.locator("svg#diagram").boundingBox())!;
          expect(l.x).toBeGreaterThanOrEqual(timeRight);
          expect(l.x + l.width).toBeLessThanOrEqual(d.x + d.width + 0.5);
        }

        // Filters: by method, by kind, and both with the session filter.
        const arrows = () => page.locator("svg#diagram g.arrow, svg#diagram g.note").count();
        const methodOptions = await page.locator("#method-filter option").allTextContents();
        const promptIndex = methodOptions.findIndex((o) => o.startsWith("session/prompt ")) - 1;
        expect(promptIndex).toBeGreaterThanOrEqual(0);
        await page.selectOption("#method-filter", String(promptIndex));
        const prompts = model.messages.filter((m) => m.method === "session/prompt");
        expect(await arrows()).toBe(prompts.length);
        expect(prompts.some((m) => m.kind === "response")).toBe(true); // answers count under their request's method
        await page.selectOption("#method-filter", "*");
        await page.selectOption("#kind-filter", "request");
        expect(await arrows()).toBe(events.filter((e) => e.type === "request").length);
        await page.selectOption("#session-filter", "0");
        expect(await arrows()).toBe(model.messages.filter((m) => m.kind === "request" && m.session === model.sessions[0]).length);
        await page.selectOption("#kind-filter", "*");
        await page.selectOption("#session-filter", "*");
        expect(await arrows()).toBe(model.messages.length);

        const png = join(dir, "demo.png");
        await page.screenshot({ path: png });
        expect(readFileSync(png).subarray(1, 4).toString()).toBe("PNG");
        expect(errors).toEqual([]);
      } finally {
        await browser.close();
      }
    },
    60_000,
  );
});
