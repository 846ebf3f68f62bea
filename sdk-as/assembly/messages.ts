// Messages as the proxy's hooks see them: the inner JSON-RPC message (never the `proxy/successor`
// envelope), which side it came from, and its `params` — kept as the raw text received until a hook
// reads or edits it. An unedited message is forwarded as exactly the text received; an edited one is
// re-serialized by json-as, which still copies every member the hook never touched verbatim and
// keeps unknown fields, `_meta` and unknown variants.
import { JSON } from "json-as";
import { ContentBlock, Editable } from "./content";
import { Builder, RawObject, arrObj, decodeString, getArr, getJson, getNumber, getObj, getString, quote, typeOf } from "./json";

/** Which neighbour a message came from (or goes to). */
export enum Side {
  /** The predecessor: the client, or the proxy nearer to it. Its messages arrive unwrapped. */
  Client = 0,
  /** The successor: the agent, or the proxy nearer to it. Its messages arrive in `proxy/successor`. */
  Agent = 1,
}

/** A request or notification, seen from inside its envelope. */
export class Message extends Editable {
  /** The JSON-RPC method (for `proxy/initialize` this is `initialize`, the method it forwards as). */
  method: string = "";
  /** Who sent it. */
  from: Side = Side.Client;
  /**
   * Raw JSON of the `_meta` of the `proxy/successor` envelope it arrived in (null when none).
   * Hop-local: it is never forwarded. The message's own `params._meta` is part of `params`.
   */
  envelopeMeta: string | null;

  // The received text, where the method token and `params` sit in it (0, 0 when absent), and the
  // method as received (an unchanged method is re-emitted from the source, not re-quoted).
  _src: string = "";
  _mStart: usize;
  _mEnd: usize;
  _method: string = "";
  _pStart: usize;
  _pEnd: usize;
  _params: JSON.Obj | null;
  // Raw members of `params` as received (scanned while routing), for cheap typed getters. While it
  // is the dispatcher's reused scan (`RawObject.reused`), `_viewGen` is the generation it was
  // filled in: cloned on first use if still that one, scanned again if reused since.
  _view: RawObject | null;
  _viewGen: u32;
  // One pending raw edit of the received params: [_editStart, _editEnd) replaced by `_edit`; when
  // that is one JSON value put in place (with the comma an inserted element needs), the value alone
  // in `_editValue` (what `_cordon/forward` hands back instead of the edited text: wire.ts `handOnEdit`).
  _edit: string | null;
  _editValue: string | null;
  _editStart: usize;
  _editEnd: usize;

  get isRequest(): bool {
    return false;
  }

  /**
   * Whether the received params text is still the truth (not parsed, not edited), so typed getters
   * may read it raw instead of parsing it.
   */
  get _rawOk(): bool {
    return this._params == null && this._edit == null;
  }

  /** The raw members of `params` as received, or null when params is absent or not an object. */
  _rawView(): RawObject | null {
    const v = this._view;
    if (v != null) {
      if (v.generation == 0) return v;
      if (v.generation == this._viewGen) {
        const own = v.clone();
        this._view = own;
        return own;
      }
    }
    if (this._pStart == 0 || load<u16>(this._pStart) != 0x7b) return null;
    const scanned = RawObject.scan(this._src, this._pStart, this._pEnd);
    this._view = scanned;
    return scanned;
  }

  /**
   * Edits the received params text in place of parsing it: replaces [start, end) (pointers into the
   * received text, inside params) with `json`. Only one raw edit can be pending; returns false when
   * one is, or when params was parsed already (the caller then edits the parsed object instead).
   */
  _tryRawEdit(start: usize, end: usize, json: string, value: string | null = null): bool {
    if (!this._rawOk) return false;
    this._edit = json;
    this._editValue = value;
    this._editStart = start;
    this._editEnd = end;
    this.changed = true;
    return true;
  }

  /** Whether the message carries `params`. */
  get hasParams(): bool {
    return this._pStart != 0 || this._params != null;
  }

  /**
   * `params`, parsed on first use, for reading (an empty object when absent or not an object).
   * Editing through it is not noticed: use `params` (or a typed setter) to edit.
   */
  readParams(): JSON.Obj {
    const p = this._params;
    if (p != null) return p;
    const text = this._edit != null ? this.editedParams() : this.rawParams();
    const parsed = text.length > 0 && text.charCodeAt(0) == 0x7b ? JSON.parse<JSON.Obj>(text) : new JSON.Obj();
    this._params = parsed;
    this._edit = null; // folded into the parsed object
    this._editValue = null;
    return parsed;
  }

  /** `params` for editing: marks the message as changed so it is re-serialized when forwarded. */
  get params(): JSON.Obj {
    this.changed = true;
    return this.readParams();
  }

  /** Replaces `params` entirely. */
  set params(obj: JSON.Obj) {
    this.changed = true;
    this._params = obj;
  }

  /** The `params` JSON text as received ("" when absent). */
  rawParams(): string {
    if (this._pStart == 0) return "";
    const size = this._pEnd - this._pStart;
    const out = __new(size, idof<string>());
    memory.copy(out, this._pStart, size);
    return changetype<string>(out);
  }

  /** The received params with the pending raw edit applied. */
  private editedParams(): string {
    return new Builder()
      .slice(this._src, this._pStart, this._editStart)
      .str(this._edit!)
      .slice(this._src, this._editEnd, this._pEnd)
      .build();
  }

  /** The `params` JSON text as it will be forwarded ("" when absent). */
  paramsJson(): string {
    if (this.changed && this._params != null) return JSON.stringify(this._params!);
    if (this._edit != null) return this.editedParams();
    return this.rawParams();
  }

  /** `params.sessionId` ("" when absent). */
  get sessionId(): string {
    if (this._rawOk) return strOf(this._rawView(), "sessionId");
    const s = getString(this.readParams(), "sessionId");
    return s == null ? "" : s;
  }
}

/** A request: it must be answered, by forwarding it (the SDK relays the answer) or by a reply. */
export class Request extends Message {
  /** The id the conductor gave it, as raw JSON (a number or a string). */
  id: string = "";
  /** The id the proxy forwarded it under (0 while not forwarded). */
  forwardedAs: i64;
  /** Set once an answer was sent; later answers are dropped. */
  answered: bool;
  /** The proxy keeps it to answer or forward later (`hold`): not a hook that forgot it. */
  held: bool;
  /** Its key in the open requests (`Channel#open`), null until opened. */
  _key: string | null;

  get isRequest(): bool {
    return true;
  }
}

export class Notification extends Message {}

/** The answer to a request the proxy sent (forwarded, or its own). */
export class Response extends Editable {
  /** The id the proxy sent the request under. */
  id: i64;
  /** Method of the request this answers. */
  method: string = "";
  /** The side that answered. */
  from: Side = Side.Agent;
  /** The request the proxy forwarded, when this answers one (null for the proxy's own requests). */
  request: Request | null;
  /** The tag the proxy gave its own request ("" for forwarded ones). */
  tag: string = "";

  _src: string = "";
  _rStart: usize;
  _rEnd: usize;
  _eStart: usize;
  _eEnd: usize;
  _result: JSON.Obj | null;

  get isError(): bool {
    return this._eStart != 0;
  }

  /** The raw JSON of `result` ("null" when absent). */
  rawResult(): string {
    if (this._rStart == 0) return "null";
    return rawSlice(this._rStart, this._rEnd);
  }

  /** The raw JSON of `error` ("" when the response is a success). */
  rawError(): string {
    if (this._eStart == 0) return "";
    return rawSlice(this._eStart, this._eEnd);
  }

  /** `result` for reading (an empty object when absent, an error, or not an object). */
  readResult(): JSON.Obj {
    const r = this._result;
    if (r != null) return r;
    const parsed = this._rStart != 0 && load<u16>(this._rStart) == 0x7b ? JSON.parse<JSON.Obj>(this.rawResult()) : new JSON.Obj();
    this._result = parsed;
    return parsed;
  }

  /** `result` for editing: marks the response as changed so it is re-serialized when relayed. */
  get result(): JSON.Obj {
    this.changed = true;
    return this.readResult();
  }

  set result(obj: JSON.Obj) {
    this.changed = true;
    this._result = obj;
  }

  /** `result` JSON text as it will be relayed ("null" when absent). */
  resultJson(): string {
    if (this.changed && this._result != null) return JSON.stringify(this._result!);
    return this.rawResult();
  }

  /** `error.code` (0 on success). */
  get errorCode(): i32 {
    if (!this.isError) return 0;
    const e = JSON.parse<JSON.Obj>(this.rawError());
    return <i32>getNumber(e, "code", 0);
  }

  /** `error.message` ("" on success). */
  get errorMessage(): string {
    if (!this.isError) return "";
    const m = getString(JSON.parse<JSON.Obj>(this.rawError()), "message");
    return m == null ? "" : m;
  }
}

function isBlank(c: i32): bool {
  return c == 0x20 || c == 0x0a || c == 0x0d || c == 0x09;
}

/** A string member of a raw object ("" when the object or the member is missing or not a string). */
function strOf(o: RawObject | null, key: string): string {
  if (o == null) return "";
  const s = o.str(key);
  return s == null ? "" : s;
}

function rawSlice(start: usize, end: usize): string {
  const size = end - start;
  const out = __new(size, idof<string>());
  memory.copy(out, start, size);
  return changetype<string>(out);
}

// ---- typed views ----

/** `proxy/initialize` from the conductor (forwarded to the successor as `initialize`). */
export class InitializeRequest extends Request {
  get protocolVersion(): i32 {
    return <i32>getNumber(this.readParams(), "protocolVersion", 0);
  }

  /** `params.clientCapabilities` for reading, or null. */
  readClientCapabilities(): JSON.Obj | null {
    return getObj(this.readParams(), "clientCapabilities");
  }
}

/** The successor's `InitializeResponse`; edit it before it goes back to the client. */
export class InitializeResponse extends Response {
  get protocolVersion(): i32 {
    return <i32>getNumber(this.readResult(), "protocolVersion", 0);
  }

  /** `result.agentCapabilities` for editing (created when missing). */
  get agentCapabilities(): JSON.Obj {
    const result = this.result;
    let caps = getObj(result, "agentCapabilities");
    if (caps == null) {
      caps = new JSON.Obj();
      result.set<JSON.Obj>("agentCapabilities", caps);
    }
    return caps;
  }
}

/** `session/prompt`: the user's turn, a list of content blocks. */
export class PromptRequest extends Request {
  /** `params.prompt` for editing (created when missing). */
  get prompt(): JSON.Arr {
    const params = this.params;
    let arr = getArr(params, "prompt");
    if (arr == null) {
      arr = new JSON.Arr();
      params.set<JSON.Arr>("prompt", arr);
    }
    return arr;
  }

  /** The prompt's blocks (views; editing one marks the prompt changed). Non-objects are skipped. */
  blocks(): ContentBlock[] {
    const out = new Array<ContentBlock>(0);
    const arr = getArr(this.readParams(), "prompt");
    if (arr == null) return out;
    for (let i = 0, n = arr.length; i < n; i++) {
      const obj = arrObj(arr, i);
      if (obj != null) out.push(new ContentBlock(obj, this));
    }
    return out;
  }

  /** Inserts a block before the user's first block. */
  prepend(block: ContentBlock): void {
    if (!this.rawInsert(block, true)) this.prompt.unshift<JSON.Obj>(block.obj);
  }

  /** Adds a block after the user's last block. */
  append(block: ContentBlock): void {
    if (!this.rawInsert(block, false)) this.prompt.push<JSON.Obj>(block.obj);
  }

  /** Inserts a block's JSON into the received prompt text, without parsing the prompt. */
  private rawInsert(block: ContentBlock, first: bool): bool {
    if (!this._rawOk) return false;
    const v = this._rawView();
    if (v == null) return false;
    const i = v.indexOf("prompt");
    if (i < 0 || v.firstChar(i) != 0x5b) return false;
    const inner = v.innerStart(i);
    const empty = load<u16>(inner) == 0x5d;
    const json = block.toJson();
    if (first) return this._tryRawEdit(inner, inner, empty ? json : json + ",", json);
    const close = v.valueEnd(i) - 2;
    return this._tryRawEdit(close, close, empty ? json : "," + json, json);
  }

  /**
   * The slash command the prompt starts with: `/name input…` in its first text block → "name"
   * ("" when the prompt is not a command). Offer commands with `Proxy.addCommand`.
   */
  get command(): string {
    const t = this.firstText();
    if (t.length < 2 || t.charCodeAt(0) != 0x2f) return "";
    let end = 1;
    while (end < t.length && !isBlank(t.charCodeAt(end))) end++;
    return t.substring(1, end);
  }

  /** What follows the slash command in the first text block, trimmed ("" when none or not a command). */
  get commandInput(): string {
    const name = this.command;
    if (name.length == 0) return "";
    return this.firstText().substring(1 + name.length).trim();
  }

  /** The first text block's text ("" when none). */
  private firstText(): string {
    const blocks = this.blocks();
    for (let i = 0; i < blocks.length; i++) if (blocks[i].isText) return blocks[i].text;
    return "";
  }

  /** The text of all text blocks, joined with newlines. */
  get text(): string {
    const blocks = this.blocks();
    const parts = new Array<string>(0);
    for (let i = 0; i < blocks.length; i++) {
      if (blocks[i].isText) parts.push(blocks[i].text);
    }
    return parts.join("\n");
  }
}

/** `session/update` from the agent side. */
export class SessionUpdate extends Notification {
  /** `params.update` for reading, or null. */
  readUpdate(): JSON.Obj | null {
    return getObj(this.readParams(), "update");
  }

  /** `params.update` for editing (created when missing). */
  get update(): JSON.Obj {
    const params = this.params;
    let u = getObj(params, "update");
    if (u == null) {
      u = new JSON.Obj();
      params.set<JSON.Obj>("update", u);
    }
    return u;
  }

  /** The raw members of `params.update` as received (null when edited, parsed, or absent). */
  private rawUpdate(): RawObject | null {
    const v = this._rawView();
    return v == null ? null : v.obj("update");
  }

  /** The raw members of a chunk's `content` as received (null when not available raw). */
  private rawContent(): RawObject | null {
    const u = this.rawUpdate();
    return u == null ? null : u.obj("content");
  }

  /** The `sessionUpdate` discriminator: `agent_message_chunk`, `tool_call`, … or anything newer. */
  get kind(): string {
    if (this._rawOk) return strOf(this.rawUpdate(), "sessionUpdate");
    const u = this.readUpdate();
    if (u == null) return "";
    const k = getString(u, "sessionUpdate");
    return k == null ? "" : k;
  }

  /** Whether `kind` is `literal`, compared in the received text while it is the truth (no string made). */
  _kindIs(literal: string): bool {
    if (!this._rawOk) return this.kind == literal;
    const u = this.rawUpdate();
    return u != null && u.valueIs(u.indexOf("sessionUpdate"), literal);
  }

  /** `agent_message_chunk`, `agent_thought_chunk` or `user_message_chunk`. */
  get isChunk(): bool {
    if (this._rawOk) return this._kindIs("agent_message_chunk") || this._kindIs("agent_thought_chunk") || this._kindIs("user_message_chunk");
    const k = this.kind;
    return k == "agent_message_chunk" || k == "agent_thought_chunk" || k == "user_message_chunk";
  }

  /** `tool_call` or `tool_call_update`. */
  get isToolCall(): bool {
    if (this._rawOk) return this._kindIs("tool_call") || this._kindIs("tool_call_update");
    const k = this.kind;
    return k == "tool_call" || k == "tool_call_update";
  }

  /** The content block of a chunk update (null for other updates). */
  get content(): ContentBlock | null {
    if (!this.isChunk) return null;
    const u = this.readUpdate();
    if (u == null) return null;
    const c = getObj(u, "content");
    return c == null ? null : new ContentBlock(c, this);
  }

  /** Whether this is a chunk whose content is a text block. */
  get isTextChunk(): bool {
    if (this._rawOk) {
      if (!this.isChunk) return false;
      const c = this.rawContent();
      return c != null && c.valueIs(c.indexOf("type"), "text");
    }
    const c = this.content;
    return c != null && c.isText;
  }

  /** The text of a text chunk ("" otherwise). */
  get text(): string {
    if (this._rawOk) {
      if (!this.isTextChunk) return "";
      return strOf(this.rawContent(), "text");
    }
    const c = this.content;
    return c == null ? "" : c.text;
  }

  /**
   * Replaces the text of a text chunk (ignored for other updates). The first edit of an unparsed
   * update splices the new text into the received JSON; nothing else is parsed or re-serialized.
   */
  set text(value: string) {
    if (this._rawOk && this.isTextChunk) {
      const rc = this.rawContent()!;
      const i = rc.indexOf("text");
      if (i >= 0 && rc.firstChar(i) == 0x22) {
        const json = quote(value);
        if (this._tryRawEdit(rc.valueStart(i), rc.valueEnd(i), json, json)) return;
      }
    }
    const c = this.content;
    if (c != null && c.isText) c.text = value;
  }

  /** A tool call's `title` ("" when absent). */
  get title(): string {
    const u = this.readUpdate();
    if (u == null) return "";
    const t = getString(u, "title");
    return t == null ? "" : t;
  }

  set title(value: string) {
    this.update.set<string>("title", value);
  }

  /** A tool call's `toolCallId` ("" when absent). */
  get toolCallId(): string {
    const u = this.readUpdate();
    if (u == null) return "";
    const t = getString(u, "toolCallId");
    return t == null ? "" : t;
  }

  /**
   * The content blocks inside a tool call's `content` entries of type `content` (views; editing one
   * marks the update changed). `diff` and `terminal` entries are not included.
   */
  toolCallContent(): ContentBlock[] {
    const out = new Array<ContentBlock>(0);
    if (!this.isToolCall) return out;
    const u = this.readUpdate();
    if (u == null) return out;
    const entries = getArr(u, "content");
    if (entries == null) return out;
    for (let i = 0, n = entries.length; i < n; i++) {
      const entry = arrObj(entries, i);
      if (entry == null || getString(entry, "type") != "content") continue;
      const block = getObj(entry, "content");
      if (block != null) out.push(new ContentBlock(block, this));
    }
    return out;
  }
}

/** One choice offered by `session/request_permission`. */
export class PermissionOption {
  constructor(
    public optionId: string,
    public name: string,
    /** `allow_once`, `allow_always`, `reject_once`, `reject_always` (or anything newer). */
    public kind: string,
  ) {}

  get isReject(): bool {
    return this.kind == "reject_once" || this.kind == "reject_always";
  }

  get isAllow(): bool {
    return this.kind == "allow_once" || this.kind == "allow_always";
  }
}

/** `session/request_permission`: the agent asks the client before running a tool call. */
export class PermissionRequest extends Request {
  /** `params.toolCall` for reading, or null. */
  readToolCall(): JSON.Obj | null {
    return getObj(this.readParams(), "toolCall");
  }

  /** The tool call's `title` ("" when absent). */
  get title(): string {
    const tc = this.readToolCall();
    if (tc == null) return "";
    const t = getString(tc, "title");
    return t == null ? "" : t;
  }

  /** The tool call's `toolCallId` ("" when absent). */
  get toolCallId(): string {
    const tc = this.readToolCall();
    if (tc == null) return "";
    const t = getString(tc, "toolCallId");
    return t == null ? "" : t;
  }

  /** The tool call's `kind` (`execute`, `edit`, …; "" when absent). */
  get toolKind(): string {
    const tc = this.readToolCall();
    if (tc == null) return "";
    const t = getString(tc, "kind");
    return t == null ? "" : t;
  }

  /** The JSON text of the tool call's `rawInput` as received ("" when absent). */
  rawInputJson(): string {
    const tc = this.readToolCall();
    if (tc == null) return "";
    const j = getJson(tc, "rawInput");
    return j == null ? "" : j;
  }

  /** The options offered, in order (entries without an `optionId` are skipped). */
  options(): PermissionOption[] {
    const out = new Array<PermissionOption>(0);
    const arr = getArr(this.readParams(), "options");
    if (arr == null) return out;
    for (let i = 0, n = arr.length; i < n; i++) {
      const o = arrObj(arr, i);
      if (o == null) continue;
      const id = getString(o, "optionId");
      if (id == null) continue;
      const name = getString(o, "name");
      const kind = getString(o, "kind");
      out.push(new PermissionOption(id, name == null ? "" : name, kind == null ? "" : kind));
    }
    return out;
  }

  /** The first option of the given kind, or null. */
  optionOfKind(kind: string): PermissionOption | null {
    const all = this.options();
    for (let i = 0; i < all.length; i++) if (all[i].kind == kind) return all[i];
    return null;
  }

  /** The first `reject_once` or `reject_always` option, or null. */
  firstRejectOption(): PermissionOption | null {
    const all = this.options();
    for (let i = 0; i < all.length; i++) if (all[i].isReject) return all[i];
    return null;
  }
}

/** Results for `session/request_permission`. */
export class PermissionOutcome {
  /** `{"outcome":{"outcome":"selected","optionId":…}}` */
  static selected(optionId: string): JSON.Obj {
    const inner = new JSON.Obj();
    inner.set<string>("outcome", "selected");
    inner.set<string>("optionId", optionId);
    const out = new JSON.Obj();
    out.set<JSON.Obj>("outcome", inner);
    return out;
  }

  /** `{"outcome":{"outcome":"cancelled"}}` */
  static cancelled(): JSON.Obj {
    const inner = new JSON.Obj();
    inner.set<string>("outcome", "cancelled");
    const out = new JSON.Obj();
    out.set<JSON.Obj>("outcome", inner);
    return out;
  }
}

/** Whether a JSON value (from `JSON.Obj.get`) is an object, without parsing it. */
export function isObject(v: JSON.Value | null): bool {
  return v != null && typeOf(v) == JSON.Types.Object;
}
