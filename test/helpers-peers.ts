import { mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import type { PeerResolver } from "../src/peer-version.js";

/** How a fake package is laid out: whether it exports `./package.json`, and whether its entry sits under a nameless dist/esm/package.json (as dual packages ship). */
export interface FakePackageShape {
  exportsPackageJson?: boolean;
  nestedEntry?: boolean;
}

/**
 * Writes `dir/node_modules/<name>` for each name: a package.json of that version (ESM, an
 * `exports` map) and a minimal entry. Returns `dir`.
 */
export function writeFakePackages(dir: string, versions: Record<string, string>, shape: FakePackageShape = {}): string {
  for (const [name, version] of Object.entries(versions)) {
    const root = path.join(dir, "node_modules", name);
    const entry = shape.nestedEntry ? "./dist/esm/index.js" : "./index.js";
    mkdirSync(path.dirname(path.join(root, entry)), { recursive: true });
    const exports: Record<string, string> = { ".": entry };
    if (shape.exportsPackageJson) exports["./package.json"] = "./package.json";
    writeFileSync(path.join(root, "package.json"), JSON.stringify({ name, version, type: "module", exports }));
    if (shape.nestedEntry) writeFileSync(path.join(root, "dist/esm/package.json"), JSON.stringify({ type: "module" }));
    writeFileSync(path.join(root, entry), "export const old = true;\n");
  }
  return dir;
}

/** Resolves specifiers as a module in `dir` would (Node's own algorithm over the fake node_modules). */
export function resolverIn(dir: string): PeerResolver {
  return createRequire(path.join(dir, "index.js")).resolve;
}
