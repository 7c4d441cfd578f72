/**
 * The canonical transcript model (`ctxfold/model`): the zod schemas every adapter parses into
 * and renders from (values, for validating canonical messages, and types), the texts of
 * messages, comparison by value, and the marks ctxfold puts on what it wrote.
 */
export {
  Message,
  Part,
  TextPart,
  ToolCallPart,
  ToolResultPart,
  ReasoningPart,
  MediaPart,
  OpaquePart,
  ResultContentPart,
  Role,
  TurnId,
  Meta,
  Step,
  Turn,
  TurnRange,
  CompactedSection,
  CompactionBlock,
  Loop,
  Session,
} from "./schema.js";
export type { MessageInput } from "./schema.js";
export { messageTexts } from "./texts.js";
export { jsonEqual } from "./equal.js";
export { mergeAdjacent } from "./adjacent.js";
export { kMark, markOf } from "./marks.js";
export type { LedgerLine, PartMark } from "./marks.js";
