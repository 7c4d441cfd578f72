/**
 * Standing instructions: what a human said mid-run ("never modify files under tests/", "use
 * pnpm, not npm", "stop and ask before deleting anything") holds until a later turn says
 * otherwise, however many steps ago it was said. A summary cannot be trusted to keep a
 * prohibition's exact words, and nothing in the text reliably tells an instruction from a
 * remark in every language, so the rule is by shape, not by wording: every user turn the
 * conversation holds after the task (text, no tool results, not one of ctxfold's own notes)
 * of at most `instructionTokens` tokens stays verbatim where it stands. Stages 1–2 never touch
 * text; stage 3 does not summarise one; stage 4 merges around it, as around a critical message.
 *
 * Bounds, so that a run of many turns (a simulated customer, a format reminder the harness
 * repeats after every step) cannot hold the prompt: a turn whose text a later user message
 * repeats exactly is not kept for itself (the later copy stands for it), and the kept turns
 * fill `instructionRatio` of the budget newest first (each that still fits; the critical
 * ones, the latest user message and the task, take none of it). An older turn past that
 * share, or a longer one (a pasted file, a slash command's expansion, a resumed session's
 * summary), is history as before: summarised by stage 3 when long, merged by stage 4 with its
 * original in the merge's ref. The task (the first user message) and the latest one are
 * critical anyway (classify.ts).
 */
import { markOf } from "../../model/marks.js";
import type { Message, Part, TextPart } from "../../model/schema.js";
import type { MessageClass } from "../types.js";

/** What deciding the standing instructions needs: the settings and a text measure. */
export interface InstructionSettings {
  instructionTokens: number;
  instructionRatio: number;
}

/**
 * The parts of message `m` that are turns a human (or the harness speaking for one) wrote:
 * its text parts that are not ctxfold's, in a user message without tool results that is not
 * one of ctxfold's notes. Stage 3 joins user messages that its removals make adjacent, so one
 * message may hold several turns, and a step summary or ledger besides: each text part is a
 * turn of its own.
 */
function turnParts(m: Message): number[] {
  if (m.role !== "user" || m.meta?.ctxfold !== undefined || m.parts.some((p) => p.type !== "text")) return [];
  return m.parts.flatMap((p, k) => (markOf(p) === undefined ? [k] : []));
}

/**
 * The standing instructions of `msgs` (of `classes`) to keep verbatim (see the module
 * comment), for a work of `budget` tokens, `textTokens` measuring a text: each message that
 * holds any, with its parts that are. A critical message holds none (it stays
 * whole anyway).
 */
export function standingInstructions(
  msgs: readonly Message[],
  classes: readonly MessageClass[],
  settings: InstructionSettings,
  budget: number,
  textTokens: (text: string) => number,
): Map<number, Part[]> {
  const kept = new Map<number, Part[]>();
  if (settings.instructionTokens <= 0 || settings.instructionRatio <= 0) return kept;
  const first = msgs.findIndex((m) => m.role === "user");
  const seen = new Set<string>();
  let room = Math.floor(settings.instructionRatio * budget);
  for (let i = msgs.length - 1; i > first; i--) {
    const parts = turnParts(msgs[i]);
    for (let j = parts.length - 1; j >= 0; j--) {
      const part = msgs[i].parts[parts[j]];
      const text = (part as TextPart).text;
      if (text.trim() === "" || seen.has(text)) continue;
      seen.add(text);
      if (classes[i] === "critical") continue;
      const tokens = textTokens(text);
      if (tokens > settings.instructionTokens || tokens > room) continue;
      room -= tokens;
      kept.set(i, [part, ...(kept.get(i) ?? [])]);
    }
  }
  return kept;
}
