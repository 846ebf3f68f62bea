// skills: Claude-Code-style skills for any agent. Each configured skill (name, description, body)
// is advertised in one short list added to a session's first prompt; its body is served on demand
// as an MCP resource (and as an MCP prompt) of the proxy's MCP server, over MCP-over-ACP — so the
// agent pays for a skill's instructions only when it reads them.
//
// - Config: {"skills": [{"name", "description", "body"}, …], "serverName": "skills"}.
// - Resources are per session: session S lists and reads `skill://<S>/<name>` (S percent-encoded).
//   A read arrives through a serverId, which the SDK knows to belong to one session; a read of a
//   URI of another session (or of no skill) is answered MCP's "resource not found", so one session
//   cannot read through another's connection.
// - Prompts: `prompts/get {name}` answers the skill's body as one user message (same in every session).
// - The list is added (a text block before the user's) to the first prompt of each session that has
//   the proxy's server declared; a session without it (the agent side does not speak MCP-over-ACP)
//   gets nothing, and the proxy warns once.
// - Needs no grant: it only adds to prompts it forwards and answers MCP requests made to it.
import { Config, JSON, LogLevel, McpServer, PerSession, PromptRequest, Proxy, Resource, ResourceRead, TextBlock, arrObj, getArr, getString, register } from "@cordon/sdk-as";

class Skill {
  constructor(
    public name: string,
    public description: string,
    public body: string,
  ) {}
}

class Seen {
  prompted: bool = false;
}

/** `s` with the characters that would end a URI path segment (and `%`) percent-encoded. */
function segment(s: string): string {
  let out = "";
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c == 0x25 || c == 0x2f || c == 0x3f || c == 0x23 || c <= 0x20 || c == 0x7f) {
      const h = c.toString(16).toUpperCase();
      out += "%" + (h.length < 2 ? "0" + h : h);
    } else out += String.fromCharCode(c);
  }
  return out;
}

class Skills extends Proxy {
  skills: Skill[] = new Array<Skill>(0);
  server: McpServer | null = null;
  seen: PerSession<Seen> = new PerSession<Seen>();
  warned: bool = false;

  onConfigure(config: Config): void {
    const server = this.addMcpServer(config.getString("serverName", "skills"));
    server.dynamicResources = true;
    server.instructions = "Skills: read a skill's instructions (resources/read) before doing what it describes.";
    const arr = getArr(JSON.parse<JSON.Obj>(config.toJson()), "skills");
    if (arr != null) {
      for (let i = 0, n = arr.length; i < n; i++) {
        const o = arrObj(arr, i);
        if (o == null) continue;
        const name = getString(o, "name");
        const body = getString(o, "body");
        if (name == null || body == null || name.length == 0) {
          this.log(LogLevel.Warn, `skills[${i}] needs a name and a body; skipped`);
          continue;
        }
        const description = getString(o, "description");
        const skill = new Skill(name, description == null ? "" : description, body);
        this.skills.push(skill);
        server.prompt(name, skill.description, body);
      }
    }
    this.server = server;
  }

  uriOf(sessionId: string, skill: Skill): string {
    return "skill://" + segment(sessionId) + "/" + segment(skill.name);
  }

  resourcesFor(server: McpServer, sessionId: string): Resource[] {
    const out = new Array<Resource>(0);
    if (sessionId.length == 0) return out;
    for (let i = 0; i < this.skills.length; i++) {
      const s = this.skills[i];
      const r = new Resource(this.uriOf(sessionId, s), s.name, s.description, "text/markdown");
      r.size = <i64>String.UTF8.byteLength(s.body);
      out.push(r);
    }
    return out;
  }

  onResourceRead(read: ResourceRead): void {
    if (read.sessionId.length) {
      for (let i = 0; i < this.skills.length; i++) {
        const s = this.skills[i];
        if (read.uri == this.uriOf(read.sessionId, s)) {
          read.reply(s.body, "text/markdown");
          return;
        }
      }
    }
    read.notFound();
  }

  onPrompt(prompt: PromptRequest): void {
    const sessionId = prompt.sessionId;
    const seen = this.seen.of(sessionId);
    if (!seen.prompted && this.skills.length > 0) {
      seen.prompted = true;
      if (this.serversInSession(sessionId).length > 0) prompt.prepend(TextBlock.of(this.listFor(sessionId)));
      else if (!this.warned) {
        this.warned = true;
        this.log(LogLevel.Warn, `session ${sessionId} has no ${this.server!.name} MCP server (the agent side lacks mcpCapabilities.acp); skills are not offered`);
      }
    }
    this.forward(prompt);
  }

  /** The short list added to a session's first prompt. */
  listFor(sessionId: string): string {
    const server = this.server!.name;
    let text = `Skills available in this session (MCP server "${server}"; read a skill's resource before you use it):`;
    for (let i = 0; i < this.skills.length; i++) {
      const s = this.skills[i];
      text += "\n- " + s.name + (s.description.length ? ": " + s.description : "") + " (" + this.uriOf(sessionId, s) + ")";
    }
    return text;
  }
}

register(new Skills());
