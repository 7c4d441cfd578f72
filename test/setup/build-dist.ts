// The pool's workers, the spawned CLI, the bench gate (dist/bench/gate.js) and the packed
// tarball's examples (dist/examples) run the built JavaScript (dist/): rebuild it when a source
// file (src/, bench/ or examples/) is newer than the build, so tests never exercise stale code.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import * as path from "node:path";

function newest(dir: string, ext: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) t = Math.max(t, newest(p, ext));
    else if (e.name.endsWith(ext)) t = Math.max(t, statSync(p).mtimeMs);
  }
  return t;
}

export default function setup(): void {
  const root = path.resolve(import.meta.dirname ?? path.dirname(new URL(import.meta.url).pathname), "../..");
  const sources = Math.max(...["src", "bench", "examples"].map((d) => newest(path.join(root, d), ".ts")));
  const built = ["dist/src", "dist/bench", "dist/examples"].map((d) => path.join(root, d));
  if (built.every((d) => existsSync(d)) && sources <= Math.min(...built.map((d) => newest(d, ".js")))) return;
  execFileSync(process.execPath, [path.join(root, "node_modules/typescript/bin/tsc"), "-p", path.join(root, "tsconfig.json")], { stdio: "inherit" });
}
