// tool-guard: answers `session/request_permission` itself when the tool call matches a deny
// pattern, so the user is never asked about (and cannot approve) a forbidden action.
//
// Config: {"deny": ["rm -rf*", "*password*", ...]} — case-insensitive globs, the SDK's `Glob` in
// text mode (`*` any run of characters, `/` included; `?` one character; `[a-z]` classes; `\`
// escapes), that must match a whole text. The texts tried, in order:
// the tool call's `title`; the JSON text of its `rawInput`; every string inside `rawInput`; and
// every array of strings inside `rawInput` joined with spaces (so `["rm","-rf","/"]` is
// `rm -rf /`). On a match it selects the first `reject_once`/`reject_always` option (or answers
// `cancelled` when none is offered) and logs which pattern matched what. Otherwise the request
// goes on to the client and its answer is relayed back.
import { Config, Glob, JSON, LogLevel, PermissionOutcome, PermissionRequest, Proxy, getObj, register, stringValue, typeOf } from "@cordon/sdk-as";

class ToolGuard extends Proxy {
  /** Deny patterns as configured, and compiled (case-insensitive, text mode). */
  patterns: string[] = [];
  deny: Glob[] = [];
  denied: i32 = 0;
  // What matched, for the log line.
  private pattern: string = "";
  private what: string = "";

  onConfigure(config: Config): void {
    const patterns = config.getStrings("deny");
    this.patterns = new Array<string>(0);
    this.deny = new Array<Glob>(0);
    for (let i = 0; i < patterns.length; i++) {
      if (patterns[i].length == 0) continue;
      this.patterns.push(patterns[i]);
      this.deny.push(Glob.compile(patterns[i], Glob.TEXT | Glob.IGNORE_CASE));
    }
  }

  onPermissionRequest(request: PermissionRequest): void {
    if (this.deny.length == 0 || !this.matches(request)) {
      this.forward(request);
      return;
    }
    this.denied++;
    const reject = request.firstRejectOption();
    if (reject != null) this.respond(request, PermissionOutcome.selected(reject.optionId));
    else this.respond(request, PermissionOutcome.cancelled());
    const answer = reject != null ? `selected "${reject.optionId}"` : "cancelled (no reject option offered)";
    this.log(LogLevel.Warn, `denied tool call "${request.title}": ${this.what} matches "${this.pattern}"; ${answer}`);
  }

  private matches(request: PermissionRequest): bool {
    if (this.test("title", request.title)) return true;
    const tc = request.readToolCall();
    if (tc == null) return false;
    const raw = tc.get("rawInput");
    if (raw == null) return false;
    if (this.test("rawInput", JSON.stringify<JSON.Value>(raw))) return true;
    const t = typeOf(raw);
    if (t == JSON.Types.String) return this.test("rawInput", stringValue(raw));
    if (t == JSON.Types.Object) return this.inObj(getObj(tc, "rawInput")!, "rawInput");
    if (t == JSON.Types.Array) return this.inArr(tc.getAs<JSON.Arr>("rawInput"), "rawInput");
    return false;
  }

  private inObj(obj: JSON.Obj, path: string): bool {
    const keys = obj.keys();
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      const v = obj.get(key)!;
      const t = typeOf(v);
      const at = path + "." + key;
      if (t == JSON.Types.String && this.test(at, stringValue(v))) return true;
      if (t == JSON.Types.Object && this.inObj(obj.getAs<JSON.Obj>(key), at)) return true;
      if (t == JSON.Types.Array && this.inArr(obj.getAs<JSON.Arr>(key), at)) return true;
    }
    return false;
  }

  private inArr(arr: JSON.Arr, path: string): bool {
    const words = new Array<string>(0);
    let allStrings = arr.length > 0;
    for (let i = 0, n = arr.length; i < n; i++) {
      const v = arr.at(i);
      const t = typeOf(v);
      const at = `${path}[${i}]`;
      if (t == JSON.Types.String) {
        const s = stringValue(v);
        words.push(s);
        if (this.test(at, s)) return true;
        continue;
      }
      allStrings = false;
      if (t == JSON.Types.Object && this.inObj(arr.getAs<JSON.Obj>(i), at)) return true;
      if (t == JSON.Types.Array && this.inArr(arr.getAs<JSON.Arr>(i), at)) return true;
    }
    return allStrings && this.test(path, words.join(" "));
  }

  private test(what: string, text: string): bool {
    if (text.length == 0) return false;
    for (let i = 0; i < this.deny.length; i++) {
      if (this.deny[i].matches(text)) {
        this.pattern = this.patterns[i];
        this.what = what;
        return true;
      }
    }
    return false;
  }
}

register(new ToolGuard());
