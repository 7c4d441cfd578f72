/**
 * The LangChain recall tool: `await ctxfoldRecallTool({ store })` is a StructuredTool (made by
 * @langchain/core's `tool()`, imported on first use: @langchain/core is an optional peer) for
 * `createAgent({ tools })`, `model.bindTools` or a ToolNode, giving the model the content behind
 * the refs of its compacted prompt (src/recall/recall.ts; a history's messages as LangChain
 * message dicts by default).
 *
 * Decisions:
 * - `responseFormat: "content_and_artifact"`: the ToolMessage's content is the page's text (and,
 *   when there is more, the offset to ask for), its artifact the page itself (RecallResult) for
 *   the program around the model. Invoked with bare arguments, the tool returns the text.
 * - Errors are thrown as CtxfoldError (E_BAD_REF, E_REF_NOT_FOUND, E_CORRUPT, E_BAD_INPUT);
 *   LangChain's ToolNode turns a tool's throw into an error ToolMessage the model reads.
 * - The tool is named `recall`, as the default recall hint says: turn the hint on with
 *   `recallHint: true` in the options of ctxfoldRunnable / langChainCompactor.
 */
import { CtxfoldError } from "../errors.js";
import { checkPeerVersions } from "../peer-version.js";
import {
  checkRecallToolOptions,
  kRecallToolDescription,
  kRecallToolName,
  pageText,
  recall,
  RecallToolInput,
  type RecallResult,
  type RecallToolOptions,
} from "../recall/index.js";

export type { RecallResult, RecallScope, RecallToolOptions } from "../recall/index.js";

/**
 * The tool ctxfoldRecallTool makes, structurally (it is @langchain/core's DynamicStructuredTool):
 * what `createAgent`'s and `bindTools`' parameters take, without ctxfold's types naming
 * @langchain/core.
 */
export type CtxfoldLangChainTool = {
  name: string;
  description: string;
  schema: typeof RecallToolInput;
  returnDirect: boolean;
  lc_namespace: string[];
  /** Bare arguments give the page's text; a tool call (`{ name, args, id, type: "tool_call" }`) a ToolMessage with the page as its artifact. */
  invoke(
    input: { ref: string; offset?: number } | { name: string; args: { ref: string; offset?: number }; id: string; type: "tool_call" },
    config?: unknown,
  ): Promise<unknown>;
};

type ToolFactory = (
  func: (input: { ref: string; offset?: number }) => Promise<[string, RecallResult]>,
  fields: { name: string; description: string; schema: typeof RecallToolInput; responseFormat: "content_and_artifact" },
) => CtxfoldLangChainTool;

let tools: Promise<{ tool: ToolFactory }> | undefined;

/**
 * A recall tool over `options.store` (the store the compaction offloads to), confined to
 * `options.scope` when given (RecallScope: one conversation's refs or one run's), history refs in
 * `options.format` (default "langchain"). Options are checked before @langchain/core is
 * imported (E_BAD_INPUT naming the field); without @langchain/core, E_BAD_INPUT saying so.
 */
export async function ctxfoldRecallTool(options: RecallToolOptions): Promise<CtxfoldLangChainTool> {
  checkPeerVersions(["@langchain/core"], "ctxfoldRecallTool of ctxfold/langchain");
  const { reach, format, maxBytes } = checkRecallToolOptions(options, "langchain");
  let mod: { tool: ToolFactory };
  try {
    mod = await (tools ??= import("@langchain/core/tools") as unknown as Promise<{ tool: ToolFactory }>);
  } catch (err) {
    tools = undefined;
    throw new CtxfoldError("E_BAD_INPUT", "@langchain/core is not installed (npm install @langchain/core): ctxfoldRecallTool makes a LangChain tool", {
      path: "@langchain/core",
      cause: err,
    });
  }
  return mod.tool(
    async (input) => {
      const page = recall(reach(), input.ref, { offset: input.offset, maxBytes, format });
      return [pageText(page), page];
    },
    { name: kRecallToolName, description: kRecallToolDescription, schema: RecallToolInput, responseFormat: "content_and_artifact" },
  );
}
