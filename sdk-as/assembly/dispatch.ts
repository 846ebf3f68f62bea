// The dispatch seam: every message the conductor delivers is scanned once, routed by side and
// method, and handed to the matching hook — or handled by the SDK itself:
// - `proxy/successor` envelopes are unwrapped (a successor envelope whose inner method is itself an
//   envelope or `proxy/initialize` is refused: only a forger sends that, and the conductor already
//   refuses it — defence in depth);
// - `proxy/initialize` (also `_proxy/initialize`) becomes `onInitialize`, forwarded as `initialize`;
// - `$/cancel_request` is translated to the proxy's own ids for requests it forwarded;
// - `_cordon/configure` becomes `this.config` — only when it is the very first message the host
//   delivers; a later one (only a forger could send it) is ignored with a warning, as is every other
//   `_cordon/*` message from either side (the namespace is the host's; a request gets an error);
// - MCP-over-ACP traffic for the proxy's own servers goes to the MCP engine (mcp.ts);
// - `available_commands_update` gets the proxy's own slash commands merged in;
// - a successful `session/close` / `session/delete` frees `PerSession` state and calls `onSessionClosed`;
// - what the agent side sends for a session the proxy opened itself goes to the subagent hooks.
import { JSON } from "json-as";
import { send, sendBuilt } from "./abi";
import { ErrorCode, LogLevel } from "./codes";
import { Config } from "./config";
import { Hooks } from "./hooks";
import { RawObject, arrObj, decodeString, getArr, getJson, getNumber, getString, slice } from "./json";
import {
  InitializeRequest,
  InitializeResponse,
  Notification,
  PermissionRequest,
  PromptRequest,
  Request,
  Response,
  SessionUpdate,
  Side,
} from "./messages";
import { canonicalNames } from "./names";
import { forgetSession } from "./sessions";
import { answersOffered, answersPassing, errorResponse, fill, forwardOffered, handOnMarker, key, mayMark, parseId } from "./wire";

/** Methods only the host (Cordon) may originate. */
const RESERVED_PREFIX = "_cordon/";
/** Refused reserved-method attempts logged one by one; after that only a final note. */
const MAX_RESERVED_WARNINGS = 20;

/**
 * Members scanned in the one pass over each received message: the envelope's params, the inner
 * message's params, and for `session/update` its update and content — so routing and the common
 * typed getters never walk the same bytes twice.
 */
const SCAN_PATH: StaticArray<string> = ["params", "params", "update", "content"];

/**
 * The methods that make up nearly all traffic, as static strings: a method found among them (compared
 * in the received text) is this string, not a new one decoded per message.
 */
const COMMON_METHODS: StaticArray<string> = [
  "session/update",
  "session/prompt",
  "session/request_permission",
  "session/cancel",
  "$/cancel_request",
  "fs/read_text_file",
  "fs/write_text_file",
  "session/new",
  "session/load",
];

/** Whether the last `methodAt` found a common method (then neither reserved nor a control method). */
let common = false;

/** The method of member `i` (a string token): a common one without an allocation, else decoded. */
function methodAt(obj: RawObject, i: i32): string {
  for (let k = 0; k < COMMON_METHODS.length; k++) {
    const m = unchecked(COMMON_METHODS[k]);
    if (obj.writtenAs(i, m)) {
      common = true;
      return m;
    }
  }
  common = false;
  return decodeString(obj.valueStart(i), obj.valueEnd(i));
}

/** An uncommon method in the `_cordon/` namespace (the common ones are ACP's own). */
function isReserved(method: string): bool {
  return !common && method.startsWith(RESERVED_PREFIX);
}

/**
 * Whether a `session/update`'s params (member `inner` of the envelope) are an
 * `available_commands_update`: read in the dispatcher's own scan, which covered params and update
 * (`SCAN_PATH`), so nothing is allocated (asking the message would copy the scan for it to keep).
 */
function isCommandsUpdate(env: RawObject, inner: i32): bool {
  const params = env.objAt(inner);
  if (params == null) return false;
  const update = params.obj("update");
  return update != null && update.valueIs(update.indexOf("sessionUpdate"), "available_commands_update");
}

/** Inner methods a successor envelope may never carry. */
function isControl(method: string): bool {
  return (
    method == "proxy/successor" ||
    method == "_proxy/successor" ||
    method == "proxy/initialize" ||
    method == "_proxy/initialize"
  );
}

export class Dispatcher extends Hooks {
  /** No message has arrived yet: only the first one may be the host's `_cordon/configure`. */
  private fresh: bool = true;
  /** Reserved-method attempts refused so far (for bounding the warnings). */
  private refusedReserved: i32 = 0;
  /** The agent's last `availableCommands` (JSON text) per session, for `announceCommands`. */
  protected _agentCommands: Map<string, string> = new Map<string, string>();

  /** Entry point for every message from the conductor (installed by `register`). */
  receive(text: string): void {
    const first = this.fresh;
    this.fresh = false;
    // Names compared after decoding escapes (names.ts): `"t\u0065xt"` is `text` to every hook.
    // The scan tells whether there can be one; only then is the text rewritten and scanned again.
    let msg = RawObject.reused(text, SCAN_PATH);
    if (msg == null || RawObject.escapesSeen) {
      const canonical = canonicalNames(text);
      if (changetype<usize>(canonical) != changetype<usize>(text)) msg = RawObject.reused(canonical, SCAN_PATH);
    }
    if (msg == null) {
      this.log(LogLevel.Error, "dropped a message that is not a JSON object");
      return;
    }
    const mi = msg.indexOf("method");
    const idi = msg.indexOf("id");
    if (mi < 0) {
      if (idi >= 0) this.onRawResponse(msg, idi);
      else this.log(LogLevel.Warn, "dropped a message with neither method nor id");
      return;
    }
    // A request's id is kept (as the text received) to answer it; a response's is only parsed.
    const id = idi >= 0 ? slice(msg.valueStart(idi), msg.valueEnd(idi)) : "";
    if (msg.firstChar(mi) != 0x22) {
      if (idi >= 0) send(errorResponse(id, ErrorCode.InvalidRequest, "method is not a string", ""));
      return;
    }
    const pi = msg.indexOf("params");
    // Most messages are envelopes from the successor: their method is compared as written, never decoded.
    if (msg.writtenAs(mi, "proxy/successor") || msg.writtenAs(mi, "_proxy/successor")) {
      this.fromSuccessor(msg, idi >= 0, id, pi);
      return;
    }
    const method = methodAt(msg, mi);
    if (!common && (method == "proxy/successor" || method == "_proxy/successor")) {
      this.fromSuccessor(msg, idi >= 0, id, pi); // spelled with an escape
      return;
    }

    if (isReserved(method)) {
      if (first && idi < 0 && method == "_cordon/configure") this.configure(msg);
      else this.refuseReserved(method, Side.Client, idi >= 0, id);
      return;
    }
    if (idi < 0) {
      if (method == "$/cancel_request") {
        this.cancelled(Side.Client, msg, pi);
      } else {
        const n = new Notification();
        fill(n, method, Side.Client, msg, pi);
        this.onClientNotification(n);
      }
      return;
    }
    if (method == "proxy/initialize" || method == "_proxy/initialize" || method == "initialize") {
      const r = new InitializeRequest();
      this.accept(r, method, Side.Client, msg, pi, id);
      r.method = "initialize"; // what it is forwarded as
      this.onInitialize(r);
      this.checkHandled(r);
    } else if (method == "session/prompt") {
      const r = new PromptRequest();
      this.accept(r, method, Side.Client, msg, pi, id);
      this.onPrompt(r);
      this.checkHandled(r);
    } else {
      const r = new Request();
      this.accept(r, method, Side.Client, msg, pi, id);
      this.onClientRequest(r);
      this.checkHandled(r);
    }
  }

  private fromSuccessor(msg: RawObject, isRequest: bool, id: string, pi: i32): void {
    const env = pi >= 0 ? msg.obj("params") : null;
    const mi = env == null ? -1 : env.indexOf("method");
    if (env == null || mi < 0 || env.firstChar(mi) != 0x22) {
      if (isRequest) send(errorResponse(id, ErrorCode.InvalidParams, "proxy/successor needs params {method, params}", ""));
      else this.log(LogLevel.Warn, "dropped a proxy/successor notification without an inner method");
      return;
    }
    const method = methodAt(env, mi);
    if (isReserved(method)) {
      this.refuseReserved(method, Side.Agent, isRequest, id);
      return;
    }
    if (!common && isControl(method)) {
      const shown = method.length > 80 ? method.substring(0, 80) + "…" : method;
      this.log(LogLevel.Warn, `ignored a ${isRequest ? "request" : "notification"} from the agent side carrying ${shown} inside proxy/successor`);
      if (isRequest) send(errorResponse(id, ErrorCode.InvalidRequest, `refused ${shown} inside proxy/successor`, ""));
      return;
    }
    const inner = env.indexOf("params");
    let meta = env.indexOf("_meta");
    if (meta < 0) meta = env.indexOf("meta"); // the Rust SDK's older spelling
    const envelopeMeta = meta >= 0 ? slice(env.valueStart(meta), env.valueEnd(meta)) : null;

    const host = this._mcp;
    const isMcp = host != null && (method == "mcp/message" || method == "mcp/connect" || method == "mcp/disconnect");
    if (!isRequest) {
      if (method == "$/cancel_request") {
        this.cancelled(Side.Agent, env, inner);
        return;
      }
      if (isMcp && host!.handle(method, null, env.objAt(inner))) return;
      const n: Notification = method == "session/update" ? new SessionUpdate() : new Notification();
      fill(n, method, Side.Agent, env, inner, mi);
      n.envelopeMeta = envelopeMeta;
      if (this._toSubagent(n)) return; // a session the proxy opened itself (subagent.ts)
      if (method == "session/update") {
        const u = changetype<SessionUpdate>(n);
        if (isCommandsUpdate(env, inner)) this.mergeCommands(u);
        this.onSessionUpdate(u);
      }
      else this.onAgentNotification(n);
      return;
    }
    if (method == "session/request_permission") {
      const r = new PermissionRequest();
      this.accept(r, method, Side.Agent, env, inner, id);
      r.envelopeMeta = envelopeMeta;
      if (this._toSubagent(r)) this.checkHandled(r);
      else this.onPermissionRequest(r);
      this.checkHandled(r);
    } else {
      const r = new Request();
      this.accept(r, method, Side.Agent, env, inner, id);
      r.envelopeMeta = envelopeMeta;
      if (isMcp && host!.handle(method, r, env.objAt(inner))) return;
      if (this._toSubagent(r)) {
        this.checkHandled(r);
        return;
      }
      if (method == "elicitation/create") this.scopeToPredecessor(r);
      this.onAgentRequest(r);
      this.checkHandled(r);
    }
  }

  /**
   * A request-scoped `elicitation/create` names, in `params.requestId`, the request it belongs to by
   * the id this proxy gave it when forwarding it; toward the predecessor it must name it by the id
   * the proxy received it under (ids are per hop, like `$/cancel_request`'s).
   */
  private scopeToPredecessor(r: Request): void {
    const n = getNumber(r.readParams(), "requestId");
    if (isNaN(n) || n != Math.floor(n)) return; // not one of this proxy's (numeric) ids
    const ours = <i64>n;
    if (!this.pending.has(ours)) return;
    const forwarded = this.pending.get(ours).request;
    if (forwarded == null) return;
    r.params.set<JSON.Raw>("requestId", JSON.Raw.from(forwarded.id));
  }

  private accept(r: Request, method: string, from: Side, obj: RawObject, pi: i32, id: string): void {
    fill(r, method, from, obj, pi);
    r.id = id;
    this.open(r);
  }

  /**
   * A `_cordon/*` message the host did not send (a late `_cordon/configure`, or any other from
   * either side): never handed to a hook nor forwarded; a request is answered with an error. Logged
   * as a warning naming the attempt (the first {@link MAX_RESERVED_WARNINGS}, then one final note).
   */
  private refuseReserved(method: string, from: Side, isRequest: bool, id: string): void {
    const side = from == Side.Client ? "client" : "agent";
    const why = method == "_cordon/configure" ? "configuration is accepted only as the host's first message" : "the _cordon/ namespace is reserved for the host";
    const shown = method.length > 80 ? method.substring(0, 80) + "…" : method;
    const n = ++this.refusedReserved;
    if (n <= MAX_RESERVED_WARNINGS) {
      const what = isRequest ? `request ${shown} (id ${id.length > 40 ? id.substring(0, 40) + "…" : id})` : `notification ${shown}`;
      this.log(LogLevel.Warn, `ignored a forged ${what} from the ${side} side: ${why}`);
      if (n == MAX_RESERVED_WARNINGS) this.log(LogLevel.Warn, "further forged _cordon/ messages are ignored without a warning");
    }
    if (isRequest) send(errorResponse(id, ErrorCode.InvalidRequest, `refused ${shown}: ${why}`, ""));
  }

  /**
   * Debug mode: a hook that returns without forwarding, answering or holding its request leaves
   * the sender waiting for ever — say so, naming the method and id.
   */
  private checkHandled(r: Request): void {
    if (this.debug && !r.answered && r.forwardedAs == 0 && !r.held) {
      this.log(LogLevel.Warn, `a hook returned without forwarding, answering or holding ${r.method} (id ${r.id}); its sender waits for ever`);
    }
  }

  private configure(msg: RawObject): void {
    const params = msg.obj("params");
    let name = "";
    let obj = new JSON.Obj();
    if (params != null) {
      const n = params.str("name");
      if (n != null) name = n;
      const ci = params.indexOf("config");
      if (ci >= 0 && params.firstChar(ci) == 0x7b) obj = JSON.parse<JSON.Obj>(params.text("config")!);
    }
    if (params != null) this.debug = params.text("debug") == "true";
    forwardOffered(params != null && params.text("forward") == "true", params != null && params.text("forwardEdit") == "true");
    const answers = params != null ? params.text("answers") : null;
    answersOffered(answers != null && answers.length > 0 && answers.charCodeAt(0) == 0x5b ? JSON.parse<string[]>(answers) : null);
    this.config = new Config(name, obj);
    this.onConfigure(this.config);
  }

  /** `$/cancel_request` from `from` for the request it sent under `requestId`. */
  private cancelled(from: Side, params: RawObject, pi: i32): void {
    if (pi < 0) return;
    const p = params.objAt(pi);
    if (p == null) return;
    const target = p.text("requestId");
    if (target == null) return;
    const k = key(from, target);
    if (!this.incoming.has(k)) {
      // Unknown or already answered: ignored — unless it may name a request handed on with its
      // answer passing (forward), which the host maps only once it has routed that forward: it may
      // have been queued behind the request. Handed on as it came, the host translates it or drops it.
      if (answersPassing() && mayMark(params.src, "")) sendBuilt(handOnMarker(""));
      return;
    }
    const request = this.incoming.get(k);
    if (request.forwardedAs != 0 && !request.answered) {
      this.sendCancel(from == Side.Client ? Side.Agent : Side.Client, request.forwardedAs);
    }
    const host = this._mcp;
    if (host != null && host.cancel(request)) return;
    this.onCancel(request);
  }

  private onRawResponse(msg: RawObject, idi: i32): void {
    const ours = parseId(msg.valueStart(idi), msg.valueEnd(idi));
    if (ours <= 0 || !this.pending.has(ours)) {
      this.log(LogLevel.Warn, `dropped a response to unknown request id ${slice(msg.valueStart(idi), msg.valueEnd(idi))}`);
      return;
    }
    const p = this.pending.get(ours);
    this.pending.delete(ours);
    const request = p.request;
    const r: Response = request != null && request instanceof InitializeRequest ? new InitializeResponse() : new Response();
    r.id = ours;
    r.method = p.method;
    r.from = p.to;
    r.request = request;
    r.tag = p.tag;
    r._src = msg.src;
    const ei = msg.indexOf("error");
    if (ei >= 0) {
      r._eStart = msg.valueStart(ei);
      r._eEnd = msg.valueEnd(ei);
    } else {
      const ri = msg.indexOf("result");
      if (ri >= 0) {
        r._rStart = msg.valueStart(ri);
        r._rEnd = msg.valueEnd(ri);
      }
    }
    const host = this._mcp;
    if (host != null && request != null && p.to == Side.Agent) host.answered(p.method, ours, r);
    if (request == null) this._ownReply(p.tag, r);
    else if (r instanceof InitializeResponse) {
      this._agentInitialized(changetype<InitializeResponse>(r));
      this.onInitializeResponse(changetype<InitializeResponse>(r));
    }
    else this.onResponse(r);
    if (request != null && !r.isError && (p.method == "session/close" || p.method == "session/delete")) {
      const sessionId = request.sessionId;
      forgetSession(sessionId);
      this._agentCommands.delete(sessionId);
      this.onSessionClosed(sessionId);
    }
  }

  /** Records the agent's commands for the session and merges the proxy's own into the update. */
  private mergeCommands(u: SessionUpdate): void {
    const ours = this._commands;
    const sessionId = u.sessionId;
    const read = u.readUpdate();
    let list = "[]";
    if (read != null) {
      const theirs = getJson(read, "availableCommands");
      if (theirs != null) list = theirs;
    }
    this._agentCommands.set(sessionId, list);
    if (ours.length == 0) return;
    u.update.set<JSON.Raw>("availableCommands", JSON.Raw.from(this.commandsWith(list)));
  }

  /** JSON text of a commands list with the proxy's own commands in place of same-named ones. */
  protected commandsWith(listJson: string): string {
    const ours = this._commands;
    const out = new JSON.Arr();
    if (listJson.length > 0 && listJson.charCodeAt(0) == 0x5b) {
      const arr = JSON.parse<JSON.Arr>(listJson);
      for (let i = 0, n = arr.length; i < n; i++) {
        const o = arrObj(arr, i);
        if (o == null) continue;
        const name = getString(o, "name");
        let shadowed = false;
        if (name != null) for (let j = 0; j < ours.length; j++) if (ours[j].name == name) shadowed = true;
        if (!shadowed) out.push<JSON.Obj>(o);
      }
    }
    for (let j = 0; j < ours.length; j++) out.push<JSON.Obj>(ours[j].toObj());
    return JSON.stringify(out);
  }
}
