/** The `cordon` command line: dispatches to the subcommands. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case "reference-agent": {
      const { runReferenceAgent } = await import("../agent/reference-agent.js");
      await runReferenceAgent(rest);
      return 0;
    }
    default:
      process.stderr.write(`cordon: unknown command ${command ?? "(none)"}\n`);
      return 2;
  }
}
