/** Messages between `WorkerSandbox` (parent thread) and `sandbox-worker` (the guest's thread). */
import type { GuestEncodings } from "./canonical-host.js";
import type { SandboxLimits } from "./sandbox.js";

export type WorkerRequest =
  /** `hold`: two shared words, [0] 1 while the parent holds deliveries back, [1] the hold's number (see `sandbox-worker.ts`). */
  | {
      type: "start";
      module: WebAssembly.Module;
      encodings: GuestEncodings;
      limits: SandboxLimits;
      grants: string[];
      hold: SharedArrayBuffer;
    }
  /** Deliveries in order, one `receive` each (a batch: see `WorkerSandbox.pump`). */
  | { type: "deliver"; messages: string[] };

/** What one delivery came to: `guestMs`, time spent in `receive`, measured in the worker; `units`: what the output was charged (see `CanonicalHost`). */
export interface DeliveryResult {
  output: string[];
  guestMs: number;
  units: number;
}

export type WorkerReply =
  | { type: "started" }
  /** The next deliveries' results, in order: a batch's, or a part of it (see `sandbox-worker.ts`). */
  | { type: "done"; results: DeliveryResult[] }
  /** The worker waits, between two deliveries, for hold number `hold` to end (its results so far were sent). */
  | { type: "held"; hold: number }
  | { type: "failed"; kind: "trap" | "fault"; message: string };
