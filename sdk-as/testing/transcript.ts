/**
 * Golden transcripts: a proxy's conversation with its two neighbours, one JSON object per line
 * (`.jsonl`), replayed against the built proxy by `cordon test proxy.wasm transcript.jsonl`.
 *
 *   {"configure": {"text": "rules"}, "name": "context"}   the host's _cordon/configure (default: {} before the first step)
 *   {"initialize": true}                                   the initialize handshake (or {"initialize": <the agent's InitializeResponse>})
 *   {"from": "client", "message": {…}}                     deliver a message from the client side (plain JSON-RPC)
 *   {"from": "agent", "message": {…}}                      deliver one from the agent side: the inner message; the runner wraps it in proxy/successor
 *   {"to": "client", "message": {…}}                       the proxy's next message toward the client must be exactly this
 *   {"to": "agent", "message": {…}}                        its next message toward the agent (inner message, unwrapped)
 *   {"to": "answer", "message": {…}}                       its next answer to a request it received (`{"id", "result"|"error"}`)
 *   {"log": {"level": "warn", "message": "…"}}             its next `_cordon/log` line (a string message is a substring match)
 *   {"trap": "Key does not exist"}                         the last delivery trapped, with a failure text containing this
 *   {"comment": "…"}, blank lines                          ignored
 *
 * Expected and delivered messages may omit `"jsonrpc"`. A string `"$name"` anywhere in an expected
 * message binds to the value actually sent (later `"$name"`s must equal it, and a delivered message's
 * `"$name"` is replaced by it) — so a test can answer the request the proxy chose its own id for:
 *
 *   {"from": "client", "message": {"id": 1, "method": "session/prompt", "params": {…}}}
 *   {"to": "agent", "message": {"id": "$p", "method": "session/prompt", "params": {…}}}
 *   {"from": "agent", "message": {"id": "$p", "result": {"stopReason": "end_turn"}}}
 *   {"to": "answer", "message": {"id": 1, "result": {"stopReason": "end_turn"}}}
 *
 * `"$_"` matches anything. Every message the proxy sent toward a side must be expected before the
 * next `from` line (and by the end): an unexpected message fails the transcript. Logs need not be.
 */
import { readFileSync } from "node:fs";
import { describe as describeError } from "../../runtime/sandbox/canonical-host.js";
import type { LoadedComponent } from "../../runtime/sandbox/component-loader.js";
import { fromAgent, type Json } from "./messages.js";
import { INIT_PARAMS, INIT_RESULT, loadProxy, ProxyUnderTest, sides } from "./proxy-under-test.js";

export interface TranscriptFailure {
  /** 1-based line of the transcript. */
  line: number;
  message: string;
}

export interface TranscriptResult {
  ok: boolean;
  /** Steps run (lines other than comments and blanks). */
  steps: number;
  failure: TranscriptFailure | null;
}

type Step =
  | { line: number; kind: "configure"; config: Json; name: string }
  | { line: number; kind: "initialize"; agentResult: Json }
  | { line: number; kind: "from"; side: "client" | "agent"; message: Json }
  | { line: number; kind: "to"; side: "client" | "agent" | "answer"; message: Json }
  | { line: number; kind: "log"; log: { level?: string; message?: string } }
  | { line: number; kind: "trap"; text: string };

class TranscriptError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(message);
  }
}

/** Parses a transcript's text into steps (throws with the line on a malformed one). */
export function parseTranscript(text: string): Step[] {
  const steps: Step[] = [];
  text.split("\n").forEach((raw, i) => {
    const line = i + 1;
    if (!raw.trim()) return;
    let o: Json;
    try {
      o = JSON.parse(raw);
    } catch (error) {
      throw new TranscriptError(line, `not JSON (${(error as Error).message})`);
    }
    if (typeof o !== "object" || o === null || Array.isArray(o)) throw new TranscriptError(line, "a line is a JSON object");
    if ("comment" in o) return;
    if ("configure" in o)
      steps.push({ line, kind: "configure", config: o.configure ?? {}, name: typeof o.name === "string" ? o.name : "under-test" });
    else if ("initialize" in o) steps.push({ line, kind: "initialize", agentResult: o.initialize === true ? INIT_RESULT : o.initialize });
    else if ("from" in o) {
      if (o.from !== "client" && o.from !== "agent") throw new TranscriptError(line, `"from" is "client" or "agent"`);
      if (typeof o.message !== "object" || o.message === null) throw new TranscriptError(line, `"message" must be a JSON-RPC object`);
      steps.push({ line, kind: "from", side: o.from, message: o.message });
    } else if ("to" in o) {
      if (o.to !== "client" && o.to !== "agent" && o.to !== "answer")
        throw new TranscriptError(line, `"to" is "client", "agent" or "answer"`);
      steps.push({ line, kind: "to", side: o.to, message: o.message });
    } else if ("log" in o) steps.push({ line, kind: "log", log: o.log ?? {} });
    else if ("trap" in o) steps.push({ line, kind: "trap", text: String(o.trap ?? "") });
    else throw new TranscriptError(line, `unknown line: expected one of configure, initialize, from, to, log, trap, comment`);
  });
  return steps;
}

const VAR = /^\$[A-Za-z_][A-Za-z0-9_]*$/;

/** Replaces bound `$name`s in a message to deliver. */
function substitute(value: Json, vars: Map<string, Json>): Json {
  if (typeof value === "string" && VAR.test(value) && vars.has(value)) return vars.get(value);
  if (Array.isArray(value)) return value.map((v) => substitute(v, vars));
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, vars)]));
  return value;
}

/** Deep equality of `actual` with `expected`, binding `$name`s; returns the first difference's path, or null. */
function match(expected: Json, actual: Json, vars: Map<string, Json>, path = ""): string | null {
  if (typeof expected === "string" && VAR.test(expected)) {
    if (expected === "$_") return null;
    if (vars.has(expected))
      return JSON.stringify(vars.get(expected)) === JSON.stringify(actual)
        ? null
        : `${path || "(message)"} (${expected} is ${JSON.stringify(vars.get(expected))})`;
    vars.set(expected, actual);
    return null;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return path || "(message)";
    if (expected.length !== actual.length) return `${path}.length`;
    for (let i = 0; i < expected.length; i++) {
      const d = match(expected[i], actual[i], vars, `${path}[${i}]`);
      if (d) return d;
    }
    return null;
  }
  if (expected && typeof expected === "object") {
    if (!actual || typeof actual !== "object" || Array.isArray(actual)) return path || "(message)";
    const keys = new Set([...Object.keys(expected), ...Object.keys(actual)]);
    for (const k of keys) {
      if (!(k in expected)) return `${path}.${k} (not expected)`;
      if (!(k in actual)) return `${path}.${k} (missing)`;
      const d = match(expected[k], actual[k], vars, `${path}.${k}`);
      if (d) return d;
    }
    return null;
  }
  return expected === actual ? null : path || "(message)";
}

const withJsonrpc = (m: Json): Json =>
  m && typeof m === "object" && !Array.isArray(m) && !("jsonrpc" in m) ? { jsonrpc: "2.0", ...m } : m;

/** Runs a transcript against a loaded proxy (a fresh instance). */
export function runTranscript(component: LoadedComponent, text: string, options: { grants?: string[] } = {}): TranscriptResult {
  let steps: Step[];
  try {
    steps = parseTranscript(text);
  } catch (error) {
    const e = error as TranscriptError;
    return { ok: false, steps: 0, failure: { line: e.line ?? 0, message: e.message } };
  }
  const p = new ProxyUnderTest(component, { grants: options.grants });
  const vars = new Map<string, Json>();
  const queues = { client: [] as Json[], agent: [] as Json[], answer: [] as Json[] };
  let logsSeen = 0;
  let trapped: string | null = null;
  let configured = false;
  let ran = 0;

  const fail = (line: number, message: string): TranscriptResult => ({ ok: false, steps: ran, failure: { line, message } });
  const leftover = (line: number): TranscriptResult | null => {
    for (const side of ["client", "agent", "answer"] as const) {
      const m = queues[side][0];
      if (m !== undefined) {
        const where = side === "answer" ? "an answer" : `toward the ${side}`;
        return fail(line, `the proxy sent ${where} that the transcript does not expect: ${JSON.stringify(m)}`);
      }
    }
    return null;
  };
  const deliver = (line: number, message: Json): TranscriptResult | null => {
    if (trapped !== null) return fail(line, `the proxy is dead (it trapped: ${trapped})`);
    let out: Json[];
    try {
      out = p.deliver(message);
    } catch (error) {
      trapped = describeError(error);
      return null;
    }
    const s = sides(out);
    queues.client.push(...s.toClient);
    queues.agent.push(...s.toAgent);
    queues.answer.push(...s.answers);
    return null;
  };

  for (const step of steps) {
    ran++;
    if (step.kind !== "configure" && !configured) {
      configured = true;
      const r = deliver(step.line, { jsonrpc: "2.0", method: "_cordon/configure", params: { name: "under-test", config: {} } });
      if (r) return r;
    }
    switch (step.kind) {
      case "configure": {
        if (configured) return fail(step.line, "configure must be the first step (the host sends it before anything else)");
        configured = true;
        const r = deliver(step.line, { jsonrpc: "2.0", method: "_cordon/configure", params: { name: step.name, config: step.config } });
        if (r) return r;
        break;
      }
      case "initialize": {
        const left = leftover(step.line);
        if (left) return left;
        try {
          p.initialize(INIT_PARAMS, step.agentResult);
        } catch (error) {
          return fail(step.line, `initialize: ${(error as Error).message}`);
        }
        break;
      }
      case "from": {
        const left = leftover(step.line);
        if (left) return left;
        const m = withJsonrpc(substitute(step.message, vars));
        const r = deliver(step.line, step.side === "client" ? m : fromAgentInner(m));
        if (r) return r;
        break;
      }
      case "to": {
        const actual = queues[step.side].shift();
        const where = step.side === "answer" ? "an answer" : `a message toward the ${step.side}`;
        const expected = withJsonrpc(step.message);
        if (actual === undefined) {
          return fail(
            step.line,
            `expected ${where}, but the proxy sent none${trapped ? ` (it trapped: ${trapped})` : ""}: expected ${JSON.stringify(expected)}`,
          );
        }
        const diff = match(expected, actual, vars);
        if (diff)
          return fail(
            step.line,
            `${where} differs at ${diff}:\n  expected ${JSON.stringify(expected)}\n  actual   ${JSON.stringify(actual)}`,
          );
        break;
      }
      case "log": {
        const next = p.logs[logsSeen++];
        if (!next) return fail(step.line, `expected a log line ${JSON.stringify(step.log)}, but there is none`);
        const okLevel = step.log.level === undefined || step.log.level === next.level;
        const okText = step.log.message === undefined || next.message.includes(step.log.message);
        if (!okLevel || !okText) return fail(step.line, `expected a log line ${JSON.stringify(step.log)}, got ${JSON.stringify(next)}`);
        break;
      }
      case "trap": {
        const t = trapped as string | null; // set inside deliver()
        if (t === null) return fail(step.line, `expected a trap, but the proxy is alive`);
        if (!t.includes(step.text))
          return fail(step.line, `expected a trap containing ${JSON.stringify(step.text)}, got ${JSON.stringify(t)}`);
        break;
      }
    }
  }
  const last = steps.length ? steps[steps.length - 1].line + 1 : 1;
  const left = leftover(last);
  if (left) return left;
  if (trapped !== null && !steps.some((s) => s.kind === "trap")) return fail(last, `the proxy trapped: ${trapped}`);
  return { ok: true, steps: ran, failure: null };
}

/** An inner message from the agent side, wrapped as the conductor delivers it (answers go unwrapped). */
function fromAgentInner(m: Json): Json {
  if (typeof m.method !== "string") return m; // an answer to the proxy's own request
  return fromAgent(m.method, m.params, m.id);
}

/** Loads `wasm` and runs the transcript file against it. */
export async function runTranscriptFile(wasm: string, file: string, options: { grants?: string[] } = {}): Promise<TranscriptResult> {
  const component = await loadProxy(wasm, options);
  return runTranscript(component, readFileSync(file, "utf8"), options);
}
