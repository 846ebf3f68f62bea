import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { buildTraceModel } from "./model.js";
import { escapeHtml, jsonForHtml, renderTraceHtml } from "./render.js";
import { VIEWER_CSS, VIEWER_SCRIPT } from "./viewer-assets.js";

const HOSTILE = `</script><script>alert(1)</script><!-- <img src=x onerror=alert(2)> & \u2028 "quoted" 'single'`;

describe("trace viewer HTML", () => {
  it("embeds trace content so that no string can leave the data block", () => {
    const text = [
      JSON.stringify({
        ts: 0,
        type: "request",
        protocol: "acp",
        from: "client",
        to: HOSTILE,
        id: 1,
        method: HOSTILE,
        session: HOSTILE,
        params: { text: HOSTILE },
      }),
      JSON.stringify({ ts: 0, type: "trace", component: HOSTILE, level: "warn", message: HOSTILE, dropped: { method: HOSTILE } }),
    ].join("\n");
    const html = renderTraceHtml(buildTraceModel(text), { title: HOSTILE });
    // Exactly the page's own two script blocks; the data block holds no markup characters at all.
    expect(html.match(/<script\b/gi)).toHaveLength(2);
    expect(html.match(/<\/script>/gi)).toHaveLength(2);
    const data = /<script type="application\/json" id="trace-data">([\s\S]*?)<\/script>/.exec(html)![1];
    expect(data).not.toMatch(/[<>&\u2028\u2029]/);
    expect(JSON.parse(data).messages[0].event.params.text).toBe(HOSTILE);
    expect(html).not.toContain("<img");
    expect(html).toContain(`<title>${escapeHtml(HOSTILE)}</title>`);
  });

  it("allows only its own stylesheet and script, by hash, and nothing from the network", () => {
    const html = renderTraceHtml(buildTraceModel(""), { title: "t" });
    const csp = /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(html)![1].replace(/&#39;/g, "'");
    const hash = (s: string) => `'sha256-${createHash("sha256").update(s).digest("base64")}'`;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain(`script-src ${hash(VIEWER_SCRIPT)}`);
    expect(csp).toContain(`style-src ${hash(VIEWER_CSS)}`);
    expect(html).toContain(`<script>${VIEWER_SCRIPT}</script>`);
    expect(html).not.toMatch(/\b(src|href)=/);
    // The viewer never parses markup.
    expect(VIEWER_SCRIPT).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/);
  });

  it("escapes for HTML and for JSON in HTML", () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe("&#60;a href=&#34;x&#34;&#62;&#39;&#38;&#39;&#60;/a&#62;");
    expect(jsonForHtml({ s: "</script>\u2028&" })).toBe('{"s":"\\u003c/script\\u003e\\u2028\\u0026"}');
    expect(JSON.parse(jsonForHtml({ s: "</script>\u2028&" }))).toEqual({ s: "</script>\u2028&" });
  });
});
