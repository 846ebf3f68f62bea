// Per-session state that frees itself, and the proxy's own slash commands.
import { JSON } from "json-as";
import { Builder, quote } from "./json";

/** Anything holding per-session state the SDK should free when a session ends. */
export class SessionStore {
  /** The session ended (`session/close` or `session/delete` answered): drop what is kept for it. */
  forget(sessionId: string): void {}
}

const stores = new Array<SessionStore>(0);

/** Frees every `PerSession` store's entry for a session (the SDK calls it before `onSessionClosed`). */
export function forgetSession(sessionId: string): void {
  for (let i = 0; i < stores.length; i++) stores[i].forget(sessionId);
}

/**
 * State per ACP session, freed by the SDK when the session is closed or deleted. `T` is a class
 * with a constructor without arguments; `of(sessionId)` creates it on first use.
 *
 *   class Meter { chunks: i32 = 0; }
 *   class Usage extends Proxy {
 *     meters: PerSession<Meter> = new PerSession<Meter>();
 *     onSessionUpdate(u: SessionUpdate): void { this.meters.of(u.sessionId).chunks++; this.forward(u); }
 *   }
 */
export class PerSession<T> extends SessionStore {
  private map: Map<string, T> = new Map<string, T>();

  constructor() {
    super();
    stores.push(this);
  }

  /** The state of a session, created (`new T()`) when there is none yet. */
  of(sessionId: string): T {
    if (this.map.has(sessionId)) return this.map.get(sessionId);
    const value = instantiate<T>();
    this.map.set(sessionId, value);
    return value;
  }

  has(sessionId: string): bool {
    return this.map.has(sessionId);
  }

  /** Replaces a session's state. */
  set(sessionId: string, value: T): void {
    this.map.set(sessionId, value);
  }

  delete(sessionId: string): void {
    this.map.delete(sessionId);
  }

  forget(sessionId: string): void {
    this.map.delete(sessionId);
  }

  /** Sessions with state. */
  sessions(): string[] {
    return this.map.keys();
  }

  get size(): i32 {
    return this.map.size;
  }
}

/** A slash command the proxy offers (an entry of `available_commands_update`). */
export class AvailableCommand {
  constructor(
    public name: string,
    public description: string,
    /** The input hint (`input: {hint}`); "" for a command without input. */
    public hint: string = "",
  ) {}

  toJson(): string {
    const b = new Builder().str('{"name":').str(quote(this.name)).str(',"description":').str(quote(this.description));
    if (this.hint.length) b.str(',"input":{"hint":').str(quote(this.hint)).str("}");
    return b.str("}").build();
  }

  toObj(): JSON.Obj {
    return JSON.parse<JSON.Obj>(this.toJson());
  }
}
