/**
 * A proxy that is a WebAssembly component, run in a sandbox. Its first message is always the
 * `_cordon/configure` notification with its name and config (see wit/README.md); after that it
 * sees exactly what the router sends it — except what its manifest says it does not watch, which
 * its interest filter passes on in its place, in order (`interest-filter.ts`). Output that is not
 * a JSON object is a fault: the proxy is stopped rather than trusted to be making sense.
 */

import { parseLevel } from "../log.js";
import type { JsonRpcMessage, JsonRpcNotification, JsonRpcRequest } from "../protocol/json-rpc.js";
import { FORWARD_MARKER, Methods } from "../protocol/methods.js";
import { attachRaw, piecesOf, serialize } from "../protocol/raw-json.js";
import type { Peer, PeerSink } from "../routing/peer.js";
import { type LoadOptions, loadComponent } from "../sandbox/component-loader.js";
import { configProblems } from "../sandbox/manifest.js";
import { DEFAULT_LIMITS, Delivery, type ProxySandbox, type SandboxLimits } from "../sandbox/sandbox.js";
import { type SandboxFactory, sandboxFactory } from "../sandbox/sandbox-factory.js";
import { editedForward } from "./edited-forward.js";
import { InterestFilter, interestOf, isCancellation } from "./interest-filter.js";
import { forwardMarker, markerPasses, unchangedForward } from "./unchanged-forward.js";

export interface WasmProxySpec {
  /** Name in the chain (logs, errors, the configure notification). */
  name: string;
  path: string;
  config: unknown;
  limits?: Partial<SandboxLimits>;
  /** Expected SHA-256 of the component file (hex); a mismatch refuses to start. */
  sha256?: string;
  /** Grants the chain config gives it (compared with what its manifest asks for). */
  grants?: string[];
}

export class WasmProxyPeer implements Peer {
  readonly label: string;
  /** Its swimlane in traces: its name in the chain. */
  readonly traceName: string;
  private sandbox: ProxySandbox | null = null;
  /** What the guest does not watch passes it here (null: it sees everything). One per instance. */
  private filter: InterestFilter | null = null;
  private dead = false;
  private paused = false;
  /** `whenIdle` callbacks waiting in the sandbox's queue; run when their turn comes, or when the guest fails. */
  private readonly waiting = new Set<IdleMarker>();
  /** Messages the filter passed while the guest owed nothing, on their way back from a microtask (`handBack`). */
  private handedBack = 0;
  private sink: PeerSink | null = null;

  constructor(
    private readonly spec: WasmProxySpec,
    private readonly loadOptions: LoadOptions & { warn?: (line: string) => void } = {},
    /** Which sandbox runs the guest (`sandbox-factory.ts`: in-thread with fuel, or a worker). */
    private readonly createSandbox: SandboxFactory = sandboxFactory(undefined, loadOptions.warn),
  ) {
    this.label = `proxy "${spec.name}"`;
    this.traceName = spec.name;
  }

  /** Starts (or, after a failure, restarts) the guest in a fresh sandbox. */
  async open(sink: PeerSink): Promise<void> {
    this.dead = false;
    this.sink = sink;
    const component = await loadComponent(this.spec.path, { ...this.loadOptions, grants: this.spec.grants });
    if (this.spec.sha256 && component.sha256 !== this.spec.sha256) {
      throw new Error(
        `${this.label} (${this.spec.path}) does not match its pin: the config says sha256 ${this.spec.sha256}, the file is ${component.sha256}; refusing to start`,
      );
    }
    const problems = await configProblems(component.manifest, this.spec.config ?? {});
    if (problems.length > 0) {
      throw new Error(`${this.label}: its config does not match the schema in its manifest: ${problems.join("; ")}`);
    }
    const missing = (component.manifest?.grants ?? []).filter((g) => !(this.spec.grants ?? []).includes(g));
    if (missing.length > 0) {
      this.loadOptions.warn?.(
        `${this.label} asks for ${missing.join(", ")}, which the chain config does not grant; those requests will be refused`,
      );
    }
    const sandbox = this.createSandbox(component, { ...DEFAULT_LIMITS, ...this.spec.limits }, this.spec.grants ?? []);
    const offerEdits = component.encodings.receive === "utf16";
    this.sandbox = sandbox;
    const interest = sandbox.passThrough ? interestOf(component.manifest) : null;
    this.filter = interest && new InterestFilter(interest);
    if (this.paused) sandbox.pause?.(); // a restart during backpressure starts paused
    const fail = (reason: string, kind: string) => {
      if (this.dead) return;
      this.dead = true;
      void sandbox.stop();
      sink.closed(reason, { kind });
      this.releaseWaiting();
    };
    await sandbox
      .start({
        output: (messages, delivery) => {
          // A delivery is handed on by the marker once: more markers would be copies of any size
          // for 50 units of output each, past the output budget (the ordinary path refuses them).
          let marked = false;
          for (const output of messages) {
            if (this.dead) return;
            let text = output;
            // What the guest handed on unchanged (by the marker, or written out) is routed as the message it was given (unchanged-forward.ts).
            let forwarded: object | null = null;
            if (delivery !== undefined && !marked) {
              forwarded = forwardMarker(delivery, output);
              // A request handed on with its answer passing the guest: under an id of the filter's (interest-filter.ts).
              if (forwarded !== null && this.filter?.answersPass && markerPasses(output)) {
                forwarded = this.filter.handOnPassing(delivery.message, forwarded);
              }
              // A cancellation handed on as delivered names a request by this hop's id, which means
              // nothing past the guest. The SDK hands on one it does not know: it may name a request
              // the guest let pass with its answer while the cancel waited behind it, which the filter
              // now knows and translates as for any request that passed; any other is dropped.
              if (forwarded !== null && output === FORWARD_MARKER && isCancellation(delivery.message)) {
                marked = true;
                forwarded = this.filter?.pass(delivery.message as JsonRpcMessage) ?? null;
                if (forwarded === null) continue;
              }
              // An edit handed back as the edit alone (edited-forward.ts): routed as checked there, or as its text.
              const edited = forwarded === null && offerEdits ? editedForward(delivery, output) : null;
              if (edited?.pass && this.filter?.answersPass) edited.message = this.filter.handOnPassing(delivery.message, edited.message);
              if (edited?.checked) forwarded = edited.message;
              else if (edited) text = serialize(edited.message);
              marked = forwarded !== null || edited !== null;
            }
            if (delivery !== undefined && forwarded === null && text === output) forwarded = unchangedForward(delivery, output);
            if (forwarded !== null) {
              sink.message(forwarded, true);
              continue;
            }
            let value: unknown;
            try {
              value = JSON.parse(text);
              if (typeof value === "object" && value !== null) attachRaw(value, text);
            } catch {
              return fail(`sent output that is not JSON: ${text.length > 60 ? `${text.slice(0, 60)}…` : text}`, "fault");
            }
            sink.message(value);
          }
        },
        passed: (message) => {
          if (message instanceof IdleMarker) {
            if (this.waiting.delete(message)) message.then();
          } else if (!this.dead) sink.message(message, true); // built here from a message the router admitted
        },
        congested: (congested) => sink.congested?.(congested),
        failed: (failure) =>
          fail(
            failure.kind === "timeout" || failure.kind === "budget"
              ? `was stopped: ${failure.message}`
              : `failed (${failure.kind}): ${failure.message}`,
            failure.kind,
          ),
      })
      .catch((error: Error) => {
        throw new Error(`${this.label} (${this.spec.path}) failed to start: ${error.message}`);
      });
    // `debug`: the SDK then reports requests a hook returned without handling (CORDON_LOG=debug).
    const debug = parseLevel(process.env.CORDON_LOG) === "debug";
    const configure = {
      jsonrpc: "2.0",
      method: Methods.cordonConfigure,
      // forward: the guest may hand on what it was delivered with `_cordon/forward` instead of a copy (unchanged-forward.ts).
      // forwardEdit: an edit may come back as the edit alone (edited-forward.ts), its offsets in UTF-16 code units.
      // answers: the methods whose answers the guest sees when it forwards such a request; the
      // others it may hand on with `"pass":true` (interest-filter.ts). Absent: it sees every answer.
      params: {
        name: this.spec.name,
        config: this.spec.config ?? {},
        debug,
        forward: true,
        forwardEdit: offerEdits,
        ...(this.filter?.answersPass ? { answers: [...interest!.answers!] } : {}),
      },
    };
    sandbox.deliver(JSON.stringify(configure)); // a plain text: the host's own message is never handed on
  }

  send(message: JsonRpcMessage, chosen = false): void {
    const sandbox = this.sandbox;
    if (this.dead || sandbox === null) return;
    if (this.filter !== null && !chosen) {
      const passed = this.filter.pass(message);
      if (passed !== null) {
        if (sandbox.idle?.() === true && !this.paused) return this.handBack(passed);
        return sandbox.passThrough!(passed);
      }
    }
    const text = serialize(message);
    sandbox.deliver(new Delivery(text, message, piecesOf(message, text)));
  }

  /**
   * A message the guest does not watch, while its sandbox owes nothing: the conductor routes it
   * past this proxy (its answer then never comes through here either). Otherwise `send` lets the
   * filter pass it in its turn, behind the deliveries still queued.
   */
  passes(message: JsonRpcRequest | JsonRpcNotification): boolean {
    const sandbox = this.sandbox;
    return this.filter !== null && !this.dead && this.handedBack === 0 && sandbox?.idle?.() === true && this.filter.ignores(message);
  }

  whenIdle(then: () => void): void {
    const sandbox = this.sandbox;
    if (this.dead || sandbox === null || sandbox.idle?.() !== false || !sandbox.passThrough) {
      // Behind what `handBack` has on its way (microtasks run in order), or at once.
      return this.handedBack > 0 && !this.dead ? queueMicrotask(then) : then();
    }
    const marker = new IdleMarker(then);
    this.waiting.add(marker);
    sandbox.passThrough(marker);
  }

  /**
   * What the filter passes while the guest owes nothing and is not held back (an answer to a
   * request that passed, most often) goes back from a microtask rather than a task of the
   * sandbox's queue: nothing of the guest's can be ahead of it, and what comes after it meanwhile
   * queues behind it (`passes` and `whenIdle` wait for it; a delivery's output comes in a later
   * task). Never from inside the router's call.
   */
  private handBack(message: JsonRpcMessage): void {
    this.handedBack++;
    queueMicrotask(() => {
      this.handedBack--;
      if (!this.dead) this.sink?.message(message, true);
    });
  }

  /** The guest is gone: what waited behind it goes on now (from a microtask, never inside the router's call). */
  private releaseWaiting(): void {
    if (this.waiting.size === 0) return;
    const markers = [...this.waiting];
    this.waiting.clear();
    queueMicrotask(() => {
      for (const marker of markers) marker.then();
    });
  }

  /** Backpressure: the guest starts no further delivery until resumed (see `ProxySandbox.pause`). */
  pauseInput(): void {
    this.paused = true;
    this.sandbox?.pause?.();
  }

  resumeInput(): void {
    this.paused = false;
    this.sandbox?.resume?.();
  }

  async close(): Promise<void> {
    this.dead = true;
    this.releaseWaiting();
    await this.sandbox?.stop();
  }
}

/** A place in the sandbox's queue: `then` runs when the guest has produced everything before it. */
class IdleMarker {
  constructor(readonly then: () => void) {}
}
