/** A build that failed for a reason the author can fix; `diagnostics` is asc's output, if any. */
export class BuildError extends Error {
  constructor(
    message: string,
    readonly diagnostics = "",
  ) {
    super(message);
    this.name = "BuildError";
  }
}

export function firstLine(error: unknown): string {
  return String(error instanceof Error ? error.message : error).split("\n")[0];
}
