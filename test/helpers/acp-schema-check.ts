/**
 * Validates the messages of a Cordon `--trace` file against the ACP JSON schema that
 * `@agentclientprotocol/sdk` publishes (`schema/v1/schema.json`, and `schema.unstable.json` for
 * what only it describes: `proxy/*`, `mcp/message`, `session/fork`, …), with ajv.
 *
 * A trace shows each message at each hop as its inner method going from one component to the next
 * (`client`, the proxies by name, `mcp-bridge`, `agent`), with `params` for requests and
 * notifications and `payload` for responses. From that, each message on the wire is rebuilt well
 * enough to be checked:
 *
 * - a request's `params` against the `*Request` `$defs` entry whose `x-method` is its method, a
 *   notification's against the `*Notification` one, a response's `payload` against the `*Response`
 *   one of the request it answers (paired by hop and id), an error's against `Error`;
 * - `initialize` sent to a proxy is `proxy/initialize` on the wire (`InitializeProxyRequest` /
 *   `InitializeProxyResponse`);
 * - a message a proxy sends to its successor, or receives from it, travels in a `proxy/successor`
 *   envelope: `{method, params}` is checked against `ProxySuccessorRequest` /
 *   `ProxySuccessorNotification` (for every method, extension methods too);
 * - direction: a method the schema gives to the agent side (`x-side: agent`) must travel toward the
 *   agent, one given to the client side (`x-side: client`) toward the client.
 *
 * Stable methods are checked against `schema.json`; a stable method's message that only the
 * unstable schema accepts (it uses an unstable feature, such as an `acp` MCP server declaration or
 * `mcpCapabilities.acp`) passes, and is listed in `unstableUses`. Methods starting with `_`
 * (extensions, Cordon's own `_cordon/*`) are exempt from the inner check; a method neither schema
 * knows is a failure.
 *
 * MCP-over-ACP's connection form (`mcp/connect`, `mcp/message {connectionId}`, `mcp/disconnect`)
 * is not in the TypeScript SDK's schema, which kept only the connectionless form, but it is in the
 * Rust schema (`agent-client-protocol-schema`, `unstable_mcp_over_acp`), and Cordon's bridge speaks
 * it first: it is the one form that carries MCP both ways (runtime/mcp/link.ts). Its messages are
 * checked against {@link CONNECTION_FORM}, shapes re-derived from that schema, and counted under
 * `ConnectionForm <kind> <method>`; an `mcp/message` with a `connectionId` is the connection form's.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";

type Json = Record<string, any>;
type Kind = "Request" | "Response" | "Notification";

const require = createRequire(import.meta.url);
/** The package does not export its schema files: found from its main entry (`dist/v1/stable/acp.js`). */
const schemaPath = (name: string) => join(dirname(require.resolve("@agentclientprotocol/sdk")), "../../../schema/v1", name);

/** One entry of a schema: the `$defs` name and the side that handles the method. */
interface Def {
  name: string;
  side: string;
}

class Schema {
  private readonly ajv: Ajv2020;
  readonly defs: Json;
  /** `${kind} ${method}` → the `$defs` entry. */
  private readonly byMethod = new Map<string, Def>();
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(readonly file: string) {
    const schema = JSON.parse(readFileSync(schemaPath(file), "utf8")) as Json;
    this.defs = schema.$defs;
    // strict: the schema's own `x-*` annotations are not keywords ajv knows.
    this.ajv = new Ajv2020({ strict: false, allErrors: true });
    const int = (min: number, max: number) => ({
      type: "number" as const,
      validate: (n: number) => Number.isInteger(n) && n >= min && n <= max,
    });
    this.ajv.addFormat("int32", int(-(2 ** 31), 2 ** 31 - 1));
    this.ajv.addFormat("uint16", int(0, 2 ** 16 - 1));
    this.ajv.addFormat("uint32", int(0, 2 ** 32 - 1));
    this.ajv.addFormat("int64", int(-Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER));
    this.ajv.addFormat("uint64", int(0, Number.MAX_SAFE_INTEGER));
    this.ajv.addFormat("double", { type: "number", validate: (n: number) => Number.isFinite(n) });
    this.ajv.addFormat("uri", (s: string) => URL.canParse(s));
    this.ajv.addSchema(schema, file);
    for (const [name, def] of Object.entries(this.defs)) {
      const method = def["x-method"];
      const kind = /(Request|Response|Notification)$/.exec(name)?.[1] as Kind | undefined;
      if (typeof method === "string" && kind) this.byMethod.set(`${kind} ${method}`, { name, side: def["x-side"] });
    }
  }

  def(kind: Kind, method: string): Def | undefined {
    return this.byMethod.get(`${kind} ${method}`);
  }

  validate(defName: string, value: unknown): ErrorObject[] {
    let fn = this.compiled.get(defName);
    if (!fn) {
      fn = this.ajv.getSchema(`${this.file}#/$defs/${defName}`);
      if (!fn) throw new Error(`no $defs entry ${defName} in ${this.file}`);
      this.compiled.set(defName, fn);
    }
    return fn(value) ? [] : [...(fn.errors ?? [])];
  }
}

const connectionMessage = {
  type: "object",
  properties: {
    connectionId: { type: "string" },
    method: { type: "string" },
    params: { type: ["object", "null"] },
    _meta: { type: ["object", "null"] },
  },
  required: ["connectionId", "method"],
};

/**
 * The connection form's messages, by `${kind} ${method}` (`mcp/message#connection` for an
 * `mcp/message` with a `connectionId`): the side that handles each (as the schema's `x-side`), and
 * its shape. `mcp/connect` and `mcp/disconnect` go from the MCP client's side toward the server's
 * provider (the client side); `mcp/message` goes both ways, answered with the bare inner MCP result.
 */
const CONNECTION_FORM: Record<string, { side: string; schema: Json }> = {
  "Request mcp/connect": {
    side: "client",
    schema: {
      type: "object",
      properties: { serverId: { type: "string" }, _meta: { type: ["object", "null"] } },
      required: ["serverId"],
    },
  },
  "Response mcp/connect": {
    side: "",
    schema: {
      type: "object",
      properties: { connectionId: { type: "string" }, _meta: { type: ["object", "null"] } },
      required: ["connectionId"],
    },
  },
  "Request mcp/disconnect": {
    side: "client",
    schema: {
      type: "object",
      properties: { connectionId: { type: "string" }, _meta: { type: ["object", "null"] } },
      required: ["connectionId"],
    },
  },
  "Response mcp/disconnect": { side: "", schema: { type: "object" } },
  "Request mcp/message#connection": { side: "both", schema: connectionMessage },
  "Notification mcp/message#connection": { side: "both", schema: connectionMessage },
  "Response mcp/message#connection": { side: "", schema: {} },
};
let connectionAjv: Ajv2020 | null = null;

let schemas: { stable: Schema; unstable: Schema } | null = null;
function load() {
  schemas ??= { stable: new Schema("schema.json"), unstable: new Schema("schema.unstable.json") };
  return schemas;
}

export interface Violation {
  /** Which hop and message: `request session/new client → passthrough (id 2)`. */
  where: string;
  /** The `$defs` entry (and schema file) it was checked against, or why it could not be. */
  against: string;
  errors: string[];
  value: unknown;
}

export interface CheckResult {
  /** Messages checked (an envelope and its inner message count once each). */
  checked: number;
  /** Checked per `$defs` entry. */
  byDef: Map<string, number>;
  violations: Violation[];
  /** Stable methods' messages that only the unstable schema accepts, by `$defs` entry. */
  unstableUses: Map<string, number>;
  /** Extension (`_`) messages whose inner part was exempt, by method. */
  exempt: Map<string, number>;
}

const describeErrors = (errors: ErrorObject[]) =>
  errors
    .slice(0, 8)
    .map((e) => `${e.instancePath || "/"} ${e.message}${e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : ""}`);

/**
 * Checks one value against the `$defs` entry for `method` and `kind`: `schema.json` when it has the
 * method, else `schema.unstable.json`.
 */
function checkOne(
  result: CheckResult,
  where: string,
  kind: Kind,
  method: string,
  value: unknown,
  direction: "toAgent" | "toClient" | null,
): void {
  const { stable, unstable } = load();
  const count = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);
  if (method.startsWith("_")) {
    count(result.exempt, method);
    return;
  }
  result.checked++;
  const connection = CONNECTION_FORM[`${kind} ${method}`];
  if (connection) {
    const name = `ConnectionForm ${kind} ${method.replace("#connection", "")}`;
    count(result.byDef, name);
    if (direction && connection.side === "client" && direction !== "toClient") {
      result.violations.push({ where, against: name, errors: ["travels toward the agent, but the client side handles it"], value });
    }
    connectionAjv ??= new Ajv2020({ strict: false, allErrors: true });
    const validate = connectionAjv.compile(connection.schema);
    if (!validate(value)) result.violations.push({ where, against: name, errors: describeErrors(validate.errors ?? []), value });
    return;
  }
  const inStable = stable.def(kind, method);
  const def = inStable ?? unstable.def(kind, method);
  if (!def) {
    result.violations.push({ where, against: `no ${kind} for method ${method} in either schema`, errors: ["unknown method"], value });
    return;
  }
  count(result.byDef, def.name);
  if (direction && kind !== "Response") {
    const expected = def.side === "agent" ? "toAgent" : def.side === "client" ? "toClient" : null;
    if (expected && expected !== direction) {
      result.violations.push({
        where,
        against: `${def.name} (x-side ${def.side})`,
        errors: [
          `travels ${direction === "toAgent" ? "toward the agent" : "toward the client"}, but the schema has the ${def.side} side handle it`,
        ],
        value,
      });
    }
  }
  const errors = (inStable ? stable : unstable).validate(def.name, value);
  if (errors.length === 0) return;
  if (inStable && unstable.def(kind, method) && unstable.validate(unstable.def(kind, method)!.name, value).length === 0) {
    count(result.unstableUses, def.name);
    return;
  }
  result.violations.push({
    where,
    against: `${def.name} (${inStable ? "schema.json" : "schema.unstable.json"})`,
    errors: describeErrors(errors),
    value,
  });
}

function checkError(result: CheckResult, where: string, error: unknown): void {
  result.checked++;
  result.byDef.set("Error", (result.byDef.get("Error") ?? 0) + 1);
  const errors = load().stable.validate("Error", error);
  if (errors.length) result.violations.push({ where, against: "Error (schema.json)", errors: describeErrors(errors), value: error });
}

/** Parses a trace file (NDJSON events). */
export function readTrace(path: string): Json[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Json);
}

/**
 * The chain's components, client first and agent last, as the first `initialize` travelled
 * through them.
 */
function chainOrder(events: Json[]): string[] {
  const order = ["client"];
  for (const e of events) {
    if (e.type !== "request" || e.method !== "initialize" || e.from !== order[order.length - 1]) continue;
    order.push(e.to);
    if (e.to === "agent") return order;
  }
  throw new Error(`the trace does not show initialize reaching the agent (got as far as ${order.join(" → ")})`);
}

/** Checks every request, notification and response of a trace. */
export function checkTrace(events: Json[]): CheckResult {
  const result: CheckResult = { checked: 0, byDef: new Map(), violations: [], unstableUses: new Map(), exempt: new Map() };
  const order = chainOrder(events);
  const position = new Map(order.map((name, i) => [name, i]));
  const isProxy = (name: string) => name !== "client" && name !== "agent";
  /** Requests waiting for their response, by hop (from, to) and id. */
  const pending = new Map<string, { method: string; envelope: boolean }>();
  const hopKey = (from: string, to: string, id: unknown) => `${from}\u0000${to}\u0000${JSON.stringify(id)}`;

  for (const e of events) {
    if (e.type !== "request" && e.type !== "notification" && e.type !== "response") continue;
    const from: string = e.from;
    const to: string = e.to;
    const a = position.get(from);
    const b = position.get(to);
    if (a === undefined || b === undefined) {
      result.violations.push({
        where: `${e.type} ${e.method ?? ""} ${from} → ${to}`,
        against: "the chain",
        errors: [`a hop outside the chain ${order.join(" → ")}`],
        value: e,
      });
      continue;
    }
    const toAgent = b > a;
    // Between a proxy and its successor the message travels in a proxy/successor envelope.
    const envelope = (toAgent && isProxy(from)) || (!toAgent && isProxy(to));
    const id = e.type === "notification" ? "" : ` (id ${JSON.stringify(e.id)})`;

    if (e.type === "response") {
      const key = hopKey(to, from, e.id);
      const request = pending.get(key);
      const where = `response to ${request?.method.replace("#connection", "") ?? "?"} ${from} → ${to}${id}`;
      if (!request) {
        result.violations.push({
          where,
          against: "a request on this hop",
          errors: ["answers no request seen on this hop"],
          value: e.payload,
        });
        continue;
      }
      pending.delete(key);
      if (request.envelope && !e.is_error)
        checkOne(result, `${where}, proxy/successor envelope`, "Response", "proxy/successor", e.payload, null);
      if (e.is_error) checkError(result, where, e.payload);
      else checkOne(result, where, "Response", request.method, e.payload, null);
      continue;
    }

    const kind: Kind = e.type === "request" ? "Request" : "Notification";
    // What is on the wire for `initialize` to a proxy is `proxy/initialize`.
    const method: string =
      e.method === "initialize" && isProxy(to)
        ? "proxy/initialize"
        : e.method === "mcp/message" && typeof e.params?.connectionId === "string"
          ? "mcp/message#connection"
          : e.method;
    const where = `${e.type} ${e.method === "initialize" ? method : e.method} ${from} → ${to}${id}`;
    if (e.type === "request") pending.set(hopKey(from, to, e.id), { method, envelope });
    if (envelope) {
      const wrapped: Json = { method: e.method };
      if (e.params !== undefined && e.params !== null) wrapped.params = e.params;
      checkOne(result, `${where}, proxy/successor envelope`, kind, "proxy/successor", wrapped, null);
    }
    checkOne(result, where, kind, method, e.params ?? null, method === "proxy/initialize" ? null : toAgent ? "toAgent" : "toClient");
  }
  return result;
}

/** A readable account of violations (for a failing assertion). */
export function report(violations: Violation[], max = 20): string {
  return (
    violations
      .slice(0, max)
      .map((v) => `- ${v.where}\n  against ${v.against}\n  ${v.errors.join("\n  ")}\n  value: ${JSON.stringify(v.value)?.slice(0, 600)}`)
      .join("\n") + (violations.length > max ? `\n… and ${violations.length - max} more` : "")
  );
}
