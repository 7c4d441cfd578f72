/**
 * `ctxfold show REF --offload-dir DIR`: writes the stored bytes of REF to stdout, exactly (binary
 * data and WTF-8 text included, no newline added), so `ctxfold show REF … > file` gives back the
 * original a compaction replaced.
 *
 * REF is a ref as compact and explain print it (`workspace/outputs/<kind>_<hash>.<ext>`). DIR
 * holds either layout: the packs `compact` appends to (pack-store.ts: `pack-….bin` and their
 * indexes) or one file per ref (fs-store.ts, what `explain` writes); both are read. The ref's
 * prefix (before the last `/`) does not matter — stores made with another prefix use the same
 * names — and a bare name (`output_<hash>.txt`) is taken as a ref too. The name must match the
 * stores' own pattern, so no other path is ever read. An index of stored
 * messages (`history_….json`) prints as the JSON it is: its `refs` are refs to show in turn.
 * With `--format F`, a history or message ref prints instead as the removed messages in that
 * provider format (one JSON array; for Anthropic `{ system?, messages }`), as recall renders
 * them: what the run's own messages looked like. The store keeps messages canonical and does
 * not know the run's format, so without `--format` the stored JSON is what prints.
 *
 * Exit 0 (also when the reader of a pipe stops early, as `| head` does); 1 for a malformed ref,
 * one not stored in DIR (the message names both), or one whose stored bytes fail the check of
 * their hash (E_CORRUPT, naming the file; nothing is written to stdout); 2 for bad usage.
 */
import { existsSync, statSync } from "node:fs";
import { CtxfoldError } from "../../errors.js";
import type { Format } from "../../adapters/index.js";
import { recall } from "../../recall/index.js";
import { createPackStore, kDefaultOffloadPrefix, kNameShape, parseRef, type OffloadStore } from "../../store/index.js";
import { formatOption, kExit, parseCli, UsageError, type CliIo } from "../common.js";
import { writeAll } from "../../pool/output.js";
import { fail } from "../runs.js";

export async function show(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCli(argv, { "offload-dir": { type: "string" }, format: { type: "string" } });
  const format = formatOption(values.format as string | undefined);
  const dir = values["offload-dir"] as string | undefined;
  if (positionals.length !== 1) throw new UsageError("show needs one REF");
  if (dir === undefined || dir === "") throw new UsageError("--offload-dir DIR is required (where the refs were stored)");
  const ref = positionals[0];
  const slash = ref.lastIndexOf("/");
  const prefix = slash > 0 ? ref.slice(0, slash) : kDefaultOffloadPrefix;
  const store = createPackStore({ dir, prefix });
  let bytes: Uint8Array;
  try {
    const full = slash > 0 ? ref : `${prefix}/${ref}`;
    bytes = format !== undefined && isMessagesRef(full) ? renderedMessages(store, full, format) : store.get(full);
  } catch (err) {
    if (!CtxfoldError.isInstance(err)) throw err;
    if (err.code === "E_BAD_REF") return fail(io, "show", `not a ref (expected …/${kNameShape}): ${JSON.stringify(ref)}`);
    if (err.code === "E_REF_NOT_FOUND") {
      const why = !existsSync(store.dir) ? ` (${store.dir} does not exist)` : !statSync(store.dir).isDirectory() ? ` (${store.dir} is not a directory)` : "";
      return fail(io, "show", `${JSON.stringify(ref)} is not stored in ${store.dir}${why}`);
    }
    // E_CORRUPT (bytes that do not hash to the ref, or not a regular file) and E_STORE_READ:
    // the code says which, the message names the file.
    return fail(io, "show", `${err.code}: ${err.message}`);
  }
  try {
    await writeAll(io.stdout, bytes);
  } catch (err) {
    // The reader stopped reading (`ctxfold show REF … | head`): nothing is wrong with the ref.
    if ((err as NodeJS.ErrnoException).code !== "EPIPE") throw err;
  }
  return kExit.ok;
}

/** Whether a ref names removed messages (a history index or one message), which --format renders. */
function isMessagesRef(ref: string): boolean {
  const kind = parseRef(ref)?.kind;
  return kind === "history" || kind === "message";
}

/** The messages a history or message ref stands for, rendered in `format` (recall's pages, joined), as JSON. */
function renderedMessages(store: OffloadStore, ref: string, format: Format): Uint8Array {
  const messages: unknown[] = [];
  let system: unknown;
  for (let offset: number | undefined = 0; offset !== undefined; ) {
    const page = recall(store, ref, { offset, format, maxBytes: 1 << 30 });
    if (page.type !== "messages") break;
    messages.push(...page.messages);
    system ??= page.system;
    offset = page.next;
  }
  const wire = format === "anthropic" ? { ...(system === undefined ? {} : { system }), messages } : messages;
  return new TextEncoder().encode(`${JSON.stringify(wire, null, 2)}\n`);
}
