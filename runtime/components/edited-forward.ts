/**
 * A guest's edit handed back as the edit alone: `_cordon/forward` with a splice. A proxy that
 * edits one place of a message it forwards (a block put before a long prompt, a streamed chunk's
 * text replaced) would otherwise write the whole message out, and the host would copy it out of the
 * guest, parse it and I-JSON-scan it — three passes over a 100 KB prompt for a few hundred bytes
 * of change. Offered in `_cordon/configure` (`forwardEdit: true`, to UTF-16 guests: the offsets
 * count UTF-16 code units), the marker is
 *
 *   {"jsonrpc":"2.0"[,"id":ID],"method":"_cordon/forward","params":{"at":S,"end":E,"value":V}}
 *
 * (a request's with `"pass":true,` before `"at"` when its answer passes the guest: unchanged-forward.ts
 * `markerPasses`) exactly so written: the call delivered in this `receive`, handed on as the plain marker hands it
 * on (unchanged-forward.ts), with the code units `[S, E)` of its `params` text replaced by the JSON
 * value `V`, as one of
 *
 * - S = E just inside an array's `[` (before its first element, past blanks): `V` becomes its first
 *   element (written `V,`, or `V` in an empty array);
 * - S = E at an array's `]`: `V` becomes its last element (written `,V`, or `V`);
 * - `[S, E)` a whole value (a member's or an element's): `V` replaces it.
 *
 * The text routed is then byte for byte what the SDK would have written out (`wire.ts` `envelopeOf`
 * with its one raw edit), and the message routed is what parsing that text gives.
 *
 * When the host routes it without a parse (`checked`), and why that is sound: the call was admitted
 * when it entered Cordon, as for the plain marker, so what is new is `V` and its place.
 * - **The place** is found by walking the params text (a character loop over structure; values
 *   beside the path are jumped over, strings with `indexOf`): the edit must fall at one of the
 *   three places above, and every name on the way down must be the only one of its key in its
 *   object to the loosest reader (case folded, cut at a NUL: i-json.ts `readerKey`), so the member
 *   the edit lands in is the one `JSON.parse` and every other reader take — the host edits its
 *   parsed message along that path and the next reader reads the same.
 * - **The value** is parsed alone and I-JSON-scanned alone, as a top-level text (stricter than in
 *   its place: protocol-key spellings are refused at its top too), with the nesting left at its
 *   depth. Where Cordon's rules read names at or below the place (`params.mcpServers[]`…,
 *   i-json.ts `judgedWithin`), a scan out of place is not enough.
 * - Anything else — another place, a repeated name on the path, a judged place, a value that breaks
 *   I-JSON or nests too deep — is routed the ordinary way: the edited text is built and parsed and
 *   admission scans it, as if the guest had written it out. So a marker never gets past a check the
 *   written-out text would meet. A marker whose offsets fall outside the params text, or a call
 *   without params text, does not fit: the ordinary path refuses it as a `_cordon/*` method.
 *
 * What the guest controls: one marker per delivery (wasm-proxy.ts, shared with the plain marker),
 * and a text as long as the delivered one plus `V`, which its output budget already counted: what
 * writing the edited text out allowed.
 *
 * Cost: for a 100 KB prompt with a block put before it, the walk reads params' members where the
 * line's reader recorded them (protocol/parse-line.ts `objectAlone`: a compact request's long
 * params) and jumps nothing; else it jumps the prompt's text once (~150–200 µs on bench P3's
 * escape-dense text). The copy out of the guest (~230 µs for that text), `JSON.parse` (~340 µs)
 * and the output's I-JSON scan (~210 µs) are not made.
 */

import { iJsonViolation, judgedWithin, readerKey } from "../protocol/i-json.js";
import type { JsonRpcId } from "../protocol/json-rpc.js";
import { Methods } from "../protocol/methods.js";
import { MAX_NESTING_DEPTH } from "../protocol/nesting.js";
import { attachRaw, hasRaw, layoutOf, nameAt, rawParamsPieces, skipWs, stringEnd, valueEnd, withParamsEdit } from "../protocol/raw-json.js";
import type { Call } from "../routing/envelope.js";
import { callHandedOn, type Delivered, formOf, HEAD, handOn, readHead, type Shape } from "./unchanged-forward.js";

/** What an edit marker routes: the message, and whether it was checked here (else it goes through admission). */
export interface EditedForward {
  message: object;
  checked: boolean;
  /** The marker's pass form: the request's answer goes past the guest (interest-filter.ts `handOnPassing`). */
  pass: boolean;
}

const EDIT_OPEN = `,"method":"${Methods.cordonForward}","params":{"at":`;
/** The same, for a request handed on with its answer passing the guest (interest-filter.ts `handOnPassing`). */
const PASS_EDIT_OPEN = `,"method":"${Methods.cordonForward}","params":{"pass":true,"at":`;
const END = ',"end":';
const VALUE = ',"value":';
const SENT: Shape = { enveloped: false, body: 0, end: 0, id: undefined };

/** The edit a marker asks for: its id, and `[at, end)` of the params text replaced by `value`. */
interface Edit {
  id: JsonRpcId | undefined;
  /** The pass form: a request's answer goes past the guest. */
  pass: boolean;
  at: number;
  end: number;
  value: string;
}

/** Reads an edit marker (see the module comment); null for any other text. */
function readEdit(output: string): Edit | null {
  const pos = readHead(output, SENT);
  if (pos < 0) return null;
  const pass = output.startsWith(PASS_EDIT_OPEN, pos);
  // Only a request's answer can pass: a passing marker without an id is no marker.
  if (pass ? SENT.id === undefined : !output.startsWith(EDIT_OPEN, pos)) return null;
  const at = readCount(output, pos + (pass ? PASS_EDIT_OPEN : EDIT_OPEN).length);
  if (at === null || !output.startsWith(END, at.next)) return null;
  const end = readCount(output, at.next + END.length);
  if (end === null || !output.startsWith(VALUE, end.next) || !output.endsWith("}}")) return null;
  const from = end.next + VALUE.length;
  if (from >= output.length - 2) return null;
  return { id: SENT.id, pass, at: at.value, end: end.value, value: output.slice(from, output.length - 2) };
}

/** A count at `pos` (digits, no sign or leading zero, below 2^31) and where it ends. */
function readCount(text: string, pos: number): { value: number; next: number } | null {
  let value = 0;
  let end = pos;
  for (let c = text.charCodeAt(end); c >= 0x30 && c <= 0x39 && end - pos < 10; c = text.charCodeAt(++end)) value = value * 10 + (c - 0x30);
  if (end === pos || (text.charCodeAt(pos) === 0x30 && end - pos > 1) || value > 0x7fffffff) return null;
  return { value, next: end };
}

/**
 * The message to route for `output` when it is an edit marker for the call `delivered` holds (see
 * the module comment), or null when it is not one, or does not fit that call.
 */
export function editedForward(delivered: Delivered, output: string): EditedForward | null {
  if (output.length < HEAD.length + EDIT_OPEN.length) return null;
  const edit = readEdit(output);
  if (edit === null) return null;
  const form = formOf(delivered.message);
  if (form === "answer") return null;
  const handed = callHandedOn(delivered.message, form, true);
  if (handed === null) return null;
  // A call Cordon built (an embedding's client) was delivered as JSON.stringify wrote it: the offsets count in that text.
  const call = hasRaw(handed) ? handed : attachRaw({ ...handed }, JSON.stringify(handed));
  const pieces = rawParamsPieces(call);
  if (pieces === undefined) return null;
  const params = pieces.length === 1 ? pieces[0] : pieces.join("");
  if (edit.end < edit.at || edit.end > params.length) return null;
  const layout = layoutOf(call);
  // A text whose params' place was known without a walk (parse-line.ts) gets its members from this
  // one, so a second proxy editing the same text does not walk it again.
  const found = layout?.params !== undefined && layout.paramsMembers === undefined ? [] : undefined;
  const spot = locate(params, edit.at, edit.end, layout?.paramsMembers, layout?.params?.[0], found);
  if (found !== undefined && found.length > 0) layout!.paramsMembers = found;
  const insert = spot === null ? edit.value : written(spot.kind, edit.value);
  // The edited value's depth in what is routed: an envelope puts the call's params one level lower.
  const depth = spot === null ? 0 : (form === "wrapped" ? 3 : 2) + spot.path.length + (spot.kind === "value" ? 0 : 1);
  const value = spot === null || !spot.unique ? undefined : checkedValue(spot, edit.value, depth);
  const edited = value === undefined ? undefined : editedParams(call.params, spot!, value.parsed);
  const message = handOn(withParamsEdit(call, edited ?? call.params, edit.at, edit.end, insert) as Call, form, edit.id);
  if (message === null) return null;
  return { message, checked: edited !== undefined, pass: edit.pass };
}

/** Where an edit falls in a params text (`locate`). */
interface Spot {
  /** Member names and element indexes from params down: to the array an element goes into, or to the value replaced. */
  path: (string | number)[];
  /** A new first, last or only element of the array at `path`, or the value at `path` replaced. */
  kind: "first" | "last" | "only" | "value";
  /** The edited value's place as i-json.ts names it (`params.prompt[]`). */
  shape: string;
  /** Every name on the way is the only one of its key in its object (else some reader may take another member). */
  unique: boolean;
}

/** The text put at the spot: `V` with the comma its place needs. */
function written(kind: Spot["kind"], value: string): string {
  return kind === "first" ? `${value},` : kind === "last" ? `,${value}` : value;
}

/** `V` parsed, if it may be routed unscanned in its place (see the module comment). */
function checkedValue(spot: Spot, text: string, depth: number): { parsed: unknown } | undefined {
  if (judgedWithin(spot.shape)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined; // the ordinary path says what is wrong with it
  }
  // A string breaks I-JSON only with a lone surrogate, raw or escaped: its decoded value then has one.
  if (typeof parsed === "string") return (parsed as unknown as { isWellFormed(): boolean }).isWellFormed() ? { parsed } : undefined;
  if (typeof parsed === "object" && parsed !== null && iJsonViolation(text, { maxDepth: MAX_NESTING_DEPTH - depth + 1 }) !== null)
    return undefined;
  return { parsed };
}

/**
 * `params` with `value` put at `spot`: the containers on the path copied, everything else shared.
 * Undefined when the parsed params do not have the shape the walk found (they always should: they
 * are this text's parse), so the ordinary path decides.
 */
function editedParams(params: unknown, spot: Spot, value: unknown): unknown {
  const { path, kind } = spot;
  const steps = kind === "value" ? path.length - 1 : path.length;
  const edit = (node: unknown, i: number): unknown => {
    if (i === steps) {
      if (kind === "value") return replaced(node, path[i], value);
      if (!Array.isArray(node)) return undefined;
      if (kind === "only") return node.length === 0 ? [value] : undefined;
      return kind === "first" ? [value, ...node] : [...node, value];
    }
    const next = edit(childOf(node, path[i]), i + 1);
    return next === undefined ? undefined : replaced(node, path[i], next);
  };
  return edit(params, 0);
}

function childOf(node: unknown, key: string | number): unknown {
  if (typeof key === "number") return Array.isArray(node) && key < node.length ? node[key] : undefined;
  return node !== null && typeof node === "object" && !Array.isArray(node) && Object.hasOwn(node, key)
    ? (node as Record<string, unknown>)[key]
    : undefined;
}

/**
 * A copy of `node` with `key`, which it has (`childOf`), set to `value`. The spread defines every
 * member, so `__proto__` is then an own member, and setting it sets that member (as `JSON.parse`
 * makes it), not the prototype.
 */
function replaced(node: unknown, key: string | number, value: unknown): unknown {
  if (childOf(node, key) === undefined) return undefined;
  const copy = (Array.isArray(node) ? [...node] : { ...(node as object) }) as Record<string | number, unknown>;
  copy[key] = value;
  return copy;
}

/**
 * Where `[at, end)` falls in the params text `t` (an object), if at one of the marker's places (and
 * whether every name on the way is the only one of its key in its object); null otherwise. `members`: params'
 * members as a walk already found them (raw-json.ts `TextLayout.paramsMembers`, offsets into `t`),
 * so none of their values is walked past again but the one the edit is in. Without them, `found`
 * gets the members this walk found (`base` added), for the next edit of the same text.
 */
export function locate(t: string, at: number, end: number, members?: readonly number[], base = 0, found?: number[]): Spot | null {
  const walk = new Walk(t, at, end, members === undefined && found !== undefined ? [] : null);
  const start = skipWs(t, 0);
  if (t.charCodeAt(start) !== 0x7b) return null;
  const close = members === undefined ? walk.object(start, [], "params") : walk.known(start, members, base);
  const spot = walk.spot;
  if (close < 0 || skipWs(t, close) !== t.length || walk.failed || spot === null) return null;
  for (const offset of walk.members ?? []) found!.push(offset + base);
  return { path: spot.path, kind: spot.kind, shape: spot.shape, unique: !walk.repeated };
}

/** One walk of `locate`: descends only into the containers that may hold the edit, and stops in one once it is found where its end is known. */
class Walk {
  spot: Omit<Spot, "unique"> | null = null;
  /** The edit is at none of the places. */
  failed = false;
  /** A name on the way to it is not the only one of its key. */
  repeated = false;
  constructor(
    private readonly t: string,
    private readonly at: number,
    private readonly end: number,
    /** params' members as this walk finds them (four offsets each, as `TextLayout.paramsMembers`), when asked for. */
    readonly members: number[] | null = null,
  ) {}

  /**
   * The value at `pos` of member or element `key` of the container at `path` (ending at `knownEnd`
   * when that is known): walked into if it is a container that may hold the edit, else jumped over.
   * Its end, or -1. Its path and place are made only for a value the edit may be in.
   */
  private value(pos: number, path: (string | number)[], shape: string, key: string | number, knownEnd?: number): number {
    const inside = this.spot === null && this.at >= pos && (knownEnd === undefined || this.at < knownEnd);
    if (!inside) return knownEnd ?? valueEnd(this.t, pos);
    const c = this.t.charCodeAt(pos);
    const at = [...path, key];
    const place = typeof key === "number" ? `${shape}[]` : `${shape}.${key}`;
    let close: number;
    if (c === 0x7b) close = this.object(pos, at, place);
    else if (c === 0x5b) close = this.array(pos, at, place, knownEnd);
    else close = valueEnd(this.t, pos);
    if (close < 0 || this.spot !== null) return close;
    if (this.at === pos && this.end === close) this.spot = { path: at, kind: "value", shape: place };
    else if (this.at < close) this.failed = true; // inside a string, a number, or a container's brackets
    return close;
  }

  /**
   * The params object at `pos`, its members known (four offsets each, `base` more than in this
   * text): names read, only the value holding the edit walked.
   */
  known(pos: number, members: readonly number[], base: number): number {
    const keys: string[] = [];
    let held = -1;
    let close = pos + 1;
    for (let i = 0; i < members.length; i += 4) {
      const name = nameAt(this.t, members[i] - base, members[i + 1] - base);
      keys.push(readerKey(name));
      const found = this.spot !== null;
      close = this.value(members[i + 2] - base, [], "params", name, members[i + 3] - base);
      if (close !== members[i + 3] - base) return -1;
      if (!found && this.spot !== null) held = keys.length - 1;
    }
    if (held >= 0 && !single(keys, held)) this.repeated = true;
    const p = skipWs(this.t, close);
    return this.t.charCodeAt(p) === 0x7d ? p + 1 : -1;
  }

  object(pos: number, path: (string | number)[], shape: string): number {
    const t = this.t;
    let p = skipWs(t, pos + 1);
    if (t.charCodeAt(p) === 0x7d) return p + 1;
    const keys: string[] = [];
    let held = -1; // index in `keys` of the member that holds the edit
    for (;;) {
      if (t.charCodeAt(p) !== 0x22) return -1;
      const nameStart = p;
      const nameEnd = stringEnd(t, p);
      const name = nameAt(t, p, nameEnd);
      keys.push(readerKey(name));
      p = skipWs(t, nameEnd);
      if (t.charCodeAt(p) !== 0x3a) return -1;
      p = skipWs(t, p + 1);
      const found = this.spot !== null;
      const close = this.value(p, path, shape, name);
      if (close < 0) return -1;
      if (path.length === 0) this.members?.push(nameStart, nameEnd, p, close);
      if (!found && this.spot !== null) held = keys.length - 1;
      p = skipWs(t, close);
      const c = t.charCodeAt(p);
      if (c === 0x2c) p = skipWs(t, p + 1);
      else if (c === 0x7d) break;
      else return -1;
    }
    if (held >= 0 && !single(keys, held)) this.repeated = true;
    return p + 1;
  }

  /** The array at `pos` (ending at `knownEnd` when known: then its elements after the edit are not walked). */
  array(pos: number, path: (string | number)[], shape: string, knownEnd?: number): number {
    const t = this.t;
    const elements = `${shape}[]`;
    let p = skipWs(t, pos + 1);
    const empty = t.charCodeAt(p) === 0x5d;
    if (this.at === p && this.end === p) {
      this.spot = { path, kind: empty ? "only" : "first", shape: elements };
      if (knownEnd !== undefined) return knownEnd;
    }
    if (empty) return p + 1;
    if (knownEnd !== undefined && this.spot === null && this.at === knownEnd - 1 && this.end === this.at) {
      this.spot = { path, kind: "last", shape: elements };
      return knownEnd;
    }
    for (let index = 0; ; index++) {
      const close = this.value(p, path, shape, index);
      if (close < 0) return -1;
      if (knownEnd !== undefined && this.spot !== null) return knownEnd;
      p = skipWs(t, close);
      const c = t.charCodeAt(p);
      if (c === 0x2c) p = skipWs(t, p + 1);
      else if (c === 0x5d) break;
      else return -1;
    }
    if (this.spot === null && this.at === p && this.end === p) this.spot = { path, kind: "last", shape: elements };
    return p + 1;
  }
}

/** Whether `keys[at]` is the only one of its key. */
const single = (keys: readonly string[], at: number): boolean => keys.indexOf(keys[at]) === at && keys.lastIndexOf(keys[at]) === at;
