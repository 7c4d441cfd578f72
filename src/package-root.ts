import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The package root above this file (src/ or dist/src/: tests run the sources, users the built
 * package), recognised by its package.json naming ctxfold; with that package.json's version.
 */
export function packageRoot(): { root: string; version: string } | undefined {
  for (const rel of ["../", "../../"]) {
    const root = fileURLToPath(new URL(rel, import.meta.url));
    try {
      const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { name?: unknown; version?: unknown };
      if (pkg.name === "ctxfold") return { root, version: String(pkg.version) };
    } catch {
      // no package.json here: try the next level
    }
  }
  return undefined;
}
