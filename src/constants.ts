/** Seed for content hashes. Changing it changes every memo key and content address. */
export const kDefaultHashSeed = 0n;
/** Arena bytes a batch call fills before it is cut into another call. */
export const kDefaultBatchBytes = 4 * 1024 * 1024;
/** Linear memory above which an instance is dropped after a call, to hand the memory back. */
export const kMaxRetainedMemoryBytes = 64 * 1024 * 1024;
/** WebAssembly page size. */
export const kWasmPageBytes = 65536;
/** Largest linear memory wasm32 can address. */
export const kMaxWasmMemoryBytes = 4 * 1024 * 1024 * 1024;
/** Entries a TokenCounter memo keeps before it forgets the oldest. */
export const kDefaultMemoEntries = 100_000;
