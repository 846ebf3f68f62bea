/**
 * What a prompt turn produces, as typed events: `session/update` notifications mapped one to one
 * (agent text, thoughts, plans, tool calls, usage, mode / config / command / title changes), the
 * permission decisions taken during the turn, and finally the stop reason.
 *
 * Tool calls are correlated by `toolCallId`: the first report is a `tool_call` event and each
 * later `tool_call_update` an event carrying the call's accumulated state (status, kind, title,
 * content text, diffs, terminals, affected locations), following ACP's rule that fields present in
 * an update replace the old ones and absent fields stay.
 *
 * Nothing is invented: `usage` carries `cost` only when the agent reported one, and an update
 * this API does not model — a future or unstable `sessionUpdate`, or a known kind whose shape is
 * not what ACP v1 says — arrives as a `raw` event with the update exactly as received.
 */
import type * as acp from "@agentclientprotocol/sdk/unstable";
import { PromptOverflowError } from "./errors.js";
import { approxJsonBytes } from "./json-size.js";

/** A tool call as known so far: the first report with every later update applied. */
export interface ToolCallView {
  toolCallId: string;
  title?: string;
  kind?: acp.ToolKind;
  /** `pending` until the agent says otherwise. */
  status: acp.ToolCallStatus;
  /** The text of the call's text content blocks, joined with newlines ("" when none). */
  text: string;
  /** File edits the call reports (`diff` content). */
  diffs: acp.Diff[];
  /** Terminals whose output the call shows (`terminal` content), by id. */
  terminalIds: string[];
  /** Files the call affects. */
  locations: acp.ToolCallLocation[];
  /** The whole content collection, as last reported. */
  content: acp.ToolCallContent[];
  rawInput?: unknown;
  rawOutput?: unknown;
}

/** The outcome of one `session/request_permission` during a turn. */
export interface PermissionEvent {
  type: "permission";
  /** The tool call the agent asked about, merged with what the session already knew of it. */
  toolCall: ToolCallView;
  options: acp.PermissionOption[];
  /** `allowed`: an allow option was chosen. `denied`: a reject option, or none. `cancelled`: the turn or the request was cancelled (the tool does not run). */
  outcome: "allowed" | "denied" | "cancelled";
  /** The option that was selected, if one was. */
  optionId?: string;
}

/** Token usage of the session's context window. */
export interface UsageEvent {
  type: "usage";
  /** Tokens currently in context. */
  used: number;
  /** Size of the context window, in tokens. */
  size: number;
  /** Cumulative cost, present only when the agent reported it. */
  cost?: { amount: number; currency: string };
}

/** The end of a turn. */
export interface StopEvent {
  type: "stop";
  stopReason: acp.StopReason;
  /** Token counts for the turn, present only when the agent reported them. */
  usage?: acp.Usage;
  /** The whole `session/prompt` answer. */
  response: acp.PromptResponse;
}

/** One thing a prompt turn produced; see the module comment. Switch on `type`. */
export type PromptEvent =
  /** A text chunk of the agent's answer. */
  | { type: "text"; text: string; messageId?: string }
  /** A non-text chunk of the agent's answer (image, audio, resource, resource link), as sent. */
  | { type: "message"; content: acp.ContentBlock; messageId?: string }
  /** A chunk of the agent's reasoning (`text` is "" for non-text content). */
  | { type: "thought"; text: string; content: acp.ContentBlock }
  /** A chunk of the user's message, as the agent replays it (session/load). */
  | { type: "user"; content: acp.ContentBlock }
  /** The agent's plan, whole (each plan update replaces the previous one). */
  | { type: "plan"; entries: acp.PlanEntry[] }
  /** A tool call's first report. */
  | { type: "tool_call"; toolCallId: string; call: ToolCallView }
  /** A later update of a tool call: `call` is its state with the update applied, `update` the update as sent. */
  | { type: "tool_call_update"; toolCallId: string; call: ToolCallView; update: acp.ToolCallUpdate }
  | UsageEvent
  /** The session's mode changed. */
  | { type: "mode"; modeId: string }
  /** The session's config options changed (the whole set, with current values). */
  | { type: "config"; configOptions: acp.SessionConfigOption[] }
  /** The slash commands the agent offers changed. */
  | { type: "commands"; commands: acp.AvailableCommand[] }
  /** The session's title or update time changed (fields absent were not changed). */
  | { type: "session_info"; title?: string | null; updatedAt?: string | null }
  | PermissionEvent
  /** An update this API does not model, exactly as received (`sessionUpdate` is its kind). */
  | { type: "raw"; sessionUpdate: string; update: Record<string, unknown> }
  | StopEvent;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const isString = (v: unknown): v is string => typeof v === "string";
const isContent = (v: unknown): v is acp.ContentBlock => isObject(v) && isString(v.type);

/** Tool calls one tracker (one session) remembers; past it, the oldest finished call is forgotten (else the oldest). */
const MAX_TRACKED_TOOL_CALLS = 512;
/** What the remembered calls may hold together (content, raw input and output, as JSON); past it, the oldest go as above. */
const MAX_TRACKED_TOOL_BYTES = 16 * 1024 * 1024;

export interface ToolCallLimits {
  maxCalls?: number;
  maxBytes?: number;
}

/**
 * Tool calls of one session, by id, so that every update is seen against the call's full state.
 * Bounded ({@link MAX_TRACKED_TOOL_CALLS}, {@link MAX_TRACKED_TOOL_BYTES}): a long session keeps
 * the state of its recent calls, not of every call it ever made. A forgotten call's later update
 * is seen as if it were its first report. The call just reported is never the one forgotten, so a
 * single call larger than the byte bound is kept (its size is bounded by the chain's message size).
 */
export class ToolCallTracker {
  private readonly calls = new Map<string, ToolCallView>();
  private readonly sizes = new Map<string, number>();
  private bytes = 0;
  private readonly maxCalls: number;
  private readonly maxBytes: number;

  constructor(limits: ToolCallLimits = {}) {
    this.maxCalls = Math.max(1, limits.maxCalls ?? MAX_TRACKED_TOOL_CALLS);
    this.maxBytes = limits.maxBytes ?? MAX_TRACKED_TOOL_BYTES;
  }

  /** Calls remembered now, and roughly what they hold (for tests and diagnostics). */
  get held(): { calls: number; bytes: number } {
    return { calls: this.calls.size, bytes: this.bytes };
  }

  /** The state of a call, if it was reported. */
  get(toolCallId: string): ToolCallView | undefined {
    const call = this.calls.get(toolCallId);
    return call && snapshot(call);
  }

  /** Every call reported so far, in first-report order. */
  all(): ToolCallView[] {
    return [...this.calls.values()].map(snapshot);
  }

  /** Applies a report (a `tool_call` or a `tool_call_update`) and returns the new state. */
  apply(report: Json, first: boolean): ToolCallView {
    const id = report.toolCallId as string;
    const call = (!first && this.calls.get(id)) || emptyCall(id);
    merge(call, report);
    this.calls.set(id, call);
    const size = approxJsonBytes([call.title, call.content, call.locations, call.rawInput, call.rawOutput], this.maxBytes + 1);
    this.bytes += size - (this.sizes.get(id) ?? 0);
    this.sizes.set(id, size);
    this.evict(id);
    return snapshot(call);
  }

  /** Forgets calls until the bounds hold again, never `keep`: the oldest finished first, else the oldest. */
  private evict(keep: string): void {
    while (this.calls.size > 1 && (this.calls.size > this.maxCalls || this.bytes > this.maxBytes)) {
      let victim: string | undefined;
      let oldest: string | undefined;
      for (const [id, call] of this.calls) {
        if (id === keep) continue;
        oldest ??= id;
        if (call.status === "completed" || call.status === "failed") {
          victim = id;
          break;
        }
      }
      victim ??= oldest;
      if (victim === undefined) return;
      this.calls.delete(victim);
      this.bytes -= this.sizes.get(victim) ?? 0;
      this.sizes.delete(victim);
    }
  }

  /** What a call would look like with `report` applied, without recording it (a permission request's view). */
  preview(report: Json): ToolCallView {
    const id = isString(report.toolCallId) ? report.toolCallId : "";
    const call = snapshot(this.calls.get(id) ?? emptyCall(id));
    merge(call, report);
    return call;
  }
}

function emptyCall(toolCallId: string): ToolCallView {
  return { toolCallId, status: "pending", text: "", diffs: [], terminalIds: [], locations: [], content: [] };
}

function snapshot(call: ToolCallView): ToolCallView {
  return {
    ...call,
    diffs: [...call.diffs],
    terminalIds: [...call.terminalIds],
    locations: [...call.locations],
    content: [...call.content],
  };
}

/** ACP's update rule: a field present replaces the old value; `content` and `locations` are replaced whole. */
function merge(call: ToolCallView, report: Json): void {
  if (isString(report.title)) call.title = report.title;
  if (isString(report.kind)) call.kind = report.kind as acp.ToolKind;
  if (isString(report.status)) call.status = report.status as acp.ToolCallStatus;
  if ("rawInput" in report) call.rawInput = report.rawInput;
  if ("rawOutput" in report) call.rawOutput = report.rawOutput;
  if (Array.isArray(report.locations))
    call.locations = report.locations.filter((l): l is acp.ToolCallLocation => isObject(l) && isString(l.path));
  if (Array.isArray(report.content)) {
    const content = report.content.filter(isObject) as acp.ToolCallContent[];
    call.content = content;
    call.text = content
      .flatMap((c) =>
        c.type === "content" && isObject(c.content) && c.content.type === "text" && isString(c.content.text) ? [c.content.text] : [],
      )
      .join("\n");
    call.diffs = content.filter((c): c is acp.Diff & { type: "diff" } => c.type === "diff" && isString(c.path) && isString(c.newText));
    call.terminalIds = content.flatMap((c) => (c.type === "terminal" && isString(c.terminalId) ? [c.terminalId] : []));
  }
}

/**
 * Maps one `session/update` payload (`params.update`) to its event. Tool-call state lives in
 * `tools`. Anything not in the shape ACP v1 gives it becomes a `raw` event.
 */
export function toEvent(update: unknown, tools: ToolCallTracker): PromptEvent {
  if (!isObject(update) || !isString(update.sessionUpdate))
    return { type: "raw", sessionUpdate: "", update: isObject(update) ? update : { value: update } };
  const u = update;
  const raw = (): PromptEvent => ({ type: "raw", sessionUpdate: u.sessionUpdate as string, update: u });
  const messageId = isString(u.messageId) ? { messageId: u.messageId } : {};
  switch (u.sessionUpdate) {
    case "agent_message_chunk":
      if (!isContent(u.content)) return raw();
      return u.content.type === "text" && isString(u.content.text)
        ? { type: "text", text: u.content.text, ...messageId }
        : { type: "message", content: u.content, ...messageId };
    case "agent_thought_chunk":
      if (!isContent(u.content)) return raw();
      return { type: "thought", text: u.content.type === "text" && isString(u.content.text) ? u.content.text : "", content: u.content };
    case "user_message_chunk":
      return isContent(u.content) ? { type: "user", content: u.content } : raw();
    case "plan":
      return Array.isArray(u.entries) ? { type: "plan", entries: u.entries as acp.PlanEntry[] } : raw();
    case "tool_call":
      return isString(u.toolCallId) ? { type: "tool_call", toolCallId: u.toolCallId, call: tools.apply(u, true) } : raw();
    case "tool_call_update":
      if (!isString(u.toolCallId)) return raw();
      return {
        type: "tool_call_update",
        toolCallId: u.toolCallId,
        call: tools.apply(u, false),
        update: u as unknown as acp.ToolCallUpdate,
      };
    case "usage_update": {
      if (typeof u.used !== "number" || typeof u.size !== "number") return raw();
      const cost =
        isObject(u.cost) && typeof u.cost.amount === "number" && isString(u.cost.currency)
          ? { cost: { amount: u.cost.amount, currency: u.cost.currency } }
          : {};
      return { type: "usage", used: u.used, size: u.size, ...cost };
    }
    case "current_mode_update":
      return isString(u.currentModeId) ? { type: "mode", modeId: u.currentModeId } : raw();
    case "config_option_update":
      return Array.isArray(u.configOptions) ? { type: "config", configOptions: u.configOptions as acp.SessionConfigOption[] } : raw();
    case "available_commands_update":
      return Array.isArray(u.availableCommands) ? { type: "commands", commands: u.availableCommands as acp.AvailableCommand[] } : raw();
    case "session_info_update": {
      const info: PromptEvent = { type: "session_info" };
      if ("title" in u && (u.title === null || isString(u.title))) info.title = u.title;
      if ("updatedAt" in u && (u.updatedAt === null || isString(u.updatedAt))) info.updatedAt = u.updatedAt;
      return info;
    }
    default:
      return raw();
  }
}

/** How a turn ended, as {@link PromptRun.result} reports it. */
export type PromptResult = StopEvent;

/** Events (or their weight, as JSON) a prompt run holds for its reader before it pushes back. */
export const PROMPT_BUFFER_EVENTS = 1024;
const PROMPT_BUFFER_BYTES = 8 * 1024 * 1024;
/** How far past the buffer bound a run being read may go (events already in flight when the chain paused) before it errors. */
const HARD_BOUND_FACTOR = 4;

export interface PromptBufferLimits {
  maxEvents?: number;
  maxBytes?: number;
}

/**
 * A running prompt turn. Iterate it (`for await (const event of run)`) for every event in order,
 * ending with `stop`; or take only the agent's text with {@link PromptRun.text} /
 * {@link PromptRun.textChunks}; or just await {@link PromptRun.result}. The request is sent when
 * the run is created, whether or not anyone reads it; events wait in order until read. One
 * reader: a run is iterated once.
 *
 * If the turn fails (the agent answers `session/prompt` with an error, the chain closes), the
 * iteration throws that error after the events that came before it, and `result` rejects.
 *
 * What waits for the reader is bounded ({@link PROMPT_BUFFER_EVENTS} events or
 * {@link PROMPT_BUFFER_BYTES}, whichever comes first):
 * - while the run is being iterated and its reader is behind by that much, the chain is paused
 *   (see `read-pressure.ts`) until the reader has taken half of it: a slow reader slows the agent,
 *   nothing is lost. Events already on their way still arrive, and the chain is not paused while
 *   the application awaits something else from it (that would deadlock); past
 *   {@link HARD_BOUND_FACTOR} times the bound the run fails as below.
 * - while nobody iterates it (a caller that only awaits `result`, or one that has not started
 *   reading, or left the loop), nothing pauses; at the bound the waiting events are dropped and
 *   an iteration throws {@link PromptOverflowError}. `result` still resolves with the stop, and the
 *   session's `onEvent` listeners see every event either way.
 */
export class PromptRun implements AsyncIterable<PromptEvent> {
  private readonly queue: Array<{ event: PromptEvent; bytes: number }> = [];
  private queuedBytes = 0;
  private failure: Error | null = null;
  private overflow: PromptOverflowError | null = null;
  private finished = false;
  private wake: (() => void) | null = null;
  private iterated = false;
  /** An iteration is running (started, not ended). */
  private reading = false;
  private readonly maxEvents: number;
  private readonly maxBytes: number;
  private resolveResult!: (stop: StopEvent) => void;
  private rejectResult!: (error: Error) => void;
  /** The stop event, once the turn ends; rejects if it fails. */
  readonly result: Promise<PromptResult>;

  /** @internal Created by `Session.prompt`; `pressure` is told when this run's reader falls behind or catches up. */
  constructor(
    private readonly cancelTurn: () => void,
    private readonly pressure?: { set(reader: object, behind: boolean): void },
    limits: PromptBufferLimits = {},
  ) {
    this.maxEvents = Math.max(1, limits.maxEvents ?? PROMPT_BUFFER_EVENTS);
    this.maxBytes = limits.maxBytes ?? PROMPT_BUFFER_BYTES;
    this.result = new Promise<StopEvent>((resolve, reject) => {
      this.resolveResult = resolve;
      this.rejectResult = reject;
    });
    this.result.catch(() => {}); // a caller who only iterates must not see an unhandled rejection
  }

  /** Asks the agent to stop (`session/cancel`); the run then ends with stop reason `cancelled`. */
  cancel(): void {
    this.cancelTurn();
  }

  /** Events waiting for the reader now, and roughly what they weigh (for tests and diagnostics). */
  get buffered(): { events: number; bytes: number } {
    return { events: this.queue.length, bytes: this.queuedBytes };
  }

  /** @internal */
  push(event: PromptEvent): void {
    if (this.finished) return;
    if (event.type === "stop") {
      this.finished = true;
      this.resolveResult(event);
    }
    if (this.overflow || (this.iterated && !this.reading)) {
      // Nobody will read it: an overflowed run, or a reader that left the loop.
      this.notify();
      return;
    }
    const bytes = approxJsonBytes(event, this.maxBytes * HARD_BOUND_FACTOR + 1);
    this.queue.push({ event, bytes });
    this.queuedBytes += bytes;
    if (event.type !== "stop") this.bound();
    this.notify();
  }

  /** Applies the buffer bound after a push (see the class comment). */
  private bound(): void {
    const over = (factor: number) => this.queue.length > this.maxEvents * factor || this.queuedBytes > this.maxBytes * factor;
    if (!over(1)) return;
    if (this.reading && !over(HARD_BOUND_FACTOR)) return this.pressure?.set(this, true);
    const events = this.queue.length;
    this.queue.length = 0;
    this.queuedBytes = 0;
    this.pressure?.set(this, false);
    this.overflow = new PromptOverflowError(
      this.reading
        ? `the prompt run's reader fell behind by ${events} events (more than ${HARD_BOUND_FACTOR} × ${this.maxEvents} events or ${HARD_BOUND_FACTOR} × ${this.maxBytes} bytes, while the chain could not be paused for it); they were dropped (the turn goes on: \`result\` still resolves)`
        : `${events} events of this prompt run waited with nobody reading them (more than ${this.maxEvents} events or ${this.maxBytes} bytes); they were dropped. Iterate the run as it goes, or use session.onEvent (the turn goes on: \`result\` still resolves)`,
    );
  }

  /** @internal */
  fail(error: Error): void {
    if (this.finished) return;
    this.finished = true;
    this.failure = error;
    this.rejectResult(error);
    this.notify();
  }

  get done(): boolean {
    return this.finished;
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<PromptEvent> {
    if (this.iterated) throw new Error("a prompt run can be read only once");
    this.iterated = true;
    this.reading = true;
    try {
      for (;;) {
        const next = this.queue.shift();
        if (next) {
          this.queuedBytes -= next.bytes;
          if (this.queue.length <= this.maxEvents / 2 && this.queuedBytes <= this.maxBytes / 2) this.pressure?.set(this, false);
          yield next.event;
          if (next.event.type === "stop") return;
          continue;
        }
        if (this.overflow) throw this.overflow;
        if (this.failure) throw this.failure;
        if (this.finished) return;
        await new Promise<void>((resolve) => (this.wake = resolve));
      }
    } finally {
      // Ended, failed, or the reader left the loop: nothing more is kept for it, and it holds nothing back.
      this.reading = false;
      this.queue.length = 0;
      this.queuedBytes = 0;
      this.pressure?.set(this, false);
    }
  }

  /** Only the agent's text chunks, in order, as they arrive; every other event is skipped. */
  async *textChunks(): AsyncIterable<string> {
    for await (const event of this) if (event.type === "text") yield event.text;
  }

  /** The agent's whole text answer, once the turn ends. */
  async text(): Promise<string> {
    let text = "";
    for await (const chunk of this.textChunks()) text += chunk;
    return text;
  }
}
