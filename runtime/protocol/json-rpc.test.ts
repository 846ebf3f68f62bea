/** `classify`: what the router takes a parsed value for, whichever way the line was read. */
import { describe, expect, it } from "vitest";
import { classify, MAX_METHOD_LENGTH } from "./json-rpc.js";
import { parseLine } from "./parse-line.js";
import { UnreadNotification } from "./raw-json.js";

const update = (method: string) => `{"jsonrpc":"2.0","method":"${method}","params":{"sessionId":"s","update":{"sessionUpdate":"plan"}}}`;

describe("classify", () => {
  it("sorts requests, notifications and responses, and says why anything else is none", () => {
    expect(classify({ jsonrpc: "2.0", id: 1, method: "m" }).kind).toBe("request");
    expect(classify({ jsonrpc: "2.0", method: "m" }).kind).toBe("notification");
    expect(classify({ jsonrpc: "2.0", id: 1, result: null }).kind).toBe("response");
    expect(classify([])).toMatchObject({ kind: "invalid", reason: "batches are not supported" });
    expect(classify({ jsonrpc: "1.0", method: "m" })).toMatchObject({ kind: "invalid", reason: 'missing "jsonrpc": "2.0"' });
    expect(classify({ jsonrpc: "2.0", id: {}, method: "m" })).toMatchObject({
      kind: "invalid",
      reason: "request id must be a string or a number",
    });
  });

  // The router takes a notification read with unread params by its class, not by reading its members.
  it("takes an update read with its params unread for the notification it is, params unread", () => {
    const message = parseLine(update("session/update"));
    expect(message).toBeInstanceOf(UnreadNotification);
    expect(classify(message)).toEqual({ kind: "notification", message });
  });

  it("refuses such an update whose method is longer than the limit, as any other message", () => {
    const long = "x".repeat(MAX_METHOD_LENGTH + 1);
    const message = parseLine(update(long));
    expect(message).toBeInstanceOf(UnreadNotification);
    expect(classify(message)).toMatchObject({ kind: "invalid", reason: `method longer than ${MAX_METHOD_LENGTH} characters` });
    expect(classify(parseLine(update("x".repeat(MAX_METHOD_LENGTH)))).kind).toBe("notification");
  });
});
