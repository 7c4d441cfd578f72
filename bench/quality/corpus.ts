/** The dev corpus as eval runs, for the quality benches (never copied into the repo: read from ../shared). */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import type { OpenAIChatMessage } from "../../src/adapters/openai-chat.js";
import { spread, type EvalRun } from "../../src/eval/replay.js";

export const kCorpus = fileURLToPath(new URL("../../../../shared/corpus/dev.jsonl.gz", import.meta.url));

/** Freezes a parsed run so that a contender mutating its input throws instead of skewing later measurements. */
function deepFreeze<T>(v: T): T {
  if (v && typeof v === "object" && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}

export function loadRuns(limit?: number): EvalRun[] {
  const lines = gunzipSync(readFileSync(kCorpus)).toString("utf8").split("\n").filter(Boolean);
  return spread(lines, limit).map((l) => {
    const r = JSON.parse(l) as { id: string; messages: OpenAIChatMessage[] };
    return { id: r.id, messages: deepFreeze(r.messages) };
  });
}
