/**
 * The reference agent as an ACP SDK app: one handler per method of the protocol surface described in
 * `reference-agent.ts`, wired to the session store, the active sessions, the MCP clients and the turn
 * runner. One app serves one connection (the CLI, `runtime/cli/reference-agent.ts`, connects it to
 * stdio).
 *
 * Ordering invariants:
 * - Activation updates (`available_commands_update`, the title) of `session/new`, `load`, `resume` and
 *   `fork` are sent after the answer: they are scheduled with `setImmediate`, by which time the answer
 *   is queued, and the connection writes in order.
 * - `session/load` replays the whole stored history before it answers.
 * - `session/cancel` is registered after `session/prompt`, so a cancel never overtakes the prompt it
 *   follows.
 * - When the connection closes, every running turn is cancelled and every MCP client closed.
 */
import {
  type AgentApp,
  type AgentContext,
  agent,
  type ClientCapabilities,
  type ClientRequestMethod,
  type ClientRequestParamsByMethod,
  type Implementation,
  methods,
  PROTOCOL_VERSION,
  RequestError,
  type SessionUpdate,
  type Stream,
} from "@agentclientprotocol/sdk/unstable";
import { parsePrompt } from "./commands.js";
import { availableCommands, configOptions, modeState, supportsBooleanOptions, validateConfigChange, validateMode } from "./controls.js";
import { McpClients, type McpSupport, STDIO_ONLY } from "./mcp.js";
import { RawPrompts } from "./raw-prompts.js";
import { AGENT_NAME, AGENT_TITLE, agentCapabilities } from "./reference-agent.js";
import { ActiveSessions, type AgentSession, replayUpdates } from "./session.js";
import { DEFAULT_PAGE_SIZE, listSessions } from "./session-list.js";
import { checkCwd, validateSetup } from "./setup.js";
import { defaultStoreDir, SessionStore } from "./store.js";
import { runTurn } from "./turn.js";
import { cordonVersion } from "./version.js";

/** Options of {@link createReferenceAgent}. */
export interface ReferenceAgentOptions {
  /** Called with diagnostic lines; the stdio agent sends them to stderr when `--verbose` is given. */
  log?: (line: string) => void;
  /** The session store, or its folder (default: {@link defaultStoreDir}). */
  store?: SessionStore | string;
  /** Sessions per `session/list` page (default {@link DEFAULT_PAGE_SIZE}). */
  pageSize?: number;
  /** The MCP transports accepted and advertised besides stdio (default none). */
  mcp?: McpSupport;
}

/** A reference agent app and its state. One app serves one connection. */
export interface ReferenceAgent {
  app: AgentApp;
  sessions: ActiveSessions;
  store: SessionStore;
  /**
   * Wraps the stream the app is connected to so that prompts are stored exactly as they arrived on the
   * wire (see `raw-prompts.ts`). Without it the parsed prompt is stored.
   */
  wrap(stream: Stream): Stream;
  /** The MCP clients of the sessions (closed when the connection ends). */
  mcp: McpClients;
}

/** Builds the reference agent as an SDK app (connect it to a stream, or in-process to a client app). */
export function createReferenceAgent(options: ReferenceAgentOptions = {}): ReferenceAgent {
  const log = options.log ?? (() => {});
  const store = typeof options.store === "object" ? options.store : new SessionStore(options.store ?? defaultStoreDir());
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  const support = options.mcp ?? STDIO_ONLY;
  const sessions = new ActiveSessions(store);
  const mcp = new McpClients({ name: AGENT_NAME, version: cordonVersion() }, log);
  const rawPrompts = new RawPrompts();
  let client: { info?: Implementation | null; capabilities?: ClientCapabilities; protocolVersion?: number } = {};
  const booleanOptions = () => supportsBooleanOptions(client.capabilities);

  const controls = (session: AgentSession) => ({
    modes: modeState(session.stored.state),
    configOptions: configOptions(session.stored.state, booleanOptions()),
  });

  const update = (peer: AgentContext, session: AgentSession, u: SessionUpdate) =>
    peer.notify(methods.client.session.update, { sessionId: session.id, update: u });

  /**
   * Sends the activation updates of a session once the answer that activated it is on its way: the
   * answer is queued before any macrotask runs, and the connection writes in order.
   */
  const activated = (session: AgentSession, peer: AgentContext) => {
    setImmediate(() => {
      if (sessions.get(session.id) !== session) return;
      void (async () => {
        const commands = availableCommands(session.setup.mcpServers.length > 0);
        await update(peer, session, { sessionUpdate: "available_commands_update", availableCommands: commands });
        const title = session.title;
        if (title !== undefined) await update(peer, session, { sessionUpdate: "session_info_update", title, updatedAt: session.updatedAt });
      })().catch((error: unknown) => log(`activation updates for ${session.id} not sent: ${String(error)}`));
    });
  };

  /** Deactivates a session after cancelling its turn and waiting for the prompt to be answered. */
  const close = async (session: AgentSession) => {
    await session.cancelAndWait();
    sessions.remove(session.id);
    await mcp.closeSession(session.id);
  };

  const app = agent({ name: AGENT_NAME })
    .onConnect((connection) => {
      void connection.closed.then(() => {
        sessions.cancelAll();
        void mcp.closeAll();
      });
    })
    .onRequest(methods.agent.initialize, ({ params }) => {
      log(`initialize protocolVersion=${params.protocolVersion} client=${params.clientInfo?.name ?? "?"}`);
      client = { info: params.clientInfo, capabilities: params.clientCapabilities, protocolVersion: params.protocolVersion };
      return {
        // Only v1 is implemented: echo 1 whatever the client asked for; a client that cannot speak 1 disconnects.
        protocolVersion: PROTOCOL_VERSION,
        agentCapabilities: agentCapabilities(support),
        authMethods: [],
        agentInfo: { name: AGENT_NAME, title: AGENT_TITLE, version: cordonVersion() },
      };
    })
    .onRequest(methods.agent.session.new, ({ params, client: peer }) => {
      const session = sessions.create(validateSetup(params, support));
      log(`session/new ${session.id} cwd=${params.cwd}`);
      activated(session, peer);
      return { sessionId: session.id, ...controls(session) };
    })
    .onRequest(methods.agent.session.load, async ({ params, signal, client: peer }) => {
      const setup = validateSetup(params, support);
      checkCwd(sessions.stored(params.sessionId), setup.cwd);
      const session = sessions.activate(params.sessionId);
      await mcp.closeSession(session.id);
      session.reattach(setup.mcpServers, setup.additionalDirectories);
      const replay = replayUpdates(sessions.store.history(session.id));
      log(`session/load ${session.id}: replaying ${replay.length} updates`);
      for (const u of replay) {
        if (signal.aborted) throw RequestError.requestCancelled({ sessionId: session.id }, "session/load cancelled during replay");
        await update(peer, session, u);
      }
      activated(session, peer);
      return controls(session);
    })
    .onRequest(methods.agent.session.resume, async ({ params, client: peer }) => {
      const setup = validateSetup(params, support);
      checkCwd(sessions.stored(params.sessionId), setup.cwd);
      const session = sessions.activate(params.sessionId);
      await mcp.closeSession(session.id);
      session.reattach(setup.mcpServers, setup.additionalDirectories);
      log(`session/resume ${session.id}`);
      activated(session, peer);
      return controls(session);
    })
    .onRequest(methods.agent.session.fork, ({ params, client: peer }) => {
      const setup = validateSetup(params, support);
      const session = sessions.fork(params.sessionId, setup);
      log(`session/fork ${params.sessionId} → ${session.id}`);
      activated(session, peer);
      return { sessionId: session.id, ...controls(session) };
    })
    .onRequest(methods.agent.session.close, async ({ params }) => {
      const session = sessions.get(params.sessionId);
      if (session) {
        await close(session);
        log(`session/close ${params.sessionId}`);
      } else if (!store.has(params.sessionId)) {
        throw RequestError.sessionNotFound(params.sessionId);
      }
      return {};
    })
    .onRequest(methods.agent.session.delete, async ({ params }) => {
      const session = sessions.get(params.sessionId);
      if (session) await close(session);
      const existed = store.delete(params.sessionId);
      log(`session/delete ${params.sessionId}${existed ? "" : " (already gone)"}`);
      return {};
    })
    .onRequest(methods.agent.session.list, ({ params }) => listSessions(store, params, pageSize))
    .onRequest(methods.agent.session.setMode, async ({ params, client: peer }) => {
      const session = sessions.require(params.sessionId);
      const modeId = validateMode(params.modeId);
      session.setMode(modeId);
      await update(peer, session, { sessionUpdate: "current_mode_update", currentModeId: modeId });
      log(`session/set_mode ${session.id} ${modeId}`);
      return {};
    })
    .onRequest(methods.agent.session.setConfigOption, async ({ params, client: peer }) => {
      const session = sessions.require(params.sessionId);
      const change = validateConfigChange(params, booleanOptions());
      session.setConfig(change.option.id, change.value);
      const options = configOptions(session.stored.state, booleanOptions());
      await update(peer, session, { sessionUpdate: "config_option_update", configOptions: options });
      log(`session/set_config_option ${session.id} ${change.option.id}=${String(change.value)}`);
      return { configOptions: options };
    })
    .onRequest(methods.agent.session.prompt, async ({ params, signal, requestId, client: peer }) => {
      const session = sessions.require(params.sessionId);
      const prompt = rawPrompts.take(requestId, params.prompt);
      const turn = session.beginTurn(signal);
      try {
        session.record({ kind: "user", prompt });
        const steps = parsePrompt(prompt);
        log(`session/prompt ${session.id}: ${steps.map((s) => s.kind).join(" ") || "(empty)"}`);
        const stopReason = await runTurn(session, steps, turn.signal, {
          emit: (u) => update(peer, session, u),
          requestPermission: (request) => peer.request(methods.client.session.requestPermission, request),
          request: <M extends ClientRequestMethod>(
            method: M,
            requestParams: ClientRequestParamsByMethod[M],
            cancellationSignal?: AbortSignal,
          ) => peer.request(method, requestParams, { cancellationSignal }),
          clientCapabilities: () => client.capabilities ?? {},
          describeConnection: () => [
            `client ${client.info ? `${client.info.name} ${client.info.version}` : "(no clientInfo)"}`,
            `protocolVersion ${client.protocolVersion ?? "?"}`,
            `clientCapabilities ${JSON.stringify(client.capabilities ?? {})}`,
          ],
          mcp: {
            listTools: (server, mcpSignal) => mcp.listTools({ sessionId: session.id, cwd: session.setup.cwd, server, peer }, mcpSignal),
            callTool: (server, tool, args, mcpSignal) =>
              mcp.callTool({ sessionId: session.id, cwd: session.setup.cwd, server, peer }, tool, args, mcpSignal),
            listResources: (server, mcpSignal) =>
              mcp.listResources({ sessionId: session.id, cwd: session.setup.cwd, server, peer }, mcpSignal),
            readResource: (server, uri, mcpSignal) =>
              mcp.readResource({ sessionId: session.id, cwd: session.setup.cwd, server, peer }, uri, mcpSignal),
            listPrompts: (server, mcpSignal) => mcp.listPrompts({ sessionId: session.id, cwd: session.setup.cwd, server, peer }, mcpSignal),
            getPrompt: (server, name, args, mcpSignal) =>
              mcp.getPrompt({ sessionId: session.id, cwd: session.setup.cwd, server, peer }, name, args, mcpSignal),
          },
        });
        log(`session/prompt ${session.id} → ${stopReason}`);
        return { stopReason };
      } finally {
        session.endTurn(turn);
      }
    })
    // Registered after session/prompt so a cancel never overtakes the prompt it follows.
    .onNotification(methods.agent.session.cancel, ({ params }) => {
      const cancelled = sessions.get(params.sessionId)?.cancel() ?? false;
      log(`session/cancel ${params.sessionId}${cancelled ? "" : " (no prompt running)"}`);
    })
    // Request-scoped notifications of MCP-over-ACP servers (e.g. progress) reach the call they belong to.
    .onNotification(methods.agent.mcp.message, mcp.caller.handleNotification);

  return { app, sessions, store, wrap: (stream) => rawPrompts.wrap(stream), mcp };
}
