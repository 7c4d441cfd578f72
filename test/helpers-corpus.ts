import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { kCorpusPath } from "./helpers.js";

export interface CorpusRun {
  id: string;
  messages: Record<string, unknown>[];
}

/** The dev corpus lines, unparsed (one run per line). */
export function corpusLines(): string[] {
  return gunzipSync(readFileSync(kCorpusPath)).toString("utf8").split("\n").filter(Boolean);
}
