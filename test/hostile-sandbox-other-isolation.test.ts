/**
 * The sandbox ring again, under the isolation mode that is not the default: every `cordon run`
 * it starts inherits CORDON_ISOLATION, so each sandbox attack (tables, big sends, output and CPU
 * budgets, the cache pin, work the fuel must charge) is checked in both sandboxes.
 */
import { DEFAULT_ISOLATION } from "../runtime/sandbox/sandbox-factory.js";

process.env.CORDON_ISOLATION = DEFAULT_ISOLATION === "thread" ? "worker" : "thread";
await import("./hostile-sandbox.test.js");
await import("./hostile-sandbox-work.test.js");
