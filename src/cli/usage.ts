/**
 * The command line's usage: the whole, and each command's own (`ctxfold <command> --help`); and
 * the nearest valid choice to a mistyped command or flag.
 */

/** Each command's usage lines, as `ctxfold --help` lists them. */
export const kCommandUsage: Readonly<Record<string, string>> = {
  compact: `compact IN.jsonl[.gz]|- -o OUT.jsonl|- --budget N
        [--format auto|openai|anthropic|responses|ai-sdk|langchain] [--mode tiered|legacy]
        [--preset NAME] [--offload-dir DIR] [--workers N] [--max-worker-heap-mb N|0]
        [--max-line-mb N] [--resume] [--strict] [--redact-offload] [--json] [--quiet]
              compacts every run (one per line: a messages array, or an object with
              "messages" whose other fields are kept) to the budget, in input order and format;
              --workers is capped at twice the cores; a line over --max-line-mb (default 64)
              is written through as it is read, unparsed, with an E_TOO_LARGE record;
              --redact-offload redacts secrets in the offload store too (a ref then gives
              back the redacted text: the secret is gone for good)
        [--queue redis://HOST:PORT [--shard-mb M] [--work-dir DIR]]
              with --queue, shards of M MB (default 4) are compacted by ctxfold worker
              processes on any machine; shards and results pass through DIR (default
              OUT.work/), which every machine mounts at the same path`,
  worker: `worker --queue redis://HOST:PORT --work-dir DIR [--concurrency N] [--offload-dir DIR]
        [--stall-ms N] [--max-worker-heap-mb N|0] [--quiet]
              takes shards of compact --queue batches until SIGINT/SIGTERM (the first
              finishes the shards in hand); a worker silent for --stall-ms (default 30000)
              loses its shard to another; a job whose work dir (or, without --offload-dir,
              offload dir) is not inside --work-dir is refused; --concurrency is capped at
              twice the cores`,
  stats: `stats IN [--budget N,...] [--exact] [--encoding o200k_base|cl100k_base] [--json]
              token distribution per run, role and tool category; runs over each budget`,
  explain: `explain IN --run ID|LINE --budget N [--format F] [--mode tiered|legacy] [--preset NAME]
        [--offload-dir DIR] [--refs N] [--json]
              per stage: what was compacted, why, tokens before and after, refs`,
  show: `show REF --offload-dir DIR [--format openai|anthropic|responses|ai-sdk|langchain]
              the stored bytes of a ref; with --format, a history or message ref as the
              removed messages in that provider format`,
  mcp: `mcp --offload-dir DIR [--run ID | --run-line FILE:LINE]
        [--format openai|anthropic|responses|ai-sdk|langchain] [--prefix P] [--max-bytes N]
              an MCP server on stdio whose tools read DIR's refs: recall(ref, offset?)
              gives a ref's original text in pages of N bytes (default 16384), a
              history's removed messages in --format (default openai); search(query)
              finds refs by the words of their content. Every run's refs by default;
              --run / --run-line: only the refs compact recorded for that one run`,
  validate: `validate IN [--format F] [--errors-only] [--json]
              provider-rule issues of every run, by line and path; exit 0 none,
              1 unparseable lines, 4 errors (a provider would refuse the run), 5 warnings only`,
  eval: `eval IN... --budget N,... [--config FILE] [--compare FILE] [--against langchain,mastra,ai-sdk]
        [--points N] [--runs N] [--trace N|ID,...] [--format F]
        [--fail-under metric=value,...] [--pricing anthropic|openai|read=R,write=W]
        [--misses] [--json] [--html FILE] [--quiet]
              replays each run of the files (pooled) prompt by prompt and scores the
              compaction per budget, pooled and per source (a run id's part before the
              first "/"), naming the worst source (exit 1 when a --fail-under threshold
              is missed); --misses: why evidence terms were lost, by stage and kind of message`,
  bench: `bench [--quick] [--json]
              the project's benchmarks (npm run bench)`,
  count: `count FILE|- [--encoding o200k_base|cl100k_base] [--exact] [--jsonl]
              tokens of a text file, or with --jsonl of each run`,
  hash: `hash FILE|-   xxh64 content hash of a text file`,
};

export const kExitCodes = `exit codes: 0 done; 1 failed (bad input under --strict, unreadable input, I/O error, a queue
(Redis) that cannot be reached or was lost: rerun with --resume);
2 bad usage, or refused before writing anything (compact: an output that is the input,
a --resume whose checkpoint is not of this input and options, or whose input or outputs
changed since);
3 done, some runs passed through uncompacted (see OUT.errors.jsonl);
4 validate found errors; 5 validate found warnings only;
130 interrupted by SIGINT or SIGTERM (checkpoint written: rerun with --resume)`;

/** `ctxfold --help`: the usage of `commands` (those this install has; bench only in a checkout). */
export const usage = (commands: readonly string[]): string => `usage: ctxfold <command> [options]   (ctxfold <command> --help: that command's)

commands:
${commands.map((c) => kCommandUsage[c].replace(/^/gm, "  ")).join("\n")}

${kExitCodes}`;

/** `ctxfold NAME --help`. */
export const commandUsage = (name: string): string => `usage: ctxfold ${kCommandUsage[name]}\n\n${kExitCodes}`;

/**
 * The choice nearest to `word` when it is a likely typo of one (an edit distance, transpositions
 * counted once, of at most a third of its length and at least 1, or a unique prefix), else undefined.
 */
export function nearest(word: string, choices: readonly string[]): string | undefined {
  const prefixed = choices.filter((c) => word.length >= 2 && c.startsWith(word));
  if (prefixed.length === 1) return prefixed[0];
  let best: string | undefined;
  let bestDistance = Math.max(1, Math.floor(word.length / 3)) + 1;
  for (const c of choices) {
    const d = editDistance(word, c);
    if (d < bestDistance) [best, bestDistance] = [c, d];
  }
  return best;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent transpositions. */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      rows[i][j] = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) rows[i][j] = Math.min(rows[i][j], rows[i - 2][j - 2] + 1);
    }
  }
  return rows[a.length][b.length];
}
