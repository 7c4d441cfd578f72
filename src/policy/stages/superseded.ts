import { compactionBoundary, isSignedCompaction } from "../../adapters/server-context.js";
import { hashText, hashToHex } from "../../core/hash.js";
import type { Message } from "../../model/schema.js";
import { putMessages } from "../../store/messages.js";
import type { StageKit, Work } from "../work.js";
import { defineStage } from "./stage.js";

/** `meta.ctxfold.kind` of the note that stands where superseded history was. */
export const kSupersededKind = "superseded" as const;

const isNote = (m: Message): boolean => (m.meta.ctxfold as { kind?: unknown } | undefined)?.kind === kSupersededKind;

/**
 * The messages before the latest provider compaction that compaction may move out: all but
 * system messages and a note of an earlier pass. Empty when the input carries no compaction.
 */
export function supersededHistory(messages: readonly Message[], at = compactionBoundary(messages)): number[] {
  const out: number[] = [];
  for (let i = 0; i < at; i++) if (messages[i].role !== "system" && !isNote(messages[i])) out.push(i);
  return out;
}

/** Stage 0: only an input that carries a provider's compaction has one (and its report). */
export const supersededHistoryStage = defineStage({
  stage: 0,
  name: "superseded_history",
  essential: true,
  when: (w) => supersededHistory(w.msgs).length > 0,
  run: (kit, w) => dropSuperseded(kit, w),
});

/**
 * Stage 0, before the others, when the input carries a provider's compaction (an OpenAI
 * Responses compaction item, an Anthropic compaction block): the history before the latest one
 * is superseded by it — Anthropic drops it from the prompt itself, OpenAI says it may be
 * dropped — so it is the first thing to go, whole: its messages (system messages aside) are
 * stored under one ref and one user note takes their place, naming that ref. The note stands
 * before the compaction, or right after it when the compaction is a signed block (Anthropic's
 * on-demand compaction, which nothing may precede). Nothing of it is summarised: the
 * provider's compaction is its summary.
 */
export function dropSuperseded(kit: StageKit, w: Work): void {
  const at = compactionBoundary(w.msgs);
  const gone = supersededHistory(w.msgs, at);
  kit.candidate(gone.length);
  if (gone.length === 0) return;
  const items = gone.map((i) => w.msgs[i]);
  const { ref, refs } = putMessages(kit.store, items);
  kit.addRefs(w, ref, ...refs);
  const text = `[ctxfold] ${items.length} earlier message${items.length === 1 ? "" : "s"}, superseded by the provider's compaction, moved out; originals: ${ref}`;
  const note: Message = {
    id: `ctxfold-superseded-${hashToHex(hashText(ref)).slice(0, 12)}`,
    role: "user",
    parts: [{ type: "text", text }],
    meta: { ctxfold: { kind: kSupersededKind, ref } },
  };
  const after = w.msgs[at].parts.some(isSignedCompaction);
  const drop = new Set(gone);
  const out: Message[] = [];
  w.msgs.forEach((m, i) => {
    if (i === at && !after) out.push(note);
    if (!drop.has(i)) out.push(m);
    if (i === at && after) out.push(note);
  });
  kit.relist(w, out, true);
  kit.countCompactions(w, gone.length);
}
