/**
 * The content-addressed offload store (step reduction's DataOffloader): where reduction keeps the full
 * outputs it replaces with one line, in memory or as files.
 */
export {
  ContentAddressedStore,
  MemoryOffloadStore,
  StoreView,
  createMemoryStore,
  decodeText,
  encodeText,
  kDefaultOffloadPrefix,
  kNameShape,
  parseRef,
  refPattern,
  sanitizeExt,
  sanitizeKind,
  storeRefs,
  type RefParts,
  type OffloadHint,
  type OffloadStore,
  type OffloadStoreOptions,
} from "./offload.js";
export { FsOffloadStore, createFsStore, type FsOps, type FsStoreOptions } from "./fs-store.js";
export { putMessages, getMessage, getMessages, indexedRefs, prepareMessages } from "./messages.js";
export { reachableRefs } from "./reach.js";
export { PackOffloadStore, createPackStore, type PackStoreOptions } from "./pack-store.js";
export { ScopedStore, scopedStore } from "./scope.js";
export { ScopeRecords, mayNameRefs, runScopeRefs, writeScopeRecord, type RunScope, type RunSelector } from "./scope-record.js";
