/**
 * Scope records: which refs each run compacted into an offload directory reaches, kept in the
 * directory itself so that a reader confined to one run (`ctxfold mcp --run ID`, a recall tool's
 * `scope: { run }`) finds that run's refs whichever process wrote them.
 *
 * Decisions:
 * - One record file per write (`scope-<pid>-<thread>-<random>.json`, a chunk's runs), written
 *   like the stores' files (writeFileAtomic: a temp file then a rename, 0600, never through a
 *   link) and never changed after. Several processes and workers writing into one directory
 *   each write their own files; nothing is appended or shared, so no write can tear another's.
 * - A run is named as the batch engine names it: its id (`id`, `run_id` or `instance_id`), or,
 *   when it has none, its input file and line. The two are kept apart (`{ run }` or
 *   `{ file, line }`), so no id can stand for another run's line.
 * - A run's refs are the refs its compacted output reaches (reachableRefs: the refs it names,
 *   and through stored indexes and messages what they name) that its input did not already name:
 *   a run whose messages quote another run's ref does not gain it. Two runs whose outputs store
 *   the same bytes share a ref, and each run's record lists it.
 * - Records are read only as regular files (a link or a FIFO under a record's name is E_CORRUPT,
 *   as in the stores); a record that is not one is E_CORRUPT naming the file. A reader confined
 *   to a scope then fails rather than guessing what the scope holds.
 */
import * as path from "node:path";
import { randomBytes } from "node:crypto";
import { threadId } from "node:worker_threads";
import { CtxfoldError } from "../errors.js";
import { kNodeFsOps, readRegularFile, writeFileAtomic, type FsOps } from "./fs-ops.js";
import { parseRef, refPattern } from "./names.js";
import type { OffloadStore } from "./offload.js";
import { reachableRefs } from "./reach.js";

/** Which run a scope is: a run's id, or the input line of a run without one. */
export type RunSelector = { run: string } | { file: string; line: number };

/** `value` as a RunSelector (`{ run }`, or `{ file, line }` with a safe integer line), or undefined. */
export function runSelectorOf(value: unknown): RunSelector | undefined {
  const v = value as Partial<{ run: unknown; file: unknown; line: unknown }> | null;
  if (typeof v !== "object" || v === null) return undefined;
  if (typeof v.run === "string") return { run: v.run };
  return typeof v.file === "string" && Number.isSafeInteger(v.line) ? { file: v.file, line: v.line as number } : undefined;
}

/** One run's refs, as a record file keeps them (the refs as bare names, the record naming the prefix). */
export type RunScope = RunSelector & { refs: string[] };

const kRecordPattern = /^scope-[0-9a-z-]+\.json$/;

/**
 * The refs of `store` that a run's compacted output (`output`, e.g. its line as written) reaches
 * and its input (`input`, its text as parsed and serialised again) did not name, as bare names
 * (see the module comment).
 */
export function runScopeRefs(store: OffloadStore, output: string, input: string): string[] {
  const quoted = new Set(input.match(refPattern(store.prefix)) ?? []);
  const out: string[] = [];
  for (const ref of reachableRefs(store, [output])) {
    if (quoted.has(ref) || !store.has(ref)) continue;
    out.push(ref.slice(store.prefix.length + 1));
  }
  return out;
}

/**
 * Whether a run's input line (its JSON bytes as read) can name a ref under `prefix`: false when
 * the bytes hold neither the prefix's first segment nor a `\u` escape, the only other way JSON
 * can write its letters. Where it is false, the input quotes no ref and the batch need not
 * serialise the parsed run again to look (runScopeRefs' `input` is then empty).
 */
export function mayNameRefs(raw: Uint8Array, prefix: string): boolean {
  const bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  const segment = prefix.split("/").find((s) => s.length > 0) ?? prefix;
  return bytes.indexOf(segment, 0, "utf8") >= 0 || bytes.indexOf("\\u", 0, "latin1") >= 0;
}

/** Writes `runs` (those with refs) as one new record file in `dir`; E_STORE_WRITE naming the file when it fails. */
export function writeScopeRecord(dir: string, prefix: string, runs: readonly RunScope[], fs: Partial<FsOps> = {}): void {
  const kept = runs.filter((r) => r.refs.length > 0);
  if (kept.length === 0) return;
  const name = `scope-${process.pid}-${threadId}-${randomBytes(6).toString("hex")}.json`;
  const body = JSON.stringify({ ctxfold: "scopes", prefix, runs: kept });
  writeFileAtomic({ ...kNodeFsOps, ...fs }, path.join(path.resolve(dir), name), Buffer.from(body, "utf8"));
}

/**
 * The records of one directory, each file read once (a record never changes once written) and
 * the directory listed again on each call, so records written since are seen.
 */
export class ScopeRecords {
  readonly dir: string;
  readonly #fs: FsOps;
  readonly #read = new Map<string, { prefix: string; runs: RunScope[] }>();

  constructor(dir: string, fs: Partial<FsOps> = {}) {
    this.dir = path.resolve(dir);
    this.#fs = { ...kNodeFsOps, ...fs };
  }

  /** Every ref (with `prefix`) the records say the run `selector` names reaches; empty when none do. */
  refsOf(selector: RunSelector, prefix: string): Set<string> {
    const out = new Set<string>();
    for (const record of this.#records()) {
      if (record.prefix !== prefix) continue;
      for (const run of record.runs) if (sameRun(run, selector)) for (const name of run.refs) out.add(`${prefix}/${name}`);
    }
    return out;
  }

  *#records(): Generator<{ prefix: string; runs: RunScope[] }> {
    const fs = this.#fs;
    const names = fs.existsSync(this.dir)
      ? fs
          .readdirSync(this.dir)
          .filter((f) => kRecordPattern.test(f))
          .sort()
      : [];
    for (const name of names) {
      let record = this.#read.get(name);
      if (!record) {
        const file = path.join(this.dir, name);
        const bytes = readRegularFile(fs, file);
        if (bytes === undefined) continue;
        record = parseRecord(Buffer.from(bytes).toString("utf8"), file);
        this.#read.set(name, record);
      }
      yield record;
    }
  }
}

function sameRun(a: RunSelector, b: RunSelector): boolean {
  if ("run" in a || "run" in b) return "run" in a && "run" in b && a.run === b.run;
  return a.file === b.file && a.line === b.line;
}

/** A record file's content, or E_CORRUPT naming the file (see the module comment). */
function parseRecord(text: string, file: string): { prefix: string; runs: RunScope[] } {
  const bad = (what: string) => new CtxfoldError("E_CORRUPT", `${file}: not a scope record ctxfold wrote (${what}); refused`, { path: file });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw bad("not JSON");
  }
  const v = value as { ctxfold?: unknown; prefix?: unknown; runs?: unknown } | null;
  if (typeof v !== "object" || v === null || v.ctxfold !== "scopes" || typeof v.prefix !== "string" || !Array.isArray(v.runs))
    throw bad('no { ctxfold: "scopes", prefix, runs }');
  v.runs.forEach((r: unknown, i) => {
    const run = r as Partial<{ run: unknown; file: unknown; line: unknown; refs: unknown }> | null;
    const named = runSelectorOf(run) !== undefined;
    const refs = Array.isArray(run?.refs) && run.refs.every((n) => typeof n === "string" && parseRef(n)?.prefix === undefined);
    if (!named || !refs) throw bad(`runs[${i}] is not { run | file, line, refs: [names] }`);
  });
  return { prefix: v.prefix, runs: v.runs as RunScope[] };
}
