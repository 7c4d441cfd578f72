import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { CtxfoldError } from "../errors.js";

/** The ABI version this host speaks; core.wasm's abiVersion() must match. */
export const kCoreAbiVersion = 5;

let cachedModule: WebAssembly.Module | undefined;

/**
 * Where core.wasm sits: beside the package root's build/ whether this file runs from src/core
 * (tests, ts sources) or dist/src/core (the built package). Not read from the environment: a
 * host whose core.wasm lives elsewhere (a bundle) compiles it and hands it over (setCoreModule).
 */
function locateCoreWasm(): string {
  const candidates = ["../../build/core.wasm", "../../../build/core.wasm"].map((rel) => fileURLToPath(new URL(rel, import.meta.url)));
  const found = candidates.find((p) => existsSync(p));
  if (!found) {
    throw new CtxfoldError("E_WASM_UNAVAILABLE", `core.wasm not found (looked in ${candidates.join(", ")}); run \`npm run build\``);
  }
  return found;
}

/**
 * Compiles core.wasm once per thread, synchronously, and caches the module. A worker that
 * was handed a compiled module (setCoreModule) never compiles.
 */
export function getCoreModule(): WebAssembly.Module {
  if (cachedModule) return cachedModule;
  if (typeof WebAssembly !== "object") {
    throw new CtxfoldError("E_WASM_UNAVAILABLE", "WebAssembly is not available in this runtime");
  }
  const path = locateCoreWasm();
  try {
    cachedModule = new WebAssembly.Module(readFileSync(path));
  } catch (cause) {
    throw new CtxfoldError("E_WASM_UNAVAILABLE", `cannot compile ${path}: ${(cause as Error).message}`, { cause });
  }
  return cachedModule;
}

/** Hands this thread an already compiled core (a worker gets it through workerData). */
export function setCoreModule(module: WebAssembly.Module): void {
  cachedModule = module;
}
