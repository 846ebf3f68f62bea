/** Messages between `WorkerSandbox` (parent thread) and `sandbox-worker` (the guest's thread). */
import type { GuestEncodings } from "./canonical-host.js";
import type { SandboxLimits } from "./sandbox.js";

export type WorkerRequest =
  | { type: "start"; module: WebAssembly.Module; encodings: GuestEncodings; limits: SandboxLimits; grants: string[] }
  | { type: "deliver"; message: string };

export type WorkerReply =
  | { type: "started" }
  /** `guestMs`: time spent in `receive`, measured in the worker; `units`: what the output was charged (see `CanonicalHost`). */
  | { type: "done"; output: string[]; guestMs: number; units: number }
  | { type: "failed"; kind: "trap" | "fault"; message: string };
