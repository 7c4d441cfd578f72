import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { kCorpusFiles } from "./helpers.js";

export interface CorpusRun {
  id: string;
  messages: Record<string, unknown>[];
}

/**
 * The lines of every corpus file (kCorpusFiles: dev.jsonl.gz first, then dev2.jsonl.gz…), unparsed
 * (one run per line); with `stride`, every stride-th line of each file (a test that would
 * otherwise take twice as long samples both files alike); with `files`, of those files only.
 */
export function corpusLines(options: { stride?: number; files?: readonly string[] } = {}): string[] {
  const { stride = 1, files = kCorpusFiles } = options;
  return files.flatMap((file) =>
    gunzipSync(readFileSync(file))
      .toString("utf8")
      .split("\n")
      .filter(Boolean)
      .filter((_, i) => i % stride === 0),
  );
}
