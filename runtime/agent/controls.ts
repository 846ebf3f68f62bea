/**
 * Session controls of the reference agent: the modes, the config options and the slash commands it
 * announces, and how a request to change a mode or an option is validated.
 *
 * The selections live in a session's state under the keys ADK-Rust uses (`acp:mode`,
 * `acp:config:<id>`, `acp:title`), so they persist with the session across load, resume and fork.
 * None of them changes what a prompt command does except `tool_calls_enabled`: when it is off, the tool
 * commands are refused (see `turn.ts`).
 */
import {
  type AvailableCommand,
  type ClientCapabilities,
  RequestError,
  type SessionConfigOption,
  type SessionMode,
  type SessionModeState,
  type SetSessionConfigOptionRequest,
} from "@agentclientprotocol/sdk/unstable";
import { COMMANDS, MCP_COMMANDS } from "./commands.js";

/** The state keys of a session (the names ADK-Rust's ACP server uses). */
export const STATE_MODE = "acp:mode";
export const STATE_TITLE = "acp:title";
export const stateConfigKey = (configId: string): string => `acp:config:${configId}`;

/** A session's persisted state: `acp:mode`, `acp:config:<id>`, `acp:title`. */
export type SessionState = Record<string, string | boolean>;

/** The modes every session offers. The reference agent behaves the same in both. */
const MODES: readonly SessionMode[] = [
  { id: "ask", name: "Ask", description: "Ask before acting (the reference agent behaves the same in every mode)" },
  { id: "code", name: "Code", description: "Write code (the reference agent behaves the same in every mode)" },
];
const DEFAULT_MODE = "ask";

/** A config option the agent declares, with its default. */
export type ConfigDefinition =
  | {
      type: "select";
      id: string;
      name: string;
      description: string;
      values: ReadonlyArray<{ value: string; name: string }>;
      default: string;
    }
  | { type: "boolean"; id: string; name: string; description: string; default: boolean };

/**
 * The config options: one select and one boolean. The boolean is only announced to (and settable by) a
 * client that advertised `clientCapabilities.session.configOptions.boolean`; its stored value is kept
 * either way.
 */
export const CONFIG_OPTIONS: readonly ConfigDefinition[] = [
  {
    type: "select",
    id: "verbosity",
    name: "Verbosity",
    description: "How chatty the agent should be (recorded and shown by `info`; output does not change)",
    values: [
      { value: "low", name: "Low" },
      { value: "normal", name: "Normal" },
      { value: "high", name: "High" },
    ],
    default: "normal",
  },
  {
    type: "boolean",
    id: "tool_calls_enabled",
    name: "Tool calls",
    description: "When off, the tool commands (tool, permission, read, edit, run) are refused",
    default: true,
  },
];

/** The initial state of a new session. */
export function initialState(): SessionState {
  const state: SessionState = { [STATE_MODE]: DEFAULT_MODE };
  for (const option of CONFIG_OPTIONS) state[stateConfigKey(option.id)] = option.default;
  return state;
}

/** The current value of a config option (its default if the state has none or an invalid one). */
export function configValue(state: SessionState, option: ConfigDefinition): string | boolean {
  const value = state[stateConfigKey(option.id)];
  if (option.type === "boolean") return typeof value === "boolean" ? value : option.default;
  return typeof value === "string" && option.values.some((v) => v.value === value) ? value : option.default;
}

export function currentMode(state: SessionState): string {
  const mode = state[STATE_MODE];
  return typeof mode === "string" && MODES.some((m) => m.id === mode) ? mode : DEFAULT_MODE;
}

/** The `modes` of a session/new|load|resume|fork response. */
export function modeState(state: SessionState): SessionModeState {
  return { currentModeId: currentMode(state), availableModes: MODES.map((m) => ({ ...m })) };
}

/** Whether the client can be sent boolean config options. */
export function supportsBooleanOptions(capabilities: ClientCapabilities | undefined): boolean {
  const marker = capabilities?.session?.configOptions?.boolean;
  return marker !== undefined && marker !== null;
}

/** The options announced to a client, with their current values, in declaration order. */
export function configOptions(state: SessionState, booleanOptions: boolean): SessionConfigOption[] {
  const options: SessionConfigOption[] = [];
  for (const option of CONFIG_OPTIONS) {
    if (option.type === "select") {
      options.push({
        id: option.id,
        name: option.name,
        description: option.description,
        type: "select",
        currentValue: configValue(state, option) as string,
        options: option.values.map((v) => ({ ...v })),
      });
    } else if (booleanOptions) {
      options.push({
        id: option.id,
        name: option.name,
        description: option.description,
        type: "boolean",
        currentValue: configValue(state, option) as boolean,
      });
    }
  }
  return options;
}

/** Validates a `session/set_mode`; an unknown mode is rejected with -32602. */
export function validateMode(modeId: string): string {
  if (!MODES.some((m) => m.id === modeId)) {
    throw RequestError.invalidParams({ modeId, availableModes: MODES.map((m) => m.id) }, `unknown mode ${JSON.stringify(modeId)}`);
  }
  return modeId;
}

/**
 * Validates a `session/set_config_option` against the options announced to this client; returns the
 * state key and value to record. An unknown option, a value of the wrong type or a value outside the
 * option's choices is rejected with -32602.
 */
export function validateConfigChange(
  params: SetSessionConfigOptionRequest,
  booleanOptions: boolean,
): { option: ConfigDefinition; key: string; value: string | boolean } {
  const option = CONFIG_OPTIONS.find((o) => o.id === params.configId && (o.type !== "boolean" || booleanOptions));
  const available = configOptions({}, booleanOptions).map((o) => o.id);
  if (!option) {
    throw RequestError.invalidParams({ configId: params.configId, available }, `unknown config option ${JSON.stringify(params.configId)}`);
  }
  const key = stateConfigKey(option.id);
  const type = "type" in params ? params.type : undefined;
  if (option.type === "boolean") {
    if (type !== "boolean" || typeof params.value !== "boolean") {
      throw RequestError.invalidParams(
        { configId: option.id, value: params.value },
        `config option ${option.id} takes a boolean value (type "boolean", value true or false)`,
      );
    }
    return { option, key, value: params.value };
  }
  const values = option.values.map((v) => v.value);
  if (type === "boolean" || typeof params.value !== "string" || !values.includes(params.value)) {
    throw RequestError.invalidParams(
      { configId: option.id, value: params.value, values },
      `invalid value ${JSON.stringify(params.value)} for config option ${option.id} (one of ${values.join(", ")})`,
    );
  }
  return { option, key, value: params.value };
}

/**
 * The commands announced by `available_commands_update`, from the prompt-command table; with `mcp`
 * (the session has MCP servers) also the MCP client commands.
 */
export function availableCommands(mcp = false): AvailableCommand[] {
  return [...COMMANDS, ...(mcp ? MCP_COMMANDS : [])].map((c) => {
    const [name, ...rest] = c.usage.split(" ");
    const hint = rest.join(" ");
    return hint ? { name, description: c.summary, input: { hint } } : { name, description: c.summary };
  });
}
