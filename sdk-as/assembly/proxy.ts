// The class a proxy author extends. `Proxy` is the whole stack — the wire (channel.ts: bookkeeping
// and everything a proxy can send), the author-facing hooks (hooks.ts), the dispatch of what
// arrives (dispatch.ts) — plus what a proxy declares: MCP servers (mcp.ts) and slash commands, and
// the sessions it opens for itself (subagent.ts).
//
//   class Context extends Proxy {
//     onPrompt(prompt: PromptRequest): void {
//       prompt.prepend(TextBlock.of(this.config.getString("text")));
//       this.forward(prompt);
//     }
//   }
//   register(new Context());
import { JSON } from "json-as";
import { setReceiver } from "./abi";
import { Dispatcher } from "./dispatch";
import { McpHost } from "./mcp";
import { McpClient } from "./mcp-client";
import { AvailableCommand } from "./sessions";
import { Subagent, SubagentHost } from "./subagent";
import { McpServer, ServedServer } from "./tools";
import { updateParams } from "./wire";

export class Proxy extends Dispatcher {
  /**
   * Adds an MCP server the proxy provides to the agent (declare its tools with `.tool(...)`).
   * Sends nothing: call it in the constructor or `onConfigure`. From then on the SDK declares it in
   * every session setup request the proxy forwards and serves it; tool calls reach `onToolCall`.
   */
  addMcpServer(name: string, version: string = "0.1.0"): McpServer {
    let host: McpHost;
    if (this._mcp == null) {
      host = new McpHost(this);
      this._mcp = host;
    } else {
      host = changetype<McpHost>(this._mcp);
    }
    const server = new McpServer(name, version);
    host.servers.push(server);
    return server;
  }

  /**
   * Tells the agent's MCP clients that a list of `server` changed: `kind` is `tools`, `resources`
   * or `prompts`; `sessionId` "" for every session. Sent as `notifications/<kind>/list_changed`
   * over each open connection (connection form only); returns how many were told.
   */
  notifyListChanged(server: McpServer, kind: string, sessionId: string = ""): i32 {
    const host = this._mcp;
    return host == null ? 0 : changetype<McpHost>(host).notifyListChanged(server, kind, sessionId);
  }

  /**
   * The agent's MCP clients connected to `server` now (connection form), in `sessionId` only unless
   * "": to send them requests of the server's own (`listRoots`, `createMessage`, `elicit`, `ping`).
   */
  mcpClients(server: McpServer, sessionId: string = ""): McpClient[] {
    const host = this._mcp;
    return host == null ? new Array<McpClient>(0) : changetype<McpHost>(host).clients(server, sessionId);
  }

  /** The MCP servers added with `addMcpServer`. */
  get mcpServers(): McpServer[] {
    const host = this._mcp;
    return host == null ? new Array<McpServer>(0) : changetype<McpHost>(host).servers;
  }

  /**
   * Whether the agent side advertised `mcpCapabilities.acp` (known after the `initialize` answer):
   * the proxy's servers are declared only then.
   */
  get mcpAvailable(): bool {
    const host = this._mcp;
    return host != null && host.available;
  }

  /** The ACP session a serverId of this proxy was declared in ("" when unknown). */
  sessionOfServer(serverId: string): string {
    const host = this._mcp;
    if (host == null) return "";
    const s = changetype<McpHost>(host).servedById(serverId);
    return s == null ? "" : s.sessionId;
  }

  /** The proxy's current server declarations in an ACP session (one per server per setup). */
  serversInSession(sessionId: string): ServedServer[] {
    const host = this._mcp;
    return host == null ? new Array<ServedServer>(0) : changetype<McpHost>(host).servedInSession(sessionId);
  }

  /**
   * Adds a slash command the proxy offers (answer it in `onPrompt`: `prompt.command == name`).
   * Sends nothing: call it in the constructor or `onConfigure`. From then on every
   * `available_commands_update` from the agent side carries it too (a command of the agent with the
   * same name is replaced); `announceCommands` sends the merged list yourself.
   */
  addCommand(name: string, description: string, hint: string = ""): AvailableCommand {
    const command = new AvailableCommand(name, description, hint);
    for (let i = 0; i < this._commands.length; i++) {
      if (this._commands[i].name == name) {
        this._commands[i] = command;
        return command;
      }
    }
    this._commands.push(command);
    return command;
  }

  /** The slash commands added with `addCommand`. */
  get ownCommands(): AvailableCommand[] {
    return this._commands;
  }

  /**
   * Sends the client an `available_commands_update` for a session: the agent's last list for it
   * (none yet: empty) merged with the proxy's commands. Use it when a session starts, since the
   * agent may never send one.
   */
  announceCommands(sessionId: string): void {
    const theirs = this._agentCommands.has(sessionId) ? this._agentCommands.get(sessionId) : "[]";
    const update = '{"sessionUpdate":"available_commands_update","availableCommands":' + this.commandsWith(theirs) + "}";
    this.notifyClient("session/update", JSON.Raw.from(updateParams(sessionId, update)));
  }

  /**
   * Opens a session of the proxy's own at its successor (`session/new {cwd, mcpServers}`; with
   * `withMcpServers`, the proxy's own MCP servers are declared in it) and returns its subagent:
   * `prompt`, `cancel`, `close` it; what its session sends arrives in the `onSubagent*` hooks only.
   * Needs the user's `agent:sessions` grant (and `agent:prompt` to prompt it); without them
   * `onSubagentFailed` says so. `tag` is the author's label (the client session it works for, say).
   */
  startSubagent(cwd: string, tag: string = "", withMcpServers: bool = false): Subagent {
    let host: SubagentHost;
    if (this._subagents == null) {
      host = new SubagentHost(this);
      this._subagents = host;
    } else {
      host = changetype<SubagentHost>(this._subagents);
    }
    return host.start(cwd, tag, withMcpServers);
  }

  /** The subagents not closed or failed, in the order they were started. */
  get subagents(): Subagent[] {
    const host = this._subagents;
    return host == null ? new Array<Subagent>(0) : changetype<SubagentHost>(host).all.slice(0);
  }

  /** The subagent of a session id at the agent, or null. */
  subagentOf(sessionId: string): Subagent | null {
    const host = this._subagents;
    return host == null ? null : changetype<SubagentHost>(host).subagentOf(sessionId);
  }
}

let registered: Proxy | null = null;

function dispatch(message: string): void {
  registered!.receive(message);
}

/** Makes `proxy` the one that receives every message. Call once, at top level. */
export function register(proxy: Proxy): void {
  registered = proxy;
  setReceiver(dispatch);
}
