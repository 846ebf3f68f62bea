import { describe, expect, it } from "vitest";
import { MAX_NESTING_DEPTH } from "../protocol/nesting.js";
import { attachRaw } from "../protocol/raw-json.js";
import { breachOf } from "./admission.js";

const deepText = (levels: number) => `{"jsonrpc":"2.0","method":"x","params":${"[".repeat(levels - 1)}${"]".repeat(levels - 1)}}`;
const parsed = (text: string) => attachRaw(JSON.parse(text) as object, text);

describe("admission: a proxy's output is scanned once for the nesting bound and I-JSON", () => {
  it("says which rule was broken: depth (no gate) or I-JSON (gate i-json, with the member)", () => {
    expect(breachOf(parsed(deepText(MAX_NESTING_DEPTH)), true)).toBeNull();
    expect(breachOf(parsed(deepText(MAX_NESTING_DEPTH + 1)), true)).toEqual({
      why: `nests deeper than ${MAX_NESTING_DEPTH} levels (Cordon's limit for any message)`,
    });
    const twice = breachOf(parsed('{"jsonrpc":"2.0","method":"fs/read_text_file","params":{"path":"a","path":"b"}}'), true);
    expect(twice?.gate).toBe("i-json");
    expect(twice?.why).toMatch(/^breaks I-JSON \(RFC 7493\): member "path" appears twice in params/);
  });

  it("the depth of a proxy's message is read from its text, in the I-JSON scan: the parsed value is not walked again", () => {
    // A value and a text that disagree (no real peer makes them) show which one was measured.
    const deepValue = JSON.parse(deepText(MAX_NESTING_DEPTH + 5)) as object;
    // The shallow text is long enough that the walk's shortcut (a text too short to nest that deep) would not apply.
    const shallow = `{"jsonrpc":"2.0","method":"x","params":{"pad":"${"x".repeat(4 * MAX_NESTING_DEPTH)}"}}`;
    expect(breachOf(attachRaw(deepValue, shallow), true)).toBeNull();
    expect(breachOf(attachRaw({ jsonrpc: "2.0", method: "x" }, deepText(MAX_NESTING_DEPTH + 5)), true)?.why).toMatch(/nests deeper/);
  });

  it("the client's and the agent's messages, and values without text, have only their depth measured", () => {
    const duplicate = '{"jsonrpc":"2.0","method":"x","params":{"a":1,"a":2}}';
    expect(breachOf(parsed(duplicate), false)).toBeNull();
    expect(breachOf(JSON.parse(deepText(MAX_NESTING_DEPTH + 1)), true)?.why).toMatch(/nests deeper/);
    expect(breachOf(JSON.parse(deepText(MAX_NESTING_DEPTH + 1)), false)?.why).toMatch(/nests deeper/);
    expect(breachOf("not an object", true)).toBeNull();
  });
});
