/**
 * The hostile suite again, under the isolation mode that is not the default: every `cordon run`
 * it starts inherits CORDON_ISOLATION, so each hostile case (loops, memory, floods, traps, huge
 * messages, backpressure, failure policies) is checked in both sandboxes.
 */
import { DEFAULT_ISOLATION } from "../runtime/sandbox/sandbox-factory.js";

process.env.CORDON_ISOLATION = DEFAULT_ISOLATION === "thread" ? "worker" : "thread";
await import("./faults.test.js");
