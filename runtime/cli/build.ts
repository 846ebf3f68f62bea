/** `cordon build`: the SDK's build tool (`cordon-build-proxy`), on Cordon's command line. */
export async function build(argv: string[]): Promise<number> {
  const { main } = await import("../../sdk-as/tools/cli.js");
  return main(argv, "cordon build");
}
