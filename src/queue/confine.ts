/**
 * What a worker takes from a job. Redis is shared, so a job is input like any other: its fields
 * must be of the producer's grammar (a shard id is 32 hex digits, never a path), and every path it
 * names must lie inside the roots the worker was started with, after links are resolved (a work
 * dir, or its shards/ or results/, that is a link out of --work-dir is outside it). Anything else
 * is refused, E_JOB_REFUSED naming the job and the field, before the worker reads or writes a byte.
 *
 * What this does not close: a writer of the work dir who swaps a checked directory for a link
 * between the check and the read or write (the check is by path, not by descriptor).
 */
import { realpathSync } from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { CtxfoldError, shownValue } from "../errors.js";
import type { JobOptions } from "../pool/job.js";
import { checkConfigObject } from "../policy/config-file.js";
import { errorCode, errorMessage } from "../store/fs-ops.js";
import { isResultKey } from "./result.js";
import { kShardIdPattern } from "./shard.js";
import { DirStorage } from "./storage.js";

/** The places a worker may read and write, as it was started. */
export interface WorkerRoots {
  /** --work-dir: every job's work dir must be it or inside it, and so must a job's offload dir unless `offloadDir` is set. */
  workDir: string;
  /** --offload-dir: where this worker writes originals, whatever the job names. */
  offloadDir?: string;
}

/** A job as the worker may carry it out. */
export interface AdmittedJob {
  batch: string;
  storage: DirStorage;
  shard: string;
  firstLine: number;
  /** The options the shard id was computed over (the producer's). */
  asQueued: JobOptions;
  /** The options to compact with: the offload dir this worker writes to. */
  options: JobOptions;
  key: string;
}

/** The roots, resolved through links once (E_WORK_DIR when --work-dir cannot be resolved). */
export function workerRoots(workDir: string, offloadDir?: string): WorkerRoots {
  try {
    return { workDir: realpathSync(path.resolve(workDir)), ...(offloadDir !== undefined ? { offloadDir: path.resolve(offloadDir) } : {}) };
  } catch (cause) {
    throw new CtxfoldError("E_WORK_DIR", `--work-dir ${workDir}: ${errorCode(cause)} (${errorMessage(cause)})`, { cause });
  }
}

const kBatchPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** `data` (job `jobId`'s) checked against the grammar and `roots`; E_JOB_REFUSED naming the field otherwise. */
export function admitJob(jobId: string, data: unknown, roots: WorkerRoots): AdmittedJob {
  const refuse = (field: string, why: string) => new CtxfoldError("E_JOB_REFUSED", `job ${jobId}: ${field}: ${why}`);
  if (typeof data !== "object" || data === null) throw refuse("data", `expected an object, got ${shownValue(data)}`);
  const d = data as Record<string, unknown>;
  if (typeof d.shard !== "string" || !kShardIdPattern.test(d.shard)) throw refuse("shard", `expected a shard id (32 hex digits), got ${shownValue(d.shard)}`);
  if (typeof d.batch !== "string" || !kBatchPattern.test(d.batch)) throw refuse("batch", `expected a batch id (a UUID), got ${shownValue(d.batch)}`);
  if (!Number.isSafeInteger(d.firstLine) || (d.firstLine as number) < 1) throw refuse("firstLine", `expected a line number, got ${shownValue(d.firstLine)}`);
  if (!isResultKey(d.key)) throw refuse("key", "expected a result key (64 hex digits)");
  const options = d.options as Record<string, unknown> | undefined;
  if (typeof options !== "object" || options === null || Array.isArray(options)) throw refuse("options", `expected an object, got ${shownValue(options)}`);
  if (options.config !== undefined) {
    try {
      checkConfigObject(options.config, "options.config");
    } catch (err) {
      // The message names the field (options.config.targetRatio: …).
      throw new CtxfoldError("E_JOB_REFUSED", `job ${jobId}: ${errorMessage(err)}`);
    }
  }
  const storageDir = storageDirOf(d.storage, refuse);
  for (const dir of [storageDir, path.join(storageDir, "shards"), path.join(storageDir, "results")])
    inside(roots.workDir, dir, (why) => refuse("storage", why));
  let offloadDir = options.offloadDir;
  if (roots.offloadDir !== undefined) offloadDir = roots.offloadDir;
  else if (offloadDir !== undefined) {
    if (typeof offloadDir !== "string" || !path.isAbsolute(offloadDir))
      throw refuse("options.offloadDir", `expected an absolute path, got ${shownValue(offloadDir)}`);
    inside(roots.workDir, path.resolve(offloadDir), (why) => refuse("options.offloadDir", why));
  }
  const asQueued = options as unknown as JobOptions;
  return {
    batch: d.batch,
    storage: new DirStorage(storageDir),
    shard: d.shard,
    firstLine: d.firstLine as number,
    key: d.key,
    asQueued,
    options: offloadDir === undefined ? asQueued : { ...asQueued, offloadDir: offloadDir as string },
  };
}

function storageDirOf(storage: unknown, refuse: (field: string, why: string) => CtxfoldError): string {
  if (typeof storage !== "string" || !storage.startsWith("file:")) throw refuse("storage", `expected a file: URL, got ${shownValue(storage)}`);
  try {
    return fileURLToPath(storage);
  } catch {
    throw refuse("storage", `expected a file: URL of a local path, got ${shownValue(storage)}`);
  }
}

/** Throws `refuse(why)` unless `target`, links resolved, is `root` or inside it (`root` is resolved already). */
function inside(root: string, target: string, refuse: (why: string) => CtxfoldError): void {
  let real: string;
  try {
    real = realPathOf(target);
  } catch (err) {
    throw refuse(`${target} cannot be resolved: ${errorCode(err)}`);
  }
  const rel = path.relative(root, real);
  if (rel === "" || (rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel))) return;
  throw refuse(`${target}${real !== target ? ` (a link to ${real})` : ""} is not inside this worker's --work-dir ${root}`);
}

/** `p` with links resolved as far as it exists (the rest, to be created, appended as it is). */
function realPathOf(p: string): string {
  const rest: string[] = [];
  for (let cur = path.resolve(p); ; cur = path.dirname(cur)) {
    try {
      return path.join(realpathSync(cur), ...rest.reverse());
    } catch (err) {
      if (errorCode(err) !== "ENOENT" || path.dirname(cur) === cur) throw err;
      rest.push(path.basename(cur));
    }
  }
}
