/** A worker thread of `buildMany`: builds the jobs it is posted, one at a time, until it gets null. */
import { parentPort } from "node:worker_threads";
import { type BuildJob, buildProxy } from "./build.js";
import { BuildError } from "./errors.js";

const port = parentPort!;
port.on("message", async (job: BuildJob | null) => {
  if (job === null) {
    port.close();
    return;
  }
  try {
    port.postMessage({ ok: true, result: await buildProxy({ ...job, force: true }) });
  } catch (error) {
    port.postMessage({
      ok: false,
      plain: !(error instanceof BuildError),
      message: error instanceof BuildError ? error.message : String((error as Error)?.stack ?? error),
      diagnostics: error instanceof BuildError ? error.diagnostics : "",
    });
  }
});
