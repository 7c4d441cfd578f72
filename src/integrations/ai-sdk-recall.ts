/**
 * The AI SDK recall tool: `tools: { recall: ctxfoldRecallTool({ store }) }` in generateText,
 * streamText or an Agent gives the model the content behind the refs of its compacted prompt
 * (src/recall/recall.ts: pages of the original bytes, a history's messages as ModelMessages).
 *
 * Decisions:
 * - A plain object with the shape of the SDK's `tool()` result (description, a zod
 *   `inputSchema`, `execute`, `toModelOutput`), so this module imports nothing of `ai` (an optional
 *   peer) and the object is still a `Tool` (a type test assigns it to the SDK's own type).
 * - `execute` returns the page (RecallResult) for the program around the model (the step's
 *   tool result); `toModelOutput` gives the model the page's text and, when there is more, the
 *   offset to ask for (tool.ts).
 * - Errors are thrown as CtxfoldError (E_BAD_REF, E_REF_NOT_FOUND, E_CORRUPT, E_BAD_INPUT): the
 *   SDK turns a tool's throw into a tool-error result the model reads, and the loop goes on.
 * - Register it under the name `recall` (kRecallToolName): ctxfoldMiddleware then turns the
 *   recall hint on for calls that offer it.
 */
import { checkPeerVersions } from "../peer-version.js";
import {
  checkRecallToolOptions,
  kRecallToolDescription,
  pageText,
  recall,
  RecallToolInput,
  type RecallResult,
  type RecallToolOptions,
} from "../recall/index.js";

export type { RecallResult, RecallScope, RecallToolOptions } from "../recall/index.js";

/** The recall tool as the AI SDK takes it (structurally a `Tool<{ ref, offset? }, RecallResult>`). */
export interface CtxfoldRecallTool {
  readonly description: string;
  readonly inputSchema: typeof RecallToolInput;
  execute(input: { ref: string; offset?: number }): Promise<RecallResult>;
  toModelOutput(options: { output: RecallResult }): { type: "text"; value: string };
}

/**
 * A recall tool over `options.store` (the store the compaction offloads to), confined to
 * `options.scope` when given (RecallScope: one conversation's refs or one run's), history refs in
 * `options.format` (default "ai-sdk"). Options are checked here (E_BAD_INPUT naming the field).
 */
export function ctxfoldRecallTool(options: RecallToolOptions): CtxfoldRecallTool {
  checkPeerVersions(["ai"], "ctxfoldRecallTool of ctxfold/ai-sdk");
  const { reach, format, maxBytes } = checkRecallToolOptions(options, "ai-sdk");
  return {
    description: kRecallToolDescription,
    inputSchema: RecallToolInput,
    execute: async (input) => recall(reach(), input.ref, { offset: input.offset, maxBytes, format }),
    toModelOutput: ({ output }) => ({ type: "text", value: pageText(output) }),
  };
}
