/**
 * Which sandbox runs a proxy: `"thread"` (in the conductor's thread, fuel-metered) or `"worker"`
 * (its own worker thread, wall-clock watchdog). Chosen per proxy in the chain config
 * (`"isolation"`), by `cordon run --isolation`, or by `CORDON_ISOLATION`; the default is the one
 * `make bench` measured as cheaper with the same hostile suite green (see README, "What a chain costs").
 *
 * A module the fuel pass cannot meter (an instruction it does not know) runs in a worker instead,
 * with a warning: it is never run in-thread unmetered.
 */
import type { LoadedComponent } from "./component-loader.js";
import { FuelUnsupported } from "./fuel.js";
import type { ProxySandbox, SandboxLimits } from "./sandbox.js";
import { ThreadSandbox } from "./thread-sandbox.js";
import { WorkerSandbox } from "./worker-sandbox.js";

export const ISOLATIONS = ["thread", "worker"] as const;
export type Isolation = (typeof ISOLATIONS)[number];

/** The measured winner (`make bench`): no hop and no isolate per proxy. */
export const DEFAULT_ISOLATION: Isolation = "thread";

export const isIsolation = (value: unknown): value is Isolation => (ISOLATIONS as readonly unknown[]).includes(value);

/** The default for proxies that do not choose: `CORDON_ISOLATION` if set (tests run the suites under each), else `DEFAULT_ISOLATION`. */
export function defaultIsolation(): Isolation {
  const env = process.env.CORDON_ISOLATION;
  if (env === undefined || env === "") return DEFAULT_ISOLATION;
  if (!isIsolation(env)) throw new Error(`CORDON_ISOLATION must be one of ${ISOLATIONS.join(", ")}, not ${JSON.stringify(env)}`);
  return env;
}

export type SandboxFactory = (component: LoadedComponent, limits: SandboxLimits, grants: readonly string[]) => ProxySandbox;

export function sandboxFactory(isolation: Isolation = defaultIsolation(), warn: (line: string) => void = () => {}): SandboxFactory {
  if (isolation === "worker") return (component, limits, grants) => new WorkerSandbox(component, limits, grants);
  return (component, limits, grants) => {
    try {
      return new ThreadSandbox(component, limits, grants);
    } catch (error) {
      if (!(error instanceof FuelUnsupported)) throw error;
      warn(`${component.source} cannot be fuel-metered (${error.message}); running it in a worker thread instead`);
      return new WorkerSandbox(component, limits, grants);
    }
  };
}
