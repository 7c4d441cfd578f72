import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { kAdapters, openaiChatAdapter, type Format } from "../src/adapters/index.js";
import type { Case } from "./lib.js";

const kCorpus = fileURLToPath(new URL("../../../shared/corpus/dev.jsonl.gz", import.meta.url));

/**
 * Adapters over the dev corpus (every run, ~15,800 messages): the baseline is plain
 * JSON.parse + JSON.stringify of the lines; ctxfold's parse + render work on the parsed
 * messages (what a runner holds), so the ratio is adapter work against JSON work. "rebuilt"
 * renders every message from the canonical model (`reuse: false`), as after a compaction that
 * touched everything. Other formats run on the corpus rendered in them beforehand.
 */
export function adapterCases(): Case[] {
  if (!existsSync(kCorpus)) {
    process.stderr.write(`  adapters: skipped, ${kCorpus} is absent\n`);
    return [];
  }
  const lines = gunzipSync(readFileSync(kCorpus)).toString("utf8").split("\n").filter(Boolean);
  const runs = lines.map((l) => (JSON.parse(l) as { messages: unknown[] }).messages);
  const bytes = lines.reduce((n, l) => n + Buffer.byteLength(l), 0);
  const items = runs.reduce((n, r) => n + r.length, 0);
  const group = "adapters, dev corpus";
  const cases: Case[] = [
    {
      group,
      name: "JSON.parse + JSON.stringify",
      bytes,
      items,
      fn: () => {
        for (const l of lines) JSON.stringify((JSON.parse(l) as { messages: unknown }).messages);
      },
    },
    {
      group,
      name: "openai-chat parse + render",
      bytes,
      items,
      fn: () => {
        for (const r of runs) openaiChatAdapter.render(openaiChatAdapter.parse(r));
      },
    },
    {
      group,
      name: "openai-chat parse + render, rebuilt",
      bytes,
      items,
      fn: () => {
        for (const r of runs) openaiChatAdapter.render(openaiChatAdapter.parse(r), { reuse: false });
      },
    },
  ];
  for (const format of Object.keys(kAdapters) as Format[]) {
    if (format === "openai-chat") continue;
    const a = kAdapters[format];
    const wires = runs.map((r) => JSON.parse(JSON.stringify(a.render(openaiChatAdapter.parse(r)))) as unknown);
    cases.push({
      group,
      name: `${format} parse + render`,
      bytes,
      items,
      fn: () => {
        for (const w of wires) a.render(a.parse(w));
      },
    });
  }
  return cases;
}
