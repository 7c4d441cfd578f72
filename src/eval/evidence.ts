/**
 * Next-step evidence recall: of what the agent used in the step after a prompt, how much a
 * compacted prompt still shows. Precisely, for a prompt `messages[0..k)` of a recorded run
 * whose next message `messages[k]` is the assistant's:
 *
 * - **Texts of a message** (`termTexts`): its content text (metrics.ts `contentText`) and the
 *   texts of each tool-call argument (src/model/terms.ts `argumentTexts`: a JSON argument's
 *   string leaves, any other argument as it is).
 * - **Named terms**: the specific terms (src/model/terms.ts: paths, identifiers, symbols,
 *   error names, flags, numbers of 3+ characters) of the next message's texts.
 * - **Evidence** (`nextStepEvidence`): the named terms present (`containsTerm`) in the text of
 *   some prompt message other than the system / developer messages and the task (the first
 *   user message), and present in none of those: what came from the trajectory, not from what
 *   every contender keeps verbatim anyway.
 * - **Kept** (`evidenceKept`): the evidence terms present in the text of some message of the
 *   compacted prompt (any role, summaries and ledgers included; a ref names a stored text and
 *   counts only for the terms its own characters spell: the model reads text).
 * - **Evidence recall** over a set of prompts = Σ kept / Σ evidence (pooled over terms), over
 *   the prompts above the budget that have evidence; null when none has. A prompt with no next
 *   assistant message (the run ends on a prompt) has no evidence.
 *
 * No input makes these throw: a message without text (null content, image parts, arguments that
 * are not strings) has no texts; binary-looking or non-English text is text like any other (its
 * terms by the definition, often none); an enormous one costs time linear in its length, since
 * past a few lookups a message answers from a word index of its texts (`indexedContains`, the
 * same answer as containsTerm).
 */
import type { ChatMessage } from "./metrics.js";
import { anchorIndices, contentText, callArgs } from "./metrics.js";
import { argumentTexts, containsTerm, occursAt, specificTerms } from "../model/terms.js";

const kTexts = new WeakMap<ChatMessage, string[]>();

/**
 * What is known of one message's terms: answers so far, and past `kScansBeforeIndex` lookups a
 * word index of its texts, so that a next message naming thousands of terms (an agent writing
 * a large file) against megabytes of trajectory costs a lookup per term, not a scan.
 */
interface Presence {
  lookups: number;
  memo: Map<string, boolean>;
  index?: WordIndex[];
}
const kPresence = new WeakMap<ChatMessage, Presence>();
const kScansBeforeIndex = 32;

/**
 * Where each word (maximal run of letters, digits and `_`, one UTF-16 unit at a time as
 * containsTerm reads them: astral-plane characters end a word) starts in a text.
 */
export interface WordIndex {
  text: string;
  words: Map<string, number[]>;
}
const kWord = /(?:(?![\u{10000}-\u{10FFFF}])[\p{L}\p{N}_])+/gu;

export function wordIndex(text: string): WordIndex {
  const words = new Map<string, number[]>();
  for (const m of text.matchAll(kWord)) {
    const at = words.get(m[0]);
    if (at) at.push(m.index);
    else words.set(m[0], [m.index]);
  }
  return { text, words };
}

/**
 * containsTerm through the index, with the same answer: in a whole occurrence of a term each of
 * its words is a whole word of the text (inside the term a non-word character bounds it; at
 * the term's ends the boundary rule does), so the occurrence starts at a start of its rarest
 * word less that word's offset in the term; a term without a word is scanned for.
 */
export function indexedContains(ix: WordIndex, term: string): boolean {
  let best: { at: number[]; offset: number } | undefined;
  for (const w of term.matchAll(kWord)) {
    const at = ix.words.get(w[0]);
    if (at === undefined) return false;
    if (best === undefined || at.length < best.at.length) best = { at, offset: w.index };
  }
  if (best === undefined) return containsTerm(ix.text, term);
  for (const at of best.at) if (occursAt(ix.text, term, at - best.offset)) return true;
  return false;
}

/** The texts of a message that terms are read from (see the module comment), memoised per message object. */
export function termTexts(m: ChatMessage): string[] {
  let texts = kTexts.get(m);
  if (texts !== undefined) return texts;
  texts = [contentText(m)];
  for (const a of callArgs(m)) argumentTexts(a, texts);
  texts = texts.filter((s) => s !== "");
  kTexts.set(m, texts);
  return texts;
}

/** Whether `term` is present in `m`'s texts (memoised per message object and term; see Presence). */
export function messageHasTerm(m: ChatMessage, term: string): boolean {
  let p = kPresence.get(m);
  if (p === undefined) kPresence.set(m, (p = { lookups: 0, memo: new Map() }));
  let has = p.memo.get(term);
  if (has !== undefined) return has;
  if (++p.lookups > kScansBeforeIndex) {
    p.index ??= termTexts(m).map(wordIndex);
    has = p.index.some((ix) => indexedContains(ix, term));
  } else has = termTexts(m).some((t) => containsTerm(t, term));
  p.memo.set(term, has);
  return has;
}

/** The specific terms `m` names (its texts' terms, in order, distinct). */
export function namedTerms(m: ChatMessage): string[] {
  const seen = new Set<string>();
  for (const t of termTexts(m)) for (const term of specificTerms(t)) seen.add(term);
  return [...seen];
}

/** The evidence of a prompt for its next message (see the module comment); [] when there is no next assistant message. */
export function nextStepEvidence(prompt: readonly ChatMessage[], next: ChatMessage | undefined): string[] {
  if (next === undefined || next.role !== "assistant") return [];
  const anchors = anchorIndices(prompt);
  const anchor = prompt.filter((_, i) => anchors.has(i));
  const trajectory = prompt.filter((_, i) => !anchors.has(i));
  return namedTerms(next).filter((term) => !anchor.some((m) => messageHasTerm(m, term)) && trajectory.some((m) => messageHasTerm(m, term)));
}

/** How many of `evidence` the compacted prompt `output` still shows in its texts. */
export function evidenceKept(evidence: readonly string[], output: readonly ChatMessage[]): number {
  let kept = 0;
  for (const term of evidence) if (output.some((m) => messageHasTerm(m, term))) kept++;
  return kept;
}
