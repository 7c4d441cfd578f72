import { CtxfoldError } from "../errors.js";
import { getCore, type CoreInstance } from "./core-instance.js";

/** Which implementation runs a kernel: the WASM core, or its plain TypeScript twin. */
export type Backend = "wasm" | "ts";

let wasmProbe: boolean | undefined;

/**
 * The WASM core of this thread, or undefined where it cannot load (no WebAssembly, core.wasm
 * missing). `auto` callers fall back to the TypeScript twins; `wasm` callers get the error.
 */
export function coreFor(backend: Backend | "auto" = "auto"): CoreInstance | undefined {
  if (backend === "ts") return undefined;
  if (backend === "wasm") return getCore();
  if (wasmProbe === undefined) {
    try {
      getCore().exports;
      wasmProbe = true;
    } catch (err) {
      if (!CtxfoldError.isInstance(err)) throw err;
      wasmProbe = false;
    }
  }
  return wasmProbe ? getCore() : undefined;
}
