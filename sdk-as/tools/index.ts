/** The SDK's build tool as a library: `buildProxy`, `buildMany` and the jobs they are made of. */
export { buildMany, buildProxy, findProxies, isUpToDate, type BuildJob, type BuildResult } from "./build.js";
export { checkCore } from "./check.js";
export { compileCore, type CompiledCore } from "./compile.js";
export { componentize } from "./componentize.js";
export { WORLDS, entrySource, findSdkRoot, findWasiWit, findWit, witSourceFor, type World } from "./compose.js";
export { BuildError } from "./errors.js";
export { MANIFEST_SECTION, manifestCandidates, readManifestFor, withCustomSection } from "./manifest.js";
export { findProject, type Project } from "./project.js";
export { main } from "./cli.js";
