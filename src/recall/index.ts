/**
 * Recall: the content behind a ref, from any offload store, for an agent's tools (the AI SDK and
 * LangChain recall tools, `ctxfold mcp`) and for runners: `recall` pages a ref's original bytes or
 * renders a history's messages in a provider format, `searchStore` finds refs by a few words.
 */
export { recall, checkRecallOptions, kDefaultRecallPageBytes, type RecallOptions, type RecallResult, type RecallText, type RecallMessages } from "./recall.js";
export { searchStore, searchStoreInSlices, kDefaultSearchLimit, type SearchEntry, type SearchOptions } from "./search.js";
export {
  kRecallToolName,
  kSearchToolName,
  kRecallToolDescription,
  kSearchToolDescription,
  kRecallInputShape,
  kSearchInputShape,
  RecallToolInput,
  pageNote,
  pageBody,
  pageText,
  searchText,
  checkRecallToolOptions,
  type RecallScope,
  type RecallToolOptions,
} from "./tool.js";
