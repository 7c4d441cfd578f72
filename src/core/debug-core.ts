import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { instantiateSync } from "@assemblyscript/loader";
import { CtxfoldError } from "../errors.js";
import { CoreInstance, type CoreExports } from "./core-instance.js";

/**
 * A CoreInstance over build/core.debug.wasm (asserts kept, debug info), instantiated through
 * @assemblyscript/loader. This is the one use of the loader, and it is off every hot path:
 * its `env.abort` reads the AssemblyScript strings of a failed assert out of linear memory and
 * throws "abort: <message> at <file>:<line>:<column>", which is what a developer chasing a
 * kernel bug wants. The release core needs no glue at all: the host writes strings straight
 * into memory (the loader's __newString copies UTF-16 through a JS loop at ~0.45 GB/s).
 */
export function createDebugCore(): CoreInstance {
  const candidates = ["../../build/core.debug.wasm", "../../../build/core.debug.wasm"].map((rel) => fileURLToPath(new URL(rel, import.meta.url)));
  let bytes: Buffer | undefined;
  for (const p of candidates) {
    try {
      bytes = readFileSync(p);
      break;
    } catch {
      // try the next layout (src/ in tests, dist/src/ when built)
    }
  }
  if (!bytes) throw new CtxfoldError("E_WASM_UNAVAILABLE", `core.debug.wasm not found (looked in ${candidates.join(", ")}); run \`npm run asbuild:debug\``);
  const module = new WebAssembly.Module(bytes);
  return new CoreInstance(module, (m) => instantiateSync<Record<string, unknown>>(m, {}).exports as unknown as CoreExports);
}
