/**
 * Why a package was refused. Every step of fetching and checking a proxy package throws this with
 * a message that names the package and what failed; the commands print it and write nothing.
 * `code` is a short machine word (`EINTEGRITY`, `ESIGNATURE`, …) for scripts and tests.
 */
export class PackageRefused extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "PackageRefused";
  }
}
