/**
 * The WASM host (`ctxfold/core`): the compiled core module and one instance per thread with its
 * arena, the kernels' batched calls, the debug build, content hashing, and the content addresses
 * stored outputs are named by. The kernels of the
 * other concepts are reached through their own modules (token estimates through ctxfold/tokens,
 * step grouping through ctxfold/steps, turn maps through ctxfold/block).
 */
export { getCore, CoreInstance } from "./core-instance.js";
export type { CoreExports, StringBatch } from "./core-instance.js";
export { getCoreModule, setCoreModule, kCoreAbiVersion } from "./load-core.js";
export { createDebugCore } from "./debug-core.js";
export type { Backend } from "./backend.js";
export { hashText, hashTexts, hashBytes, hashToHex } from "./hash.js";
export type { HashOptions } from "./hash.js";
export { contentAddress, legacyContentAddress, kContentAddressDigits, kLegacyAddressDigits } from "./content-address.js";
