// The wire seam of a proxy: its bookkeeping (its own request ids, the pending map that relays every
// answer back under the requester's id, the open requests per side) and everything a proxy can
// send. `Hooks` (hooks.ts) adds the author-facing hooks on top, `Dispatcher` (dispatch.ts) the
// routing of what arrives, `Proxy` (proxy.ts) the MCP servers, slash commands and `register`.
import { JSON } from "json-as";
import { send, sendBuilt } from "./abi";
import { ErrorCode, LogLevel } from "./codes";
import { Config } from "./config";
import { Builder, getString, quote } from "./json";
import { InitializeRequest, Message, PromptRequest, Request, Response, Side } from "./messages";
import { AvailableCommand } from "./sessions";
import { McpEngine, isSessionSetup } from "./tools";
import {
  HEAD,
  answerMayPass,
  build,
  editsOffered,
  envelopeOf,
  errorResponse,
  handOnEdit,
  handOnMarker,
  key,
  logText,
  mayMark,
  resultResponse,
  textChunkUpdate,
  toJson,
  updateParams,
} from "./wire";

/** A request the proxy sent and is waiting on. */
export class Pending {
  constructor(
    public method: string,
    /** Where it went. */
    public to: Side,
    /** The request it forwards (null for the proxy's own). */
    public request: Request | null,
    public tag: string,
  ) {}
}

export class Channel {
  /** Configuration from `_cordon/configure` (empty until it arrives, which is before initialize). */
  config: Config = new Config();

  protected nextId: i64 = 1;
  /** Requests received and not yet answered, by side + the conductor's id. */
  protected incoming: Map<string, Request> = new Map<string, Request>();
  /** Requests sent and not yet answered, by the id the proxy used. */
  protected pending: Map<i64, Pending> = new Map<i64, Pending>();
  /** The MCP servers the proxy provides (null until `addMcpServer`). */
  _mcp: McpEngine | null = null;
  /** The proxy's own slash commands (`addCommand`), merged into every `available_commands_update`. */
  protected _commands: AvailableCommand[] = new Array<AvailableCommand>(0);

  /** The proxy's name in the chain ("" until configured). */
  get name(): string {
    return this.config.name;
  }

  /** Called when a prompt is answered, before the answer leaves (`Hooks` turns it into `onTurnEnd`). */
  protected turnEnded(prompt: PromptRequest, stopReason: string): void {}

  // ---------------------------------------------------------------- sending

  /**
   * Sends a message on to the other side: a client-side message to the successor (in a
   * `proxy/successor` envelope), an agent-side one to the predecessor. A request's answer comes
   * back through `onResponse` (or `onInitializeResponse`) and is relayed by default — unless the
   * manifest's `watches.answers` leaves its method out: then the answer goes straight back to
   * whoever sent the request, past this proxy, which keeps nothing for it (see `answerPasses`).
   */
  forward(message: Message): void {
    if (message.isRequest) {
      const request = changetype<Request>(message);
      if (request.answered || request.forwardedAs != 0) {
        this.log(LogLevel.Warn, `request ${request.id} (${request.method}) was already ${request.answered ? "answered" : "forwarded"}; not forwarding it again`);
        return;
      }
      const to = message.from == Side.Client ? Side.Agent : Side.Client;
      const id = this.nextId++;
      request.forwardedAs = id;
      const ids = id.toString();
      if (this.answerPasses(request)) {
        // Handed on by a marker, or not at all this way: only a marker names the request the host holds.
        const marker = unchanged(message, ids) ? handOnMarker(ids, true) : editedOnce(message, ids) ? handOnEdit(ids, message, true) : null;
        if (marker != null) {
          this.finish(request); // answered past the proxy: nothing here waits for it
          sendBuilt(marker);
          return;
        }
      }
      this.pending.set(id, new Pending(request.method, to, request, ""));
      const host = this._mcp;
      if (host != null && to == Side.Agent) host.forwarding(request, id);
      if (unchanged(message, ids)) sendBuilt(handOnMarker(ids));
      else sendBuilt(editedOnce(message, ids) ? handOnEdit(ids, message) : envelopeOf(to, ids, message.method, message));
    } else if (unchanged(message, "")) {
      sendBuilt(handOnMarker(""));
    } else if (editedOnce(message, "")) {
      sendBuilt(handOnEdit("", message));
    } else {
      sendBuilt(envelopeOf(message.from == Side.Client ? Side.Agent : Side.Client, "", message.method, message));
    }
  }

  /**
   * Whether `request`'s answer may go past the proxy when it is forwarded: its manifest does not
   * watch that method's answers (wire.ts `answerMayPass`), and the SDK itself has no use for it —
   * it reads `initialize`'s (capabilities), a session's end (`session/close`, `session/delete`:
   * what it keeps per session), and, with MCP servers to declare, a session setup's (its id).
   * Without the answer, `onResponse`, `onTurnEnd` and `onCancel` do not run for the request.
   */
  private answerPasses(request: Request): bool {
    const method = request.method;
    if (!answerMayPass(method) || request instanceof InitializeRequest) return false;
    if (method == "session/close" || method == "session/delete") return false;
    return this._mcp == null || !isSessionSetup(method);
  }

  /** Passes an answer back to whoever sent the request it answers (with their id). */
  relay(response: Response): void {
    const request = response.request;
    if (request == null) return; // the proxy's own request: nobody to relay to
    if (request.answered) return;
    this.finish(request);
    if (request instanceof PromptRequest) {
      let reason = "";
      if (!response.isError) {
        const s = getString(response.readResult(), "stopReason");
        if (s != null) reason = s;
      }
      this.turnEnded(changetype<PromptRequest>(request), reason);
    }
    if (!response.changed && (response.isError || response._rStart != 0) && mayMark(response._src, request.id)) {
      sendBuilt(handOnMarker(request.id));
      return;
    }
    const b = Builder.begin().str(HEAD).str(',"id":').str(request.id);
    if (response.isError) {
      b.str(',"error":').slice(response._src, response._eStart, response._eEnd);
    } else if (response.changed && response._result != null) {
      b.str(',"result":').str(JSON.stringify(response._result!));
    } else if (response._rStart != 0) {
      b.str(',"result":').slice(response._src, response._rStart, response._rEnd);
    } else {
      b.str(',"result":null');
    }
    sendBuilt(b.str("}"));
  }

  /**
   * Answers a request with a result: a `JSON.Obj`, any `@json` class, or `JSON.Raw.from(text)` for
   * JSON text. Use this for requests the proxy handles itself.
   */
  respond<T>(request: Request, result: T): void {
    if (request.answered) {
      this.log(LogLevel.Warn, `request ${request.id} (${request.method}) was already answered`);
      return;
    }
    const json = toJson<T>(result);
    this.finish(request);
    if (request instanceof PromptRequest) {
      let reason = "";
      if (json.length > 0 && json.charCodeAt(0) == 0x7b) {
        const s = getString(JSON.parse<JSON.Obj>(json), "stopReason");
        if (s != null) reason = s;
      }
      this.turnEnded(changetype<PromptRequest>(request), reason);
    }
    send(resultResponse(request.id, json));
  }

  /** Answers a request with a JSON-RPC error. `data` is optional JSON text. */
  respondError(request: Request, code: i32, message: string, data: string = ""): void {
    if (request.answered) {
      this.log(LogLevel.Warn, `request ${request.id} (${request.method}) was already answered`);
      return;
    }
    this.finish(request);
    if (request instanceof PromptRequest) this.turnEnded(changetype<PromptRequest>(request), "");
    send(errorResponse(request.id, code, message, data));
  }

  /** Refuses a request by policy: `respondError` with `ErrorCode.Denied`. */
  respondDenied(request: Request, message: string, data: string = ""): void {
    this.respondError(request, ErrorCode.Denied, message, data);
  }

  /**
   * Answers a prompt yourself, ending the turn: `{"stopReason": stopReason}` (`end_turn`,
   * `max_tokens`, `max_turn_requests`, `refusal`, `cancelled`). Send the turn's text first with
   * `sendMessageChunk`, or use `answerPrompt`.
   */
  endTurn(prompt: PromptRequest, stopReason: string = "end_turn"): void {
    this.respond(prompt, JSON.Raw.from('{"stopReason":' + quote(stopReason) + "}"));
  }

  /** Answers a prompt yourself with one message: an `agent_message_chunk` with `text`, then `endTurn`. */
  answerPrompt(prompt: PromptRequest, text: string, stopReason: string = "end_turn"): void {
    this.sendMessageChunk(prompt.sessionId, text);
    this.endTurn(prompt, stopReason);
  }

  /**
   * Sends a `session/update` to the client side: `update` is the update object (`{"sessionUpdate":
   * …}`) as a `JSON.Obj`, an `@json` class or `JSON.Raw.from(text)`.
   */
  sendUpdate<T>(sessionId: string, update: T): void {
    send(build(Side.Client, "", "session/update", updateParams(sessionId, toJson<T>(update))));
  }

  /** Sends an `agent_message_chunk` with one text block to the client side. */
  sendMessageChunk(sessionId: string, text: string): void {
    send(build(Side.Client, "", "session/update", updateParams(sessionId, textChunkUpdate("agent_message_chunk", text))));
  }

  /** Sends an `agent_thought_chunk` with one text block to the client side. */
  sendThought(sessionId: string, text: string): void {
    send(build(Side.Client, "", "session/update", updateParams(sessionId, textChunkUpdate("agent_thought_chunk", text))));
  }

  /** Sends a notification to the client side (e.g. a `session/update` the proxy makes up). */
  notifyClient<T>(method: string, params: T): void {
    send(build(Side.Client, "", method, toJson<T>(params)));
  }

  /** Sends a notification to the agent side. */
  notifyAgent<T>(method: string, params: T): void {
    send(build(Side.Agent, "", method, toJson<T>(params)));
  }

  /** Sends the proxy's own request to the client side; the answer arrives in `onReply(tag, …)`. Returns its id. */
  requestClient<T>(method: string, params: T, tag: string): i64 {
    return this.request(Side.Client, method, toJson<T>(params), tag);
  }

  /** Sends the proxy's own request to the agent side; the answer arrives in `onReply(tag, …)`. Returns its id. */
  requestAgent<T>(method: string, params: T, tag: string): i64 {
    return this.request(Side.Agent, method, toJson<T>(params), tag);
  }

  /** Asks the receiver of one of the proxy's own requests (by id) to cancel it. */
  cancelRequest(id: i64): void {
    if (!this.pending.has(id)) return;
    this.sendCancel(this.pending.get(id).to, id);
  }

  /**
   * Keeps `request` to answer or forward later (after an own request of the proxy's comes back,
   * say). Nothing is sent; it only tells the SDK the hook did not forget it (see `debug`).
   */
  hold(request: Request): void {
    request.held = true;
  }

  /** `CORDON_LOG=debug` on the host: the SDK then reports requests a hook returned without handling. */
  debug: bool = false;

  /** Sends a `_cordon/log` line (`error`, `warn`, `info`, `debug`); the conductor prints it with the proxy's name. */
  log(level: string, message: string): void {
    send(logText(level, message));
  }

  /** Number of requests the proxy has sent and not had answered (forwarded and own). */
  get pendingCount(): i32 {
    return this.pending.size;
  }

  /** Number of requests received and not yet answered. */
  get openCount(): i32 {
    return this.incoming.size;
  }

  // ---------------------------------------------------------------- bookkeeping

  protected open(request: Request): void {
    const k = key(request.from, request.id);
    request._key = k;
    this.incoming.set(k, request);
  }

  protected finish(request: Request): void {
    request.answered = true;
    // the key it was opened under (one string per request, not one more per answer)
    const k = request._key;
    this.incoming.delete(k != null ? k : key(request.from, request.id));
  }

  protected sendCancel(to: Side, id: i64): void {
    send(build(to, "", "$/cancel_request", `{"requestId":${id.toString()}}`));
  }

  private request(to: Side, method: string, params: string, tag: string): i64 {
    const id = this.nextId++;
    this.pending.set(id, new Pending(method, to, null, tag));
    send(build(to, id.toString(), method, params));
    return id;
  }
}

/**
 * Whether `message` goes on exactly as it was delivered in this `receive` (not edited, its method
 * not renamed), so the host can hand on what it holds (`_cordon/forward`) under `id`.
 */
function unchanged(message: Message, id: string): bool {
  return !message.changed && message._edit == null && asDelivered(message, id);
}

/**
 * Whether `message` goes on as it was delivered in this `receive` but for its one raw edit of a
 * single value (not parsed, its method not renamed), so the host can hand it on with that edit
 * (`_cordon/forward` with `params`, wire.ts `handOnEdit`) under `id`. (`_editValue` is set only
 * with `_edit`, and cleared with it when params are parsed.)
 */
function editedOnce(message: Message, id: string): bool {
  return editsOffered() && message._params == null && message._editValue != null && asDelivered(message, id);
}

/**
 * What both markers need: `message` keeps the method it arrived with, and its text is the one
 * delivered in this `receive` (`mayMark`, which uses that up: so it is asked last).
 */
function asDelivered(message: Message, id: string): bool {
  return message._mStart != 0 && message.method == message._method && mayMark(message._src, id);
}
