/**
 * ctxfold as AI SDK middleware: a tool-calling agent loop whose every prompt stays within a
 * token budget, with a prefix that stays byte-identical between compactions (epochs) so the
 * provider's prompt cache keeps hitting.
 *
 * Runs offline: a local stub model (swap in `openai("gpt-4o")` or any AI SDK model) asks to read
 * one file per step and records each prompt it receives; the tool returns a made-up file. One
 * line per model call: the prompt's tokens before → after ctxfold, and where a new epoch starts.
 */
import { pathToFileURL } from "node:url";
import { generateText, stepCountIs, tool, wrapLanguageModel } from "ai";
import { z } from "zod";
import { ctxfoldMiddleware, type CompactInfo } from "ctxfold/ai-sdk";
import { readFile } from "./fake-files.js";
import { stubReaderModel } from "./stub-model.js";

export async function main(
  steps = 40,
  log: (line: string) => void = console.log,
): Promise<{ budget: number; reports: CompactInfo[]; prompts: unknown[]; text: string }> {
  const budget = 8000;
  // The stub model: at call n it reads src/module<n>.ts; at the last step it answers.
  const model = stubReaderModel(steps);

  const reports: CompactInfo[] = [];
  const compacted = wrapLanguageModel({
    model,
    middleware: ctxfoldMiddleware({
      budget, // or leave it out for a model whose context window ctxfold knows (gpt-4o, claude-sonnet-4, …)
      onCompact: (info) => {
        reports.push(info);
        log(
          `call ${String(reports.length).padStart(3)}: ${String(info.tokensBefore).padStart(6)} → ${String(info.tokensAfter).padStart(5)} tokens${info.newEpoch ? `  new epoch ${info.epoch}: prefix rebuilt` : ""}`,
        );
      },
    }),
  });

  const result = await generateText({
    model: compacted,
    system: "You are a coding agent. Read the files you need, then answer.",
    prompt: "Read every module of the project and summarise what it does.",
    tools: {
      readFile: tool({ description: "Read a file", inputSchema: z.object({ path: z.string() }), execute: async ({ path }) => readFile(path) }),
    },
    stopWhen: stepCountIs(steps),
  });
  log(
    `${result.steps.length} steps, ${reports.filter((r) => r.newEpoch).length} epochs, every prompt ≤ ${budget} tokens: ${reports.every((r) => r.tokensAfter <= budget)}`,
  );
  return { budget, reports, prompts: model.doGenerateCalls.map((c) => c.prompt), text: result.text };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
