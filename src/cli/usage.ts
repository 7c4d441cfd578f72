/**
 * The command line's usage: the whole, and each command's own (`ctxfold <command> --help`); and
 * the nearest valid choice to a mistyped command or flag.
 */
import { kPresets } from "../steps/config.js";

/** Each command's usage lines, as `ctxfold --help` lists them. */
export const kCommandUsage: Readonly<Record<string, string>> = {
  compact: `compact IN.jsonl[.gz]|- -o OUT.jsonl|- --budget N
        [--format auto|openai|anthropic|responses|ai-sdk|langchain] [--mode tiered|legacy]
        [--preset NAME] [--config FILE] [--offload-dir DIR] [--workers N] [--max-worker-heap-mb N|0]
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
        [--misses] [--json] [-o OUT | --html FILE] [--no-report] [--quiet]
              replays each run of the files (pooled) prompt by prompt and scores the
              compaction per budget, pooled and per source (a run id's part before the
              first "/"), naming the worst source (exit 1 when a --fail-under threshold
              is missed); --misses: why evidence terms were lost, by stage and kind of message;
              prints the tables (--json: the JSON), writes the HTML report and the JSON
              to OUT.html and OUT.json (default ctxfold-eval.html and .json in the current
              directory) and names them on stderr`,
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
changed since; eval: a report file that is an input);
3 done, some runs passed through uncompacted (see OUT.errors.jsonl);
4 validate found errors; 5 validate found warnings only;
130 interrupted by SIGINT or SIGTERM (checkpoint written: rerun with --resume)`;

/** `ctxfold --help`: the usage of `commands` (those this install has; bench only in a checkout). */
export const usage = (commands: readonly string[]): string => `usage: ctxfold <command> [options]   (ctxfold <command> --help: that command's)

commands:
${commands.map((c) => kCommandUsage[c].replace(/^/gm, "  ")).join("\n")}

${kExitCodes}`;

/** What each exit code means, as most commands give it. */
const kExitMeaning: Readonly<Record<number, string>> = {
  0: "done",
  1: "failed: unreadable input or an I/O error",
  2: "bad usage",
};

/** Each command's exit codes where they differ from (or add to) kExitMeaning. */
const kCommandExits: Readonly<Record<string, Readonly<Record<number, string>>>> = {
  compact: {
    1: "failed: unreadable input, an I/O error, bad input under --strict, or a queue that cannot be reached or was lost (rerun with --resume)",
    2: "bad usage, or refused before writing anything: an output that is the input, a --resume whose checkpoint or files do not match, --queue without bullmq and ioredis installed at versions ctxfold supports",
    3: "done, some runs passed through uncompacted (see OUT.errors.jsonl)",
    130: "interrupted by SIGINT or SIGTERM (checkpoint written: rerun with --resume)",
  },
  worker: {
    0: "stopped by SIGINT or SIGTERM (the first finishes the shards in hand)",
    1: "failed: the queue cannot be reached or was lost",
    2: "bad usage, or bullmq and ioredis not installed, or at versions ctxfold does not support",
  },
  show: { 1: "failed: no such ref in the store, or an I/O error" },
  mcp: { 2: "bad usage, or @modelcontextprotocol/sdk not installed, or at a version ctxfold does not support" },
  validate: { 1: "unparseable lines, or an I/O error", 4: "errors found (a provider would refuse the run)", 5: "warnings only (0 with --errors-only)" },
  eval: {
    1: "failed: unreadable input, a report file that cannot be written, or a --fail-under threshold missed",
    2: "bad usage, or refused before reading anything: a report file that is an input (a run file, --config or --compare)",
  },
};

/** The preset names `--preset` takes. */
const presetNames = () => Object.keys(kPresets).join(", ");

/** Each command's flags, each with what it does and its default (`ctxfold NAME --help`). */
const kCommandOptions: Readonly<Record<string, readonly (readonly [string, string])[]>> = {
  compact: [
    ["-o, --output OUT", "where the compacted runs go, one a line; - for stdout (required)"],
    ["--budget N", "the token budget every run is compacted to (required)"],
    ["--format F", "the input's provider format: auto, openai, anthropic, responses, ai-sdk, langchain (default auto: detected per run)"],
    ["--mode M", "tiered or legacy (block compaction's three levels) (default tiered)"],
    ["--preset NAME", `a step-compaction preset: ${presetNames()} (default none)`],
    ["--config FILE", "a JSON object of compactor settings, as eval --config takes; flags given win over it (default the defaults)"],
    ["--offload-dir DIR", "where removed originals are stored (default OUT.offload, or ctxfold-offload with -o -)"],
    ["--workers N", "worker threads, at most twice the cores (default cores - 1, at most 8; on 2 cores, 2 for 48 MiB of runs or more and in-process below)"],
    ["--max-worker-heap-mb N", "a worker's heap limit in MB, 0 for none (default 128)"],
    ["--max-line-mb N", "a line over N MB is written through unparsed with an E_TOO_LARGE record (default 64)"],
    ["--resume", "continue an interrupted batch from its checkpoint (default off)"],
    ["--strict", "stop at the first bad line instead of passing it through (default off)"],
    ["--redact-offload", "redact secrets in the offload store too; a ref then gives back the redacted text (default off)"],
    ["--json", "the summary as JSON on stdout (default a line for humans on stderr)"],
    ["--quiet", "no progress and no summary (default off)"],
    ["--queue URL", "compact through ctxfold worker processes on this Redis (default none: in this process)"],
    ["--shard-mb M", "with --queue: the size of a shard in MB (default 4)"],
    ["--work-dir DIR", "with --queue: where shards and results pass, mounted by every machine (default OUT.work/)"],
  ],
  worker: [
    ["--queue URL", "the Redis that compact --queue uses (required)"],
    ["--work-dir DIR", "the work dir compact --queue named; jobs outside it are refused (required)"],
    ["--concurrency N", "shards compacted at once, at most twice the cores (default 1)"],
    ["--offload-dir DIR", "where removed originals are stored (default the one each job names, inside --work-dir)"],
    ["--stall-ms N", "a worker silent this long loses its shard to another (default 30000)"],
    ["--max-worker-heap-mb N", "a worker thread's heap limit in MB, 0 for none (default 128)"],
    ["--quiet", "no log lines (default off)"],
  ],
  stats: [
    ["--budget N,...", "also count the runs over each budget (default none)"],
    ["--exact", "exact token counts instead of the calibrated estimate (default off)"],
    ["--encoding E", "o200k_base or cl100k_base (default o200k_base)"],
    ["--json", "the report as JSON (default a table)"],
  ],
  explain: [
    ["--run ID|LINE", "the run: its id, `line N`, or a line number (required)"],
    ["--budget N", "the token budget (required)"],
    ["--format F", "the input's provider format (default auto)"],
    ["--mode M", "tiered or legacy (default tiered)"],
    ["--preset NAME", `a step-compaction preset: ${presetNames()} (default none)`],
    ["--offload-dir DIR", "keep the refs in DIR, readable with show (default in memory only)"],
    ["--refs N", "refs listed at most (default 10)"],
    ["--json", "the report as JSON (default a table)"],
  ],
  show: [
    ["--offload-dir DIR", "the store the ref is in (required)"],
    ["--format F", "a history or message ref as the removed messages in openai, anthropic, responses, ai-sdk or langchain (default the stored bytes)"],
  ],
  mcp: [
    ["--offload-dir DIR", "the store whose refs the tools read (required)"],
    ["--format F", "the provider format recall gives removed messages in (default openai)"],
    ["--prefix P", "the ref prefix the store was written with (default workspace/outputs)"],
    ["--max-bytes N", "recall's page size in bytes (default 16384)"],
    ["--run ID", "only the refs compact recorded for this run (default every run's)"],
    ["--run-line FILE:LINE", "only the refs compact recorded for the run on this line (default every run's)"],
  ],
  validate: [
    ["--format F", "the input's provider format (default auto)"],
    ["--errors-only", "report errors only; warnings alone exit 0 (default off)"],
    ["--json", "the issues as JSON (default lines for humans)"],
  ],
  eval: [
    ["--budget N,...", "the budgets to score at (required)"],
    ["--config FILE", "a JSON compactor config for ctxfold's row (default the defaults)"],
    ["--compare FILE", "a second config, as another row (default none)"],
    ["--against P,...", "peers to score too: langchain, mastra, ai-sdk (default none)"],
    ["--points N", "prompt points a run at most, as consecutive pairs (default 40)"],
    ["--runs N", "runs spread evenly over the input (default all)"],
    ["--trace N|ID,...", "epoch traces of the N runs with the most points, or of these runs (default 2)"],
    ["--format F", "the input's provider format (default auto)"],
    ["--fail-under M=V,...", "exit 1 when a metric is under its value at a budget (default none)"],
    ["--pricing P", "anthropic, openai or read=R,write=W for the cost metric (default anthropic)"],
    ["--misses", "why evidence terms were lost, by stage and kind of message (default off)"],
    ["--json", "the report as JSON on stdout, the same JSON as OUT.json (default tables)"],
    [
      "-o, --output OUT",
      "write the HTML report to OUT.html and the JSON to OUT.json, replacing them (-o r.html is -o r; a directory gets ctxfold-eval.* inside) (default ctxfold-eval, in the current directory)",
    ],
    ["--html FILE", "write the HTML report to FILE instead, the JSON beside it: FILE less .html, plus .json (default OUT.html)"],
    ["--no-report", "write no report files; not with -o or --html (default off: written, and named on stderr)"],
    ["--quiet", "no progress, no tables and no line naming the report files, which are still written (default off)"],
  ],
  bench: [
    ["--quick", "the quick benches only (default all)"],
    ["--json", "the results as JSON (default tables)"],
  ],
  count: [
    ["--encoding E", "o200k_base or cl100k_base (default o200k_base)"],
    ["--exact", "exact counts instead of the calibrated estimate (default off)"],
    ["--jsonl", "count each run of a JSONL file (default the whole text)"],
  ],
  hash: [],
};

/** `ctxfold NAME --help`: its usage, its flags with their defaults, and the exit codes it can give. */
export function commandUsage(name: string): string {
  const options = kCommandOptions[name] ?? [];
  const width = Math.max(0, ...options.map(([flag]) => flag.length));
  const flags = options.length === 0 ? "" : `\n\noptions:\n${options.map(([flag, what]) => `  ${flag.padEnd(width)}  ${what}`).join("\n")}`;
  const meanings = { ...kExitMeaning, ...kCommandExits[name] };
  const exits = Object.entries(meanings)
    .map(([code, what]) => `  ${code.padStart(3)}  ${what}`)
    .join("\n");
  return `usage: ctxfold ${kCommandUsage[name]}${flags}\n\nexit codes:\n${exits}`;
}

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
