/**
 * `_cordon/forward`: offered by the host in `_cordon/configure`, the SDK hands on a message it
 * leaves as it came with the marker instead of writing it out (components/unchanged-forward.ts
 * routes what it was delivered). Anything edited, renamed, held past its `receive`, or read from a
 * text the names pass rewrote still goes written out; without the offer nothing changes.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { LoadedComponent } from "../../runtime/sandbox/component-loader.js";
import { INIT_PARAMS, INIT_RESULT, loadExampleProxy, loadFixture, ProxyUnderTest } from "./harness.js";

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const MARK = (id?: number) => `{"jsonrpc":"2.0"${id === undefined ? "" : `,"id":${id}`},"method":"_cordon/forward"}`;
const envelope = (inner: Json) => ({ jsonrpc: "2.0", method: "proxy/successor", params: inner });
const chunk = (text: string) =>
  envelope({
    method: "session/update",
    params: { sessionId: "s1", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } } },
  });

let passthrough: LoadedComponent;
let hooks: LoadedComponent;
beforeAll(async () => {
  [passthrough, hooks] = await Promise.all([loadExampleProxy("passthrough"), loadFixture("hooks")]);
});

/** A proxy configured as the host configures it, with or without the offer, and initialized. */
function started(component: LoadedComponent, offered: boolean): ProxyUnderTest {
  const p = new ProxyUnderTest(component);
  p.deliver({ jsonrpc: "2.0", method: "_cordon/configure", params: { name: "p", config: {}, ...(offered ? { forward: true } : {}) } });
  const [init] = p.deliver({ jsonrpc: "2.0", id: 1, method: "proxy/initialize", params: INIT_PARAMS });
  p.deliver({ jsonrpc: "2.0", id: init.id, result: INIT_RESULT });
  return p;
}

describe("_cordon/forward", () => {
  it("hands on an agent's update, a client's request and the answer to it with the marker, under the proxy's ids", () => {
    const p = started(passthrough, true);
    expect(p.deliverRaw(chunk("hello"))).toEqual([MARK()]);
    const [forwarded] = p.deliverRaw({ jsonrpc: "2.0", id: 7, method: "session/prompt", params: { sessionId: "s1", prompt: [] } });
    const id = Number(/"id":(\d+)/.exec(forwarded)![1]);
    expect(forwarded).toBe(MARK(id));
    // The answer goes back to the asker under the asker's id (7).
    expect(p.deliverRaw({ jsonrpc: "2.0", id, result: { stopReason: "end_turn" } })).toEqual([MARK(7)]);
    // An error answer too, and a request from the agent's side.
    const [again] = p.deliverRaw({ jsonrpc: "2.0", id: 8, method: "session/prompt", params: { sessionId: "s1", prompt: [] } });
    const id2 = Number(/"id":(\d+)/.exec(again)![1]);
    expect(p.deliverRaw({ jsonrpc: "2.0", id: id2, error: { code: -32000, message: "no" } })).toEqual([MARK(8)]);
    const [asked] = p.deliverRaw({ ...envelope({ method: "fs/read_text_file", params: { sessionId: "s1", path: "/p" } }), id: 90 });
    expect(asked).toMatch(/^\{"jsonrpc":"2\.0","id":\d+,"method":"_cordon\/forward"\}$/);
  });

  it("writes everything out as before when the host does not offer it", () => {
    const p = started(passthrough, false);
    const update = chunk("hello");
    expect(p.deliverRaw(update)).toEqual([JSON.stringify(update.params).replace('{"method"', '{"jsonrpc":"2.0","method"')]);
  });

  it("writes out what a hook edited, and what a hook does not change goes as the marker", () => {
    const p = started(hooks, true);
    const [edited] = p.deliver(chunk("twice"));
    expect(edited.params.update.content.text).toBe("one+two");
    const [renamed] = p.deliver(
      envelope({
        method: "session/update",
        params: { sessionId: "s1", update: { sessionUpdate: "tool_call", toolCallId: "t", title: "rename me" } },
      }),
    );
    expect(renamed.params.update.title).toBe("renamed");
    expect(p.deliverRaw(chunk("untouched"))).toEqual([MARK()]);
    // An answer a hook edited (the fixture marks every session/new result) is written out too.
    const [asked] = p.deliver({ jsonrpc: "2.0", id: 3, method: "session/new", params: { cwd: "/w", mcpServers: [] } });
    const [answer] = p.deliver({ jsonrpc: "2.0", id: asked.id, result: { sessionId: "s9" } });
    expect(answer).toEqual({ jsonrpc: "2.0", id: 3, result: { sessionId: "s9", fixture: "seen" } });
  });

  it("hands a message on by the marker once per receive: forwarded twice, the second copy is written out", () => {
    const p = started(hooks, true);
    const note = { jsonrpc: "2.0", method: "_test/echo-twice", params: { n: 1 } };
    expect(p.deliverRaw(note)).toEqual([MARK(), JSON.stringify(envelope({ method: note.method, params: note.params }))]);
  });

  it("writes out a message whose names the SDK brought to one spelling (the marker would hand on the escapes)", () => {
    const p = started(passthrough, true);
    const escaped =
      '{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","c\\u006fntent":{"type":"text","text":"x"}}}}}';
    const [out] = p.deliverRaw(escaped);
    expect(out).toContain('"content":');
    expect(out).not.toContain("_cordon/forward");
  });
});

/**
 * `_cordon/forward` with an edit: offered too (`forwardEdit`), a message whose one change is a
 * single value put in place (a block before the prompt, a chunk's text replaced) goes as the edit
 * alone (components/edited-forward.ts puts it in the delivered text). Applied to what was
 * delivered, the edit gives byte for byte what the SDK writes out without the offer.
 */
describe("_cordon/forward with an edit", () => {
  const offer = (edits: boolean) => ({ forward: true, ...(edits ? { forwardEdit: true } : {}) });
  function configured(component: LoadedComponent, config: Json, edits: boolean): ProxyUnderTest {
    const p = new ProxyUnderTest(component);
    p.deliver({ jsonrpc: "2.0", method: "_cordon/configure", params: { name: "p", config, ...offer(edits) } });
    const [init] = p.deliver({ jsonrpc: "2.0", id: 1, method: "proxy/initialize", params: INIT_PARAMS });
    p.deliver({ jsonrpc: "2.0", id: init.id, result: INIT_RESULT });
    return p;
  }
  /** The delivered params text with the marker's edit put in (the comma as the host puts it). */
  function applied(params: string, marker: string): string {
    const m = /^\{"jsonrpc":"2\.0"(?:,"id":\d+)?,"method":"_cordon\/forward","params":\{"at":(\d+),"end":(\d+),"value":(.*)\}\}$/.exec(
      marker,
    );
    expect(m).not.toBeNull();
    const [at, end, value] = [Number(m![1]), Number(m![2]), m![3]];
    const before = params.slice(0, at).trimEnd();
    const insert =
      at !== end ? value : before.endsWith("[") ? (params.slice(at).trimStart().startsWith("]") ? value : `${value},`) : `,${value}`;
    return params.slice(0, at) + insert + params.slice(end);
  }
  /** The params text of a message the SDK wrote out (an envelope's inner params for one sent to the agent). */
  const paramsOf = (text: string) => JSON.stringify(JSON.parse(text).params.params ?? JSON.parse(text).params);

  it("hands a block put before the prompt back as the edit alone; applied, it is what is written out without the offer", async () => {
    const context = await loadExampleProxy("context");
    const prompt = {
      jsonrpc: "2.0",
      id: 7,
      method: "session/prompt",
      params: { sessionId: "s1", prompt: [{ type: "text", text: 'a "quoted" prompt' }] },
    };
    const [marker] = configured(context, { text: "Rules." }, true).deliverRaw(prompt);
    expect(marker).toMatch(
      /^\{"jsonrpc":"2\.0","id":\d+,"method":"_cordon\/forward","params":\{"at":28,"end":28,"value":\{"type":"text","text":"Rules\."\}\}\}$/,
    );
    const [written] = configured(context, { text: "Rules." }, false).deliverRaw(prompt);
    expect(written).not.toContain("_cordon/forward");
    expect(applied(JSON.stringify(prompt.params), marker)).toBe(paramsOf(written));
    // An empty prompt: the block is its only element.
    const empty = { ...prompt, params: { sessionId: "s1", prompt: [] } };
    const [alone] = configured(context, { text: "Rules." }, true).deliverRaw(empty);
    expect(applied(JSON.stringify(empty.params), alone)).toBe(
      paramsOf(configured(context, { text: "Rules." }, false).deliverRaw(empty)[0]),
    );
  });

  it("hands a replaced chunk text back as the edit alone; a second edit, made on the parsed message, is written out", async () => {
    const redact = await loadExampleProxy("redact");
    const update = chunk("my key is sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z and that is all.");
    const [marker] = configured(redact, {}, true).deliverRaw(update);
    expect(marker).toContain('"method":"_cordon/forward","params":{"at":');
    const [written] = configured(redact, {}, false).deliverRaw(update);
    expect(applied(JSON.stringify(update.params.params), marker)).toBe(paramsOf(written));
    const p = configured(hooks, {}, true);
    const [edited] = p.deliverRaw(chunk("twice"));
    expect(edited).not.toContain("_cordon/forward");
    expect(JSON.parse(edited).params.update.content.text).toBe("one+two");
  });

  it("writes the edited message out when only the plain marker is offered", async () => {
    const context = await loadExampleProxy("context");
    const prompt = { jsonrpc: "2.0", id: 7, method: "session/prompt", params: { sessionId: "s1", prompt: [] } };
    const [written] = configured(context, { text: "Rules." }, false).deliverRaw(prompt);
    expect(JSON.parse(written).params.params.prompt).toEqual([{ type: "text", text: "Rules." }]);
  });
});

/**
 * A request whose answer passes the proxy: with `answers` in `_cordon/configure` (the manifest's
 * `watches.answers`), a request of a method left out is handed on with `"pass":true` and the SDK
 * keeps nothing for it — the host hands it on under an id of its own and routes the answer and any
 * cancellation past the guest (components/interest-filter.ts). Only a marker can say so (it names
 * the request the host holds); what the SDK needs itself never passes.
 */
describe("_cordon/forward for a request whose answer passes the proxy", () => {
  const PASS = (id: number) => `{"jsonrpc":"2.0","id":${id},"method":"_cordon/forward","params":{"pass":true}}`;
  const prompt = (id: number | string, text = "hi") => ({
    jsonrpc: "2.0",
    id,
    method: "session/prompt",
    params: { sessionId: "s1", prompt: [{ type: "text", text }] },
  });
  function offered(component: LoadedComponent, answers: string[] | undefined, config: Json = {}): ProxyUnderTest {
    const p = new ProxyUnderTest(component);
    const offer = { forward: true, forwardEdit: true, ...(answers ? { answers } : {}) };
    p.deliver({ jsonrpc: "2.0", method: "_cordon/configure", params: { name: "p", config, ...offer } });
    const [init] = p.deliverRaw({ jsonrpc: "2.0", id: 1, method: "proxy/initialize", params: INIT_PARAMS });
    expect(init).not.toContain('"pass"'); // initialize's answer is the SDK's to read, whatever the manifest says
    const id = JSON.parse(init).id;
    expect(p.deliver({ jsonrpc: "2.0", id, result: INIT_RESULT })).toHaveLength(1); // relayed by the proxy
    return p;
  }
  const idOf = (marker: string) => Number(/"id":(\d+)/.exec(marker)![1]);

  it("hands on a request whose answers it does not watch with the pass marker, and keeps nothing for it", () => {
    const p = offered(hooks, []);
    const [out] = p.deliverRaw(prompt(7));
    expect(out).toBe(PASS(idOf(out)));
    // Nothing waits for its answer or its cancellation here: the host routes both past the guest.
    expect(p.deliver({ jsonrpc: "2.0", id: idOf(out), result: { stopReason: "end_turn" } })).toEqual([]);
    expect(p.logs.at(-1)).toEqual({ level: "warn", message: `dropped a response to unknown request id ${idOf(out)}` });
    // A cancellation of a request it does not know is handed on as it came: it may name one handed
    // on with its answer passing while the cancel waited behind it (the host translates or drops it).
    expect(p.deliverRaw({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 7 } })).toEqual([MARK()]);
    const [stats] = p.deliver({ jsonrpc: "2.0", id: 8, method: "_test/stats", params: {} });
    expect(stats.result).toEqual({ pending: 0, open: 1 }); // open: the stats request itself
  });

  it("hands on an agent-side request the same way, and a cancellation from that side it does not know", () => {
    const p = offered(hooks, []);
    const read = envelope({ method: "fs/read_text_file", params: { sessionId: "s1", path: "/p" } });
    const [out] = p.deliverRaw({ ...read, id: 90 });
    expect(out).toBe(PASS(idOf(out)));
    expect(p.deliverRaw(envelope({ method: "$/cancel_request", params: { requestId: 90 } }))).toEqual([MARK()]);
  });

  it("relays the answers it watches, and those the SDK reads itself, whatever the manifest leaves out", () => {
    const p = offered(hooks, ["session/new"]);
    // session/new is watched: its answer comes back, and the fixture's onResponse marks it.
    const [asked] = p.deliverRaw({ jsonrpc: "2.0", id: 3, method: "session/new", params: { cwd: "/w", mcpServers: [] } });
    expect(asked).toBe(MARK(idOf(asked)));
    expect(p.deliver({ jsonrpc: "2.0", id: idOf(asked), result: { sessionId: "s9" } })).toEqual([
      { jsonrpc: "2.0", id: 3, result: { sessionId: "s9", fixture: "seen" } },
    ]);
    // A session's end is the SDK's to see (it forgets what it keeps for the session).
    const [closed] = p.deliverRaw({ jsonrpc: "2.0", id: 4, method: "session/close", params: { sessionId: "s9" } });
    expect(closed).toBe(MARK(idOf(closed)));
    // Not watched: a prompt's answer passes.
    const [out] = p.deliverRaw(prompt(5));
    expect(out).toBe(PASS(idOf(out)));
  });

  it("relays every answer as before when the host offers no `answers` (filters off)", () => {
    const p = offered(hooks, undefined);
    const [out] = p.deliverRaw(prompt(7));
    expect(out).toBe(MARK(idOf(out)));
    expect(p.deliverRaw({ jsonrpc: "2.0", id: idOf(out), result: { stopReason: "end_turn" } })).toEqual([MARK(7)]);
    // A cancellation of a request it does not know is ignored, as before.
    expect(p.deliverRaw({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 99 } })).toEqual([]);
  });

  it("hands an edited request on with the edit marker's pass form; one edited on its parsed message goes written out and keeps its answer", async () => {
    const context = await loadExampleProxy("context");
    const [edit] = offered(context, [], { text: "Rules." }).deliverRaw(prompt(7));
    expect(edit).toMatch(
      /^\{"jsonrpc":"2\.0","id":\d+,"method":"_cordon\/forward","params":\{"pass":true,"at":28,"end":28,"value":\{"type":"text","text":"Rules\."\}\}\}$/,
    );
    // Two edits (the fixture's "append"): written out, so the host cannot tell which request it hands on.
    const p = offered(hooks, []);
    const [written] = p.deliver(prompt(9, "append"));
    expect(written.method).toBe("proxy/successor");
    expect(written.params.params.prompt).toHaveLength(3);
    expect(p.deliverRaw({ jsonrpc: "2.0", id: written.id, result: { stopReason: "end_turn" } })).toEqual([MARK(9)]);
  });
});
