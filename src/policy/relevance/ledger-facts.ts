/**
 * The facts a ledger is made of, read from the messages a stage removes: the specific terms
 * (model/terms.ts) of each text, with where they were seen (the agent's own text, a call's
 * arguments, a tool's output, a user turn), and the assistant's and user's decisions ("I'll
 * change X to Y", "the bug is in …"); error lines come from the reduced steps (their error
 * head, steps/detect.ts). Deterministic, and bounded per message: a text is read in a head and
 * a tail window, redacted, binary content not at all, and each message's facts are memoised on
 * the message object (an epoch of a session sees the same objects again).
 */
import type { Message } from "../../model/schema.js";
import { argumentTexts, specificTerms } from "../../model/terms.js";
import { isBinaryText } from "../../steps/detect.js";
import { isSecretKey, redactSecrets } from "../../steps/redact.js";
import { resultText } from "../../steps/reducer.js";
import { cutBackward, cutForward } from "../../summarize/extractive-units.js";

/** Where a term was seen: bit flags, so one term can carry several. */
export const kSeen = { thought: 1, args: 2, output: 4, user: 8, definition: 16 } as const;

/** One message's facts. */
export interface MessageFacts {
  /** Distinct terms with the flags of where they were seen in this message. */
  terms: Map<string, number>;
  /** Terms of each tool call's arguments, by call id (the edits are found among them). */
  calls: Map<string, string[]>;
  decisions: string[];
}

/**
 * Characters of a text read from its start, and from its end, for terms. The terms an agent uses
 * again late in a session come from the middle of the long files it read or wrote as often as
 * from their ends, so the ledger reads most of a text: on both corpora pooled, with names ranked
 * per token (docs/eval.md, "Choosing the defaults"), 36,000 and 12,000 keep 97.7% of next-step
 * evidence at 32k against 97.6% for 30,000 and 10,000 and 97.0% for 24,000 and 8,000 (at 8k
 * all keep 89.7%), for a cost per call there 2.3% above 24,000 and 8,000; 48,000 and 16,000 keep
 * no more for 4.9% more, past the rule the defaults follow.
 */
const kHeadChars = 36_000;
const kTailChars = 12_000;
/** Longest decision a ledger shows. */
const kDecisionChars = 120;
/** Decisions taken from one message at most. */
const kDecisionsPerMessage = 2;

/** Sentences that say what was found or what will be done (English cues; other languages give terms only). */
const kDecisionCue =
  /\b(?:I'll|I will|I'm going to|I am going to|we'll|we will|let's|I need to|we need to|I should|we should|instead of|decided|the (?:bug|issue|problem|cause|root cause|fix|culprit|error) (?:is|was|lies|comes|seems|appears)|the (?:fix|solution) (?:is|will be)|(?:change|replace|rename|move) \S+(?: \S+){0,6} (?:to|with|into))\b/i;
const kDefinition = /\b(?:def|class|function|fn|func|interface|struct|enum|trait|type|const|let|var|module)\s+([\p{L}_$][\p{L}\p{N}_$.]*)/gu;
/** Hashes and store names are not worth a model's attention: long hex runs. */
const kHexRun = /[0-9a-f]{16,}/i;

const kMemo = new WeakMap<Message, MessageFacts>();

/** A specific term worth a ledger's room: not a hash, blob, store name or long bare number. */
function isLedgerTerm(t: string): boolean {
  return t.length <= 64 && !kHexRun.test(t) && !/^[-+]?\d{7,}$/.test(t);
}

/**
 * A long text's head and tail windows (redacted), or "" for binary content. A window ends where
 * no secret can be split (the extractive summariser's cuts): a key cut in two is no longer one
 * that redaction knows, and its piece would read as a name.
 */
function window(text: string): string {
  const w =
    text.length <= kHeadChars + kTailChars
      ? text
      : `${text.slice(0, cutForward(text, kHeadChars))}\n${text.slice(cutBackward(text, text.length - kTailChars))}`;
  return isBinaryText(w) ? "" : redactSecrets(w);
}

/** `text` cut to one line of at most `max` characters, at a word boundary. */
function oneLineCut(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  if (flat.length <= max) return flat;
  const cut = flat.slice(0, max - 1);
  const space = cut.lastIndexOf(" ");
  return `${space > max / 2 ? cut.slice(0, space) : cut}…`;
}

/** Decisions of an assistant or user text: cue sentences naming at least one specific term, code blocks left out. */
function decisionsOf(text: string): string[] {
  // A sentence is a piece of the text between non-word characters: a text without a cue has none.
  if (!kDecisionCue.test(text)) return [];
  const prose = text.replace(/```[\s\S]*?(?:```|$)/g, "\n");
  const out: string[] = [];
  for (const line of prose.split(/\n+/)) {
    for (const sentence of line.split(/(?<=[.!?])\s+(?=[\p{Lu}`"'([])/u)) {
      if (!kDecisionCue.test(sentence) || !specificTerms(sentence).some(isLedgerTerm)) continue;
      out.push(oneLineCut(sentence.replace(/^\s*(?:THOUGHT:|[-*>#]+)\s*/, ""), kDecisionChars));
      if (out.length >= kDecisionsPerMessage) return out;
    }
  }
  return out;
}

/** The facts of one message (see the module comment), memoised on it. */
export function messageFacts(m: Message): MessageFacts {
  const hit = kMemo.get(m);
  if (hit) return hit;
  const facts: MessageFacts = { terms: new Map(), calls: new Map(), decisions: [] };
  const note = (w: string, seen: number): string[] => {
    const terms = specificTerms(w).filter(isLedgerTerm);
    for (const t of terms) facts.terms.set(t, (facts.terms.get(t) ?? 0) | seen);
    for (const d of w.matchAll(kDefinition)) if (facts.terms.has(d[1])) facts.terms.set(d[1], facts.terms.get(d[1])! | kSeen.definition);
    return terms;
  };
  const prose = m.role === "user" ? kSeen.user : kSeen.thought;
  for (const p of m.parts) {
    if (p.type === "text" || (p.type === "reasoning" && p.text !== undefined)) {
      const w = window(p.text!);
      note(w, m.role === "tool" ? kSeen.output : prose);
      if (m.role === "assistant" || m.role === "user") facts.decisions.push(...decisionsOf(w));
    } else if (p.type === "tool-call") {
      facts.calls.set(p.id, note(window(argText(p.args)), kSeen.args));
    } else if (p.type === "tool-result") {
      note(window(resultText(p.content)), kSeen.output);
    }
  }
  kMemo.set(m, facts);
  return facts;
}

/**
 * A call's arguments as text for terms: the string leaves of JSON arguments (numbers as JSON
 * writes them), one a line, so an escaped newline never glues two names together (as the eval's
 * evidence reads them), but none of a secret-named field (isSecretKey: a secret is no fact to
 * keep); other arguments as they are.
 */
function argText(args: string): string {
  const t = args.trimStart();
  if (args.length > kHeadChars + kTailChars || !(t.startsWith("{") || t.startsWith("["))) return args;
  return argumentTexts(args, [], isSecretKey).join("\n");
}
