/** `cordon build`: the SDK's build tool (`cordon-build-proxy`), on Cordon's command line; the SDK is found by author-sdk.ts. */
import { runSdkTool } from "./author-sdk.js";

export function build(argv: string[]): Promise<number> {
  return runSdkTool("sdk-as/tools/cli.js", argv, "cordon build");
}
