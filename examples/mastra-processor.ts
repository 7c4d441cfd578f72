/**
 * ctxfold as a Mastra input processor: an agent's tool loop whose every prompt stays within a
 * token budget, with a prefix that stays byte-identical between compactions (epochs) so the
 * provider's prompt cache keeps hitting. A drop-in for TokenLimiter at request time.
 *
 * Runs offline: a local stub model (swap in `"openai/gpt-4o"` or any Mastra model) asks to read
 * one file per step and records each prompt it receives; the tool returns a made-up file. One
 * line per model call: the prompt's tokens before → after ctxfold, and where a new epoch starts.
 */
import { pathToFileURL } from "node:url";
import { Agent } from "@mastra/core/agent";
import { createTool } from "@mastra/core/tools";
import { z } from "zod";
import type { CompactInfo } from "ctxfold/ai-sdk";
import { CtxfoldProcessor } from "ctxfold/mastra";
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
  const agent = new Agent({
    id: "coder",
    name: "coder",
    instructions: "You are a coding agent. Read the files you need, then answer.",
    model,
    tools: {
      readFile: createTool({
        id: "readFile",
        description: "Read a file",
        inputSchema: z.object({ path: z.string() }),
        execute: async ({ path }) => readFile(path),
      }),
    },
    inputProcessors: [
      new CtxfoldProcessor({
        budget, // or leave it out for a model whose context window ctxfold knows (gpt-4o, claude-sonnet-4, …)
        onCompact: (info) => {
          reports.push(info);
          log(
            `call ${String(reports.length).padStart(3)}: ${String(info.tokensBefore).padStart(6)} → ${String(info.tokensAfter).padStart(5)} tokens${info.newEpoch ? `  new epoch ${info.epoch}: prefix rebuilt` : ""}`,
          );
        },
      }),
    ],
  });

  const result = await agent.generate("Read every module of the project and summarise what it does.", { maxSteps: steps });
  log(
    `${result.steps.length} steps, ${reports.filter((r) => r.newEpoch).length} epochs, every prompt ≤ ${budget} tokens: ${reports.every((r) => r.tokensAfter <= budget)}`,
  );
  return { budget, reports, prompts: model.doGenerateCalls.map((c) => c.prompt), text: result.text };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
