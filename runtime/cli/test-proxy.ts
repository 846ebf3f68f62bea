/** `cordon test`: the SDK's proxy tester (`cordon-test-proxy`: golden transcripts; in a project, also node --test), found by author-sdk.ts. */
import { runSdkTool } from "./author-sdk.js";

export function testProxy(argv: string[]): Promise<number> {
  return runSdkTool("sdk-as/testing/cli.js", argv, "cordon test");
}
