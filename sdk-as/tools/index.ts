/** The SDK's build tool as a library: `buildProxy`, `buildMany` and the jobs they are made of. */
export { type BuildJob, type BuildResult, buildMany, buildProxy, findProxies, isUpToDate } from "./build.js";
export { checkCore } from "./check.js";
export { main } from "./cli.js";
export { type CompiledCore, compileCore } from "./compile.js";
export { componentize } from "./componentize.js";
export { entrySource, findSdkRoot, findWasiWit, findWit, WORLDS, type World, witSourceFor } from "./compose.js";
export { BuildError } from "./errors.js";
export { MANIFEST_SECTION, manifestCandidates, readManifestFor, withCustomSection } from "./manifest.js";
export { findProject, type Project } from "./project.js";
