/**
 * @cordon/sdk-as/testing — unit-test a built proxy with Cordon's own loader and host.
 *
 *   import { ProxyUnderTest, agentUpdate, clientUpdate, textChunk } from "@cordon/sdk-as/testing";
 *   const p = await ProxyUnderTest.start("dist/arrow.wasm", {});
 *   assert.deepEqual(p.deliver(agentUpdate(textChunk("hi"))), [clientUpdate(textChunk("> hi"))]);
 *
 * Golden transcripts (`runTranscriptFile`, `cordon test proxy.wasm t.jsonl`): see transcript.ts.
 */

export * from "./mcp.js";
export * from "./messages.js";
export * from "./proxy-under-test.js";
export * from "./subagent.js";
export { parseTranscript, runTranscript, runTranscriptFile, type TranscriptFailure, type TranscriptResult } from "./transcript.js";
