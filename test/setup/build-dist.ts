// The pool's workers, the spawned CLI and the bench gate (dist/bench/gate.js) run the built
// JavaScript (dist/): rebuild it when a source file (src/ or bench/) is newer than the build, so
// tests never exercise stale code.
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
  const dist = path.join(root, "dist/src");
  const sources = Math.max(newest(path.join(root, "src"), ".ts"), newest(path.join(root, "bench"), ".ts"));
  if (existsSync(dist) && existsSync(path.join(root, "dist/bench")) && sources <= newest(dist, ".js")) return;
  execFileSync(process.execPath, [path.join(root, "node_modules/typescript/bin/tsc"), "-p", path.join(root, "tsconfig.json")], { stdio: "inherit" });
}
