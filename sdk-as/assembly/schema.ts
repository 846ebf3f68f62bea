// The checks a tool's declared input schema makes on `tools/call` arguments before the author's hook
// runs. Not a JSON Schema validator: the subset an AssemblyScript author declares for a tool —
//
//   {"type":"object",
//    "properties": {"<name>": {"type": "string"|"number"|"integer"|"boolean"|"array"|"object"|"null"
//                              (or a list of these), "enum": [<strings, numbers, booleans, null>]}, …},
//    "required": ["<name>", …]}
//
// — checked on the top-level members only: a required member is present, a declared member has one
// of its declared types (`integer`: a number without a fractional part), a member with an `enum` is
// one of its values. Anything else in the schema (nested schemas, `minLength`, `pattern`,
// `additionalProperties`, `$ref`, …) is not checked here; the tool checks it itself. A schema that is
// not an object, or that declares nothing of the above, checks nothing.
//
// Cost: the schema is parsed once, at the tool's first call; a call costs one lookup per declared
// member present in the arguments plus one per required name.
import { JSON } from "json-as";
import { arrString, getArr, getObj, quote, stringValue, typeOf } from "./json";

const NUMBER_KINDS: u16[] = [
  JSON.Types.U8,
  JSON.Types.U16,
  JSON.Types.U32,
  JSON.Types.U64,
  JSON.Types.I8,
  JSON.Types.I16,
  JSON.Types.I32,
  JSON.Types.I64,
  JSON.Types.F32,
  JSON.Types.F64,
];

/** The JSON type name of a value, as JSON Schema spells it (`integer` never: see `isInteger`). */
function typeName(v: JSON.Value): string {
  const t = typeOf(v);
  if (t == JSON.Types.String) return "string";
  if (t == JSON.Types.Object) return "object";
  if (t == JSON.Types.Array) return "array";
  if (t == JSON.Types.Bool) return "boolean";
  if (t == JSON.Types.Null) return "null";
  if (NUMBER_KINDS.includes(t)) return "number";
  return "unknown";
}

function numberOf(v: JSON.Value): f64 {
  return typeOf(v) == JSON.Types.F64 ? v.get<f64>() : parseFloat(v.toString());
}

/** A value as a comparable key: its type and its decoded value (`"a"` and `"\u0061"` are equal, so are 1 and 1.0). */
function keyOf(v: JSON.Value): string {
  const name = typeName(v);
  if (name == "string") return "s:" + stringValue(v);
  if (name == "number") return "n:" + numberOf(v).toString();
  if (name == "boolean") return v.get<bool>() ? "b:true" : "b:false";
  if (name == "null") return "null";
  return "x:" + JSON.stringify<JSON.Value>(v);
}

class Member {
  /** Declared type names ("" entries never; empty: any type). */
  types: string[] = new Array<string>(0);
  /** Keys (`keyOf`) of the enum's values; null: no enum. */
  allowed: string[] | null = null;
  /** The enum's values as written, for the error message. */
  shown: string = "";

  constructor(public name: string) {}

  /** "" when `v` fits, else why not. */
  check(v: JSON.Value): string {
    if (this.types.length) {
      const name = typeName(v);
      let ok = false;
      for (let i = 0; i < this.types.length && !ok; i++) {
        const want = this.types[i];
        if (want == name) ok = true;
        else if (want == "integer" && name == "number") {
          const n = numberOf(v);
          ok = isFinite(n) && Math.floor(n) == n;
        }
      }
      if (!ok) return `argument ${quote(this.name)} must be ${this.types.length == 1 ? this.types[0] : "one of " + this.types.join(", ")}, not ${name}`;
    }
    const allowed = this.allowed;
    if (allowed != null && !allowed.includes(keyOf(v))) return `argument ${quote(this.name)} must be one of ${this.shown}`;
    return "";
  }
}

/** The checks of one tool's input schema (see the top of this file). */
export class ArgSchema {
  required: string[] = new Array<string>(0);
  members: Member[] = new Array<Member>(0);

  /** Reads the subset out of JSON Schema text; a schema that is not an object checks nothing. */
  static compile(text: string): ArgSchema {
    const s = new ArgSchema();
    const trimmed = text.trim();
    if (!trimmed.startsWith("{")) return s;
    const root = JSON.parse<JSON.Obj>(trimmed);
    const required = getArr(root, "required");
    if (required != null) {
      for (let i = 0, n = required.length; i < n; i++) {
        const r = arrString(required, i);
        if (r != null) s.required.push(r);
      }
    }
    const props = getObj(root, "properties");
    if (props == null) return s;
    const keys = props.keys();
    for (let i = 0; i < keys.length; i++) {
      const decl = getObj(props, keys[i]);
      if (decl == null) continue;
      const m = new Member(keys[i]);
      const t = decl.get("type");
      if (t != null && typeOf(t) == JSON.Types.String) m.types.push(stringValue(t));
      else {
        const ts = getArr(decl, "type");
        if (ts != null) {
          for (let k = 0, n = ts.length; k < n; k++) {
            const one = arrString(ts, k);
            if (one != null) m.types.push(one);
          }
        }
      }
      const e = getArr(decl, "enum");
      if (e != null) {
        const allowed = new Array<string>(0);
        const shown = new Array<string>(0);
        for (let k = 0, n = e.length; k < n; k++) {
          allowed.push(keyOf(e.at(k)));
          shown.push(JSON.stringify<JSON.Value>(e.at(k)));
        }
        m.allowed = allowed;
        m.shown = shown.join(", ");
      }
      if (m.types.length || m.allowed != null) s.members.push(m);
    }
    return s;
  }

  /** "" when the arguments fit, else the first problem found (naming the argument). */
  check(args: JSON.Obj): string {
    for (let i = 0; i < this.required.length; i++) {
      if (!args.has(this.required[i])) return `missing required argument ${quote(this.required[i])}`;
    }
    for (let i = 0; i < this.members.length; i++) {
      const m = this.members[i];
      const v = args.get(m.name);
      if (v == null) continue;
      const why = m.check(v);
      if (why.length) return why;
    }
    return "";
  }
}
