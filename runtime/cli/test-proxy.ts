/** `cordon test`: the SDK's proxy tester (`cordon-test-proxy`: golden transcripts; in a project, also node --test). */
export async function testProxy(argv: string[]): Promise<number> {
  const { main } = await import("../../sdk-as/testing/cli.js");
  return main(argv, "cordon test");
}
