import type { Part } from "./schema.js";

/**
 * What ctxfold wrote into a message, marked on the part that holds it: a step summary (the step
 * compactor's "Previous actions" section, with the ref of the messages it stands for and the
 * failed calls it names), a merge (the tiered policy's merged oldest context) or a ledger (the
 * facts the removed context established, with its lines, which a session's next epoch starts
 * its own ledger with). Later stages find these parts by their mark, never by matching their
 * text.
 *
 * The mark sits under a symbol key, as `kRawArgs` does: it follows the part through spreads and
 * through the message merges compaction makes (a summary merged into the task message stays
 * marked, where a message's `meta` would be the other message's), and it is not part of the
 * part's JSON, so outputs and stored messages are the bytes they would be without it. A part
 * that went through a provider format (rendered, then parsed again) has no mark: it is then
 * ordinary text to compaction.
 */
export const kMark: unique symbol = Symbol.for("ctxfold.mark");

/** One line of a ledger, and the keys of the facts it states (a later block of the ledger leaves them out). */
export interface LedgerLine {
  text: string;
  keys: readonly string[];
}

export type PartMark =
  | { kind: "step-summary"; ref: string; failed: readonly string[] }
  | { kind: "merge"; ref: string; failed: readonly string[] }
  | { kind: "ledger"; lines: readonly LedgerLine[] };

type Marked = { [kMark]?: PartMark };

/** The mark of `p`, if ctxfold wrote it. */
export const markOf = (p: Part): PartMark | undefined => (p as Marked)[kMark];

/** `p` with `mark` (a new object: parts are never mutated). */
export const marked = <P extends Part>(p: P, mark: PartMark): P => ({ ...p, [kMark]: mark });
