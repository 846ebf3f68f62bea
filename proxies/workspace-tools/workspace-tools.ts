// workspace-tools: gives every agent in the chain an MCP server (`workspace`) with two tools that
// stay inside the sandbox:
//
// - `recall {query, limit?}` searches the earlier prompts and answers of *this* ACP session, as the
//   proxy saw them pass (prompt text, `agent_message_chunk` text, and the history `session/load`
//   replays). Turns still running are not "earlier"; each session's record is bounded.
// - `read_file {path, line?, limit?}` reads a file through ACP `fs/read_text_file` toward the
//   client. The proxy originates that request, so it works only when the chain config grants this
//   proxy `fs:read` and the client advertised `fs.readTextFile`; otherwise the tool answers with a
//   tool error saying which is missing. Relative paths are resolved against the session's cwd.
//
// Config (all optional): {"serverName": "workspace", "maxEntries": 200, "maxEntryChars": 4000,
// "maxSessions": 64, "maxFileChars": 100000}.
import {
  Config,
  InitializeRequest,
  PromptRequest,
  Proxy,
  Response,
  SessionUpdate,
  ToolCall,
  JSON,
  getBool,
  getObj,
  getString,
  quote,
  register,
} from "@cordon/sdk-as";

/** One recorded prompt or answer. */
class Entry {
  constructor(public turn: i32, public user: bool, public text: string) {}
}

/** What the proxy has seen of one ACP session. */
class History {
  entries: Entry[] = new Array<Entry>(0);
  turn: i32 = 0;
  /** A prompt of this session is in flight: its turn is not "earlier" yet. */
  running: bool = false;
  /** The agent's answer being built in the current turn. */
  answer: Entry | null = null;
  cwd: string = "";
  lastUse: i64 = 0;
}

/** A `read_file` call waiting for the client's `fs/read_text_file` answer. */
class Read {
  constructor(public call: ToolCall, public path: string, public requestId: i64) {}
}

const RECALL_SCHEMA = `{"type":"object","properties":{
  "query":{"type":"string","description":"Words to look for (case-insensitive); empty lists the latest entries"},
  "limit":{"type":"integer","minimum":1,"maximum":20,"description":"How many entries to return (default 5)"}},
  "required":["query"]}`;

const READ_SCHEMA = `{"type":"object","properties":{
  "path":{"type":"string","description":"Absolute path, or relative to the session's working directory"},
  "line":{"type":"integer","minimum":1,"description":"First line to read (1-based)"},
  "limit":{"type":"integer","minimum":1,"description":"How many lines to read"}},
  "required":["path"]}`;

class WorkspaceTools extends Proxy {
  sessions: Map<string, History> = new Map<string, History>();
  reads: Map<string, Read> = new Map<string, Read>();
  clientCanRead: bool = false;
  uses: i64 = 0;
  nextRead: i32 = 0;
  maxEntries: i32 = 200;
  maxEntryChars: i32 = 4000;
  maxSessions: i32 = 64;
  maxFileChars: i32 = 100000;

  constructor() {
    super();
    this.addMcpServer("workspace")
      .tool("recall", "Search the earlier prompts and answers of this conversation (this ACP session only).", RECALL_SCHEMA)
      .tool("read_file", "Read a text file of the workspace through the editor (needs the client's permission).", READ_SCHEMA);
  }

  onConfigure(config: Config): void {
    this.mcpServers[0].name = config.getString("serverName", "workspace");
    this.maxEntries = <i32>config.getInt("maxEntries", 200);
    this.maxEntryChars = <i32>config.getInt("maxEntryChars", 4000);
    this.maxSessions = <i32>config.getInt("maxSessions", 64);
    this.maxFileChars = <i32>config.getInt("maxFileChars", 100000);
  }

  onInitialize(request: InitializeRequest): void {
    const caps = request.readClientCapabilities();
    if (caps != null) {
      const fs = getObj(caps, "fs");
      if (fs != null) this.clientCanRead = getBool(fs, "readTextFile", false);
    }
    this.forward(request);
  }

  // ---- recording what passes

  onPrompt(prompt: PromptRequest): void {
    const h = this.history(prompt.sessionId);
    h.turn++;
    h.running = true;
    h.answer = null;
    this.record(h, new Entry(h.turn, true, prompt.text));
    this.forward(prompt);
  }

  onSessionUpdate(update: SessionUpdate): void {
    const kind = update.kind;
    if ((kind == "agent_message_chunk" || kind == "user_message_chunk") && update.isTextChunk) {
      const h = this.history(update.sessionId);
      const text = update.text;
      if (kind == "agent_message_chunk") {
        let answer = h.answer;
        if (answer == null) {
          answer = new Entry(h.turn, false, "");
          h.answer = answer;
          this.record(h, answer);
        }
        if (answer.text.length < this.maxEntryChars) answer.text = this.clip(answer.text + text);
      } else if (!h.running) {
        // `session/load` replays the history: a prompt is one user_message_chunk per block.
        const last = h.entries.length ? h.entries[h.entries.length - 1] : null;
        if (last != null && last.user && h.answer == null) last.text = this.clip(last.text + "\n" + text);
        else {
          h.turn++;
          h.answer = null;
          this.record(h, new Entry(h.turn, true, text));
        }
      }
    }
    this.forward(update);
  }

  onResponse(response: Response): void {
    const request = response.request!;
    const method = response.method;
    if (method == "session/prompt") {
      const h = this.history(request.sessionId);
      h.running = false;
      h.answer = null;
    } else if (!response.isError && (method == "session/new" || method == "session/load" || method == "session/resume" || method == "session/fork")) {
      let id = request.sessionId;
      if (method == "session/new" || method == "session/fork") {
        const s = getString(response.readResult(), "sessionId");
        id = s == null ? "" : s;
      }
      const cwd = getString(request.readParams(), "cwd");
      if (id.length && cwd != null) this.history(id).cwd = cwd;
    } else if (!response.isError && (method == "session/close" || method == "session/delete")) {
      this.sessions.delete(request.sessionId);
    }
    this.relay(response);
  }

  private history(sessionId: string): History {
    let h: History;
    if (this.sessions.has(sessionId)) h = this.sessions.get(sessionId);
    else {
      if (this.sessions.size >= this.maxSessions) this.evictOldest();
      h = new History();
      this.sessions.set(sessionId, h);
    }
    h.lastUse = ++this.uses;
    return h;
  }

  private evictOldest(): void {
    const ids = this.sessions.keys();
    let oldest = "";
    let at = i64.MAX_VALUE;
    for (let i = 0; i < ids.length; i++) {
      const use = this.sessions.get(ids[i]).lastUse;
      if (use < at) {
        at = use;
        oldest = ids[i];
      }
    }
    this.sessions.delete(oldest);
  }

  private record(h: History, entry: Entry): void {
    entry.text = this.clip(entry.text);
    h.entries.push(entry);
    if (h.entries.length > this.maxEntries) h.entries.shift();
  }

  private clip(text: string): string {
    return text.length > this.maxEntryChars ? text.substring(0, this.maxEntryChars) : text;
  }

  // ---- the tools

  onToolCall(call: ToolCall): void {
    if (call.tool == "recall") this.recall(call);
    else if (call.tool == "read_file") this.readFile(call);
    else super.onToolCall(call);
  }

  private recall(call: ToolCall): void {
    const query = call.getString("query").trim();
    let limit = <i32>call.getInt("limit", 5);
    if (limit < 1) limit = 1;
    if (limit > 20) limit = 20;
    if (!this.sessions.has(call.sessionId)) {
      call.reply("Nothing recorded in this session yet.");
      return;
    }
    const h = this.sessions.get(call.sessionId);
    const words = query.toLowerCase().split(" ").filter((w: string) => w.length > 0);
    // Earlier entries only (not the turn that is running), scored by how many words they contain;
    // best first, the most recent first among equals.
    const n = h.entries.length;
    const scores = new Array<i32>(n);
    for (let i = 0; i < n; i++) {
      const e = h.entries[i];
      if (h.running && e.turn == h.turn) continue;
      let score = 1;
      if (words.length) {
        score = 0;
        const lower = e.text.toLowerCase();
        for (let w = 0; w < words.length; w++) if (lower.includes(words[w])) score++;
      }
      scores[i] = score;
    }
    const found = new Array<Entry>(0);
    for (let score = words.length > 0 ? words.length : 1; score >= 1; score--) {
      for (let i = n - 1; i >= 0; i--) if (scores[i] == score) found.push(h.entries[i]);
    }
    if (found.length == 0) {
      call.reply(words.length ? `No earlier prompt or answer of this session mentions "${query}".` : "Nothing earlier in this session yet.");
      return;
    }
    const shown = found.length < limit ? found.length : limit;
    const lines = new Array<string>(0);
    lines.push(words.length ? `${found.length} earlier entr${found.length == 1 ? "y matches" : "ies match"} "${query}" (showing ${shown}):` : `The ${shown} latest entries:`);
    for (let i = 0; i < shown; i++) {
      const e = found[i];
      lines.push(`[turn ${e.turn}, ${e.user ? "user" : "agent"}] ${snippet(e.text, words)}`);
    }
    call.reply(lines.join("\n"));
  }

  private readFile(call: ToolCall): void {
    if (!this.clientCanRead) {
      call.fail("read_file is unavailable: the client did not advertise fs.readTextFile");
      return;
    }
    let path = call.getString("path");
    if (path.length == 0) {
      call.fail("read_file needs a path");
      return;
    }
    if (!path.startsWith("/")) {
      const cwd = this.sessions.has(call.sessionId) ? this.sessions.get(call.sessionId).cwd : "";
      if (cwd.length == 0) {
        call.fail(`read_file needs an absolute path (the session's working directory is unknown): ${path}`);
        return;
      }
      path = (cwd.endsWith("/") ? cwd : cwd + "/") + path;
    }
    let params = `{"sessionId":${quote(call.sessionId)},"path":${quote(path)}`;
    if (call.has("line")) params += `,"line":${call.getInt("line", 1).toString()}`;
    if (call.has("limit")) params += `,"limit":${call.getInt("limit", 1).toString()}`;
    const tag = "read:" + (++this.nextRead).toString();
    const id = this.requestClient("fs/read_text_file", JSON.Raw.from(params + "}"), tag);
    this.reads.set(tag, new Read(call, path, id));
  }

  onReply(tag: string, response: Response): void {
    if (!this.reads.has(tag)) return;
    const read = this.reads.get(tag);
    this.reads.delete(tag);
    if (read.call.cancelled) return;
    if (response.isError) {
      read.call.fail(`could not read ${read.path}: ${response.errorMessage}`);
      return;
    }
    const content = getString(response.readResult(), "content");
    if (content == null) {
      read.call.fail(`could not read ${read.path}: the client's answer has no content`);
    } else if (content.length > this.maxFileChars) {
      read.call.reply(content.substring(0, this.maxFileChars) + `\n[… truncated: ${content.length - this.maxFileChars} more characters]`);
    } else {
      read.call.reply(content);
    }
  }

  onToolCallCancelled(call: ToolCall): void {
    const tags = this.reads.keys();
    for (let i = 0; i < tags.length; i++) {
      const read = this.reads.get(tags[i]);
      if (read.call === call) {
        this.cancelRequest(read.requestId);
        this.reads.delete(tags[i]);
      }
    }
  }
}

/** About 160 characters of `text` around the first word found (all of it when short). */
function snippet(text: string, words: string[]): string {
  const flat = text.replaceAll("\n", " ");
  if (flat.length <= 160) return flat;
  let at = 0;
  const lower = flat.toLowerCase();
  for (let w = 0; w < words.length; w++) {
    const i = lower.indexOf(words[w]);
    if (i >= 0) {
      at = i;
      break;
    }
  }
  let start = at - 60;
  if (start < 0) start = 0;
  let end = start + 160;
  if (end > flat.length) {
    end = flat.length;
    start = end - 160;
  }
  return (start > 0 ? "…" : "") + flat.substring(start, end) + (end < flat.length ? "…" : "");
}

register(new WorkspaceTools());
