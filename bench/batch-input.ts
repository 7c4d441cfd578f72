/**
 * The batch benches' input: the dev corpus (generated runs when ../shared is absent), its copies
 * after the first made unique (saltRun) until the file holds the size asked for.
 */
import { closeSync, existsSync, openSync, readFileSync, writeSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { renderMessages } from "../src/adapters/index.js";
import { generateRuns } from "../src/gen/run.js";

const kCorpus = fileURLToPath(new URL("../../../shared/corpus/dev.jsonl.gz", import.meta.url));

/** The corpus (or generated runs when ../shared is absent) as JSONL bytes. */
export function sourceLines(): { source: string; body: Buffer } {
  if (existsSync(kCorpus)) return { source: "dev corpus", body: gunzipSync(readFileSync(kCorpus)) };
  const runs = generateRuns(200, 3).map((r, i) => JSON.stringify({ id: `gen-${i}`, messages: renderMessages(r.messages, "openai-chat") }));
  return { source: "generated runs (../shared absent)", body: Buffer.from(runs.join("\n") + "\n") };
}

/**
 * One run (an OpenAI chat JSONL line) made unique for copy `k`: the salt goes into its id, every
 * message's text and every string leaf of its tool-call arguments, so no memo, step cache or
 * offload store entry of another copy can answer for it, while the run keeps its shape (the same
 * messages, calls, sizes within a few tokens, and the same relations between its calls).
 */
export function saltRun(line: string, k: number): string {
  const run = JSON.parse(line) as { id?: unknown; messages?: unknown };
  const salt = (t: string) => `${t} ~${k}`;
  const leaves = (v: unknown): unknown =>
    typeof v === "string"
      ? salt(v)
      : Array.isArray(v)
        ? v.map(leaves)
        : v !== null && typeof v === "object"
          ? Object.fromEntries(Object.entries(v).map(([key, x]) => [key, leaves(x)]))
          : v;
  if (typeof run.id === "string") run.id = `${run.id}~${k}`;
  for (const m of Array.isArray(run.messages) ? (run.messages as Record<string, unknown>[]) : []) {
    if (typeof m.content === "string") m.content = salt(m.content);
    else if (Array.isArray(m.content)) for (const p of m.content as Record<string, unknown>[]) if (typeof p.text === "string") p.text = salt(p.text);
    for (const c of Array.isArray(m.tool_calls) ? (m.tool_calls as { function?: { arguments?: unknown } }[]) : []) {
      const args = c.function?.arguments;
      if (typeof args !== "string") continue;
      try {
        c.function!.arguments = JSON.stringify(leaves(JSON.parse(args)));
      } catch {
        c.function!.arguments = salt(args);
      }
    }
  }
  return JSON.stringify(run);
}

/**
 * The corpus written until the file holds `mb` MB (at least once): the first copy as it is, each later copy
 * salted (saltRun) so that every run in the file is unique.
 */
export function makeInput(file: string, mb: number): { source: string; bytes: number } {
  const { source, body } = sourceLines();
  const lines = body
    .toString("utf8")
    .split("\n")
    .filter((l) => l.length > 0);
  const fd = openSync(file, "w");
  let bytes = 0;
  for (let k = 0; k === 0 || bytes < mb * 1e6; k++) {
    const copy = k === 0 ? body : Buffer.from(lines.map((l) => saltRun(l, k)).join("\n") + "\n");
    writeSync(fd, copy);
    bytes += copy.length;
  }
  closeSync(fd);
  return { source, bytes };
}
