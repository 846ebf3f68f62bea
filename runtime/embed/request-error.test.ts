import { RequestError as SdkRequestError } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { errorAnswer, RequestError } from "./request-error.js";

describe("RequestError", () => {
  it("has a constructor per ACP code, each answered with its code, message and data", () => {
    expect(
      [
        RequestError.parseError(),
        RequestError.invalidRequest(),
        RequestError.methodNotFound("_x/y"),
        RequestError.invalidParams({ field: "path" }, "path must be absolute"),
        RequestError.internalError(),
        RequestError.requestCancelled(),
        RequestError.authRequired(),
        RequestError.resourceNotFound("/w/new.txt"),
      ].map(errorAnswer),
    ).toEqual([
      { code: -32700, message: "Parse error" },
      { code: -32600, message: "Invalid request" },
      { code: -32601, message: "Method not found: _x/y", data: { method: "_x/y" } },
      { code: -32602, message: "Invalid params: path must be absolute", data: { field: "path" } },
      { code: -32603, message: "Internal error" },
      { code: -32800, message: "Request cancelled" },
      { code: -32000, message: "Authentication required" },
      { code: -32002, message: "Resource not found: /w/new.txt", data: { uri: "/w/new.txt" } },
    ]);
    expect(new RequestError(-32042, "custom", [1])).toMatchObject({ name: "RequestError", code: -32042, data: [1] });
  });

  it("answers the ACP SDK's RequestError alike, and anything else -32603 with its message", () => {
    expect(errorAnswer(SdkRequestError.resourceNotFound("/a"))).toEqual({
      code: -32002,
      message: "Resource not found: /a",
      data: { uri: "/a" },
    });
    // Node's string codes are not JSON-RPC codes.
    expect(errorAnswer(Object.assign(new Error("EACCES: permission denied"), { code: "EACCES" }))).toEqual({
      code: -32603,
      message: "EACCES: permission denied",
    });
    expect(errorAnswer("a string")).toEqual({ code: -32603, message: "a string" });
  });
});
