import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** What packageRoot reads of ctxfold's own package.json. */
export interface PackageRoot {
  root: string;
  version: string;
  /** Its `peerDependencies`, name to range (the one list of the optional peers' accepted versions). */
  peerDependencies: Readonly<Record<string, string>>;
}

/**
 * The package root above this file (src/ or dist/src/: tests run the sources, users the built
 * package), recognised by its package.json naming ctxfold; with that package.json's version and
 * peer ranges.
 */
export function packageRoot(): PackageRoot | undefined {
  for (const rel of ["../", "../../"]) {
    const root = fileURLToPath(new URL(rel, import.meta.url));
    const pkg = packageJsonIn(root);
    if (pkg?.name === "ctxfold") return { root, version: String(pkg.version), peerDependencies: stringRecord(pkg.peerDependencies) };
  }
  return undefined;
}

/** The package.json in `dir`, parsed; undefined where there is none or it is not JSON. */
export function packageJsonIn(dir: string): { name?: unknown; version?: unknown; peerDependencies?: unknown } | undefined {
  try {
    return JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: unknown; version?: unknown; peerDependencies?: unknown };
  } catch {
    return undefined;
  }
}

/** The string-valued entries of a JSON object (none when it is no object). */
function stringRecord(value: unknown): Record<string, string> {
  if (typeof value !== "object" || value === null) return {};
  return Object.fromEntries(Object.entries(value).filter((e): e is [string, string] => typeof e[1] === "string"));
}
