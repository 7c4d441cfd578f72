/**
 * The corpus as eval runs, for the quality benches: every `*.jsonl.gz` of ../shared/corpus (by
 * name: dev.jsonl.gz, dev2.jsonl.gz…), one pooled set whose runs keep their ids, so that each is
 * reported in its source group too (src/eval/sources.ts). Never copied into the repo: read from
 * ../shared.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import type { OpenAIChatMessage } from "../../src/adapters/openai-chat.js";
import { spread, type EvalRun } from "../../src/eval/replay.js";

export const kCorpusDir = fileURLToPath(new URL("../../../../shared/corpus/", import.meta.url));

/** The corpus files, by name; none where ../shared is absent. */
export function corpusFiles(): string[] {
  if (!existsSync(kCorpusDir)) return [];
  return readdirSync(kCorpusDir)
    .filter((f) => f.endsWith(".jsonl.gz"))
    .sort()
    .map((f) => join(kCorpusDir, f));
}

/** Freezes a parsed run so that a contender mutating its input throws instead of skewing later measurements. */
function deepFreeze<T>(v: T): T {
  if (v && typeof v === "object" && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}

/** The runs of every corpus file, in order; `limit` of them spread evenly over all. */
export function loadRuns(limit?: number): EvalRun[] {
  const lines = corpusFiles().flatMap((file) => gunzipSync(readFileSync(file)).toString("utf8").split("\n").filter(Boolean));
  return spread(lines, limit).map((l) => {
    const r = JSON.parse(l) as { id: string; messages: OpenAIChatMessage[] };
    return { id: r.id, messages: deepFreeze(r.messages) };
  });
}
