/**
 * Pieces shared by block compaction's two compaction strategies (the legacy DefaultCompaction in
 * legacy.ts and DefaultBlockCompaction in block.ts): cutting long tool outputs, one-line turn
 * summaries within a token budget, the summary message, and the merge that keeps role
 * alternation after messages were removed.
 *
 * Decisions where block compaction's design is silent:
 * - Tool outputs are cut per text part of a tool result (each part is an output of its own);
 *   media and opaque content is left alone. A cut keeps the head and the tail of the output
 *   (most tools print what matters first and sum up last) and stores the whole output, so a cut
 *   loses nothing: its marker line names the ref.
 * - Pinned messages ("never compacted, dropped or summarised", schema.ts) are never cut.
 * - A turn's one-liner is built from what a reader needs to follow the story: what the user
 *   asked, what the assistant said, and each tool step as step reduction's observation. Reasoning is
 *   left out (it is the model's scratchpad, often signed or redacted, and long).
 */
import { CtxfoldError } from "../errors.js";
import type { Message, Part, ResultContentPart } from "../model/schema.js";
import type { OffloadStore } from "../store/index.js";
import { StepReducer } from "../steps/reducer.js";
import { argumentSecrets, redactEchoes, redactSecrets } from "../steps/redact.js";
import { oneLine } from "../steps/rules.js";

export { mergeAdjacent } from "../model/adjacent.js";

/** A cut output keeps at most this many characters of each kept line (longer ones end in "…"). */
export const kMaxKeptLineChars = 400;
/** An output is also cut when longer than maxLines × this many characters (few huge lines). */
export const kCharsPerLine = 200;
/** A turn's one-liner is at most this many characters. */
export const kMaxTurnSummaryChars = 300;
/** How much of the user's and of the assistant's text a one-liner quotes. */
const kTextHeadChars = 80;

/** The `meta.ctxfold.kind` of a summary message made by summaryMessage. */
export const kTurnSummaryKind = "turn-summary";

/** At most `max` UTF-16 units of `line`, ending in "…" when cut, never splitting a surrogate pair. */
function capLine(line: string, max: number): string {
  if (line.length <= max) return line;
  let end = max - 1;
  const c = line.charCodeAt(end - 1);
  if (c >= 0xd800 && c <= 0xdbff) end--;
  return line.slice(0, end) + "…";
}

/** The marker line of a cut output. */
const kMarkerLine = /^\[… \d+ (?:lines cut|long lines shortened); full output: \S+\]$/;

/**
 * Whether `lines` already are a cut output for `maxLines`: at most maxLines + 1 lines, one of
 * them a marker line, the others at most 400 characters. Cutting is idempotent: compacting an
 * already compacted transcript again (as a runner does every time its context fills up) does
 * not cut one more line and store one more copy of every output it already cut.
 */
function isCutAlready(lines: readonly string[], maxLines: number): boolean {
  if (lines.length > maxLines + 1) return false;
  let markers = 0;
  for (const l of lines) {
    if (kMarkerLine.test(l)) markers++;
    else if (l.length > kMaxKeptLineChars) return false;
  }
  return markers === 1;
}

/**
 * Cuts one tool output to `maxLines` lines. An output is cut when it has more than `maxLines`
 * lines, or more than `maxLines × 200` characters (an output of a few huge lines, such as
 * minified JSON, would otherwise pass untouched). A cut output keeps its first ⌈0.8·maxLines⌉
 * and last ⌊0.2·maxLines⌋ lines, each at most 400 characters, with one marker line between
 * them: `[… n lines cut; full output: ref]`, where the whole original is stored (kind "output",
 * ext "log"), so `store.getText(ref)` gives it back exactly. `maxLines` 0 makes the whole
 * output the marker.
 *
 * Decisions:
 * - Lines are split on "\n" and "\r\n"; a cut output joins its lines with "\r\n" when the
 *   original's first line break was one, else with "\n". A final line break ends the last line
 *   rather than starting an empty one (so "a\nb\n" is 2 lines), and a cut output keeps it.
 * - When the output is cut for its characters only (no line to drop: at most maxLines lines),
 *   every line is kept, each capped at min(400, ⌊(maxLines × 200 − line breaks) / lines⌋)
 *   characters so the kept lines are within the character limit, and the marker says
 *   `[… n long lines shortened; full output: ref]` instead of "0 lines cut".
 * - Idempotent: an output that already is a cut (at most maxLines + 1 lines, one of them a
 *   marker line, the others at most 400 characters) is left as it is, so compacting a
 *   compacted transcript again neither cuts it further nor stores it again.
 * - The empty output is never cut (there is nothing to recover).
 */
export function truncateToolOutput(text: string, maxLines: number, store: OffloadStore): { text: string; ref?: string; cut: boolean } {
  if (!Number.isInteger(maxLines) || maxLines < 0)
    throw new CtxfoldError("E_BAD_INPUT", `must be a non-negative integer, got ${String(maxLines)}`, { path: "maxLines" });
  if (text.length === 0) return { text, cut: false };
  const eol = /\r?\n/.exec(text);
  const sep = eol ? eol[0] : "\n";
  const trailing = /\r?\n$/.exec(text)?.[0] ?? "";
  const lines = text.slice(0, text.length - trailing.length).split(/\r?\n/);
  const n = lines.length;
  if (n <= maxLines && text.length <= maxLines * kCharsPerLine) return { text, cut: false };
  if (isCutAlready(lines, maxLines)) return { text, cut: false };
  const ref = store.put(text, { kind: "output", ext: "log" });
  if (maxLines === 0) return { text: `[… ${n} lines cut; full output: ${ref}]`, ref, cut: true };
  const headCount = Math.min(n, Math.ceil((4 * maxLines) / 5));
  const tailCount = Math.min(n - headCount, Math.floor(maxLines / 5));
  const dropped = n - headCount - tailCount;
  // Cut for its characters alone, an output must come out within maxLines × 200 characters.
  const cap = dropped > 0 ? kMaxKeptLineChars : Math.min(kMaxKeptLineChars, Math.floor((maxLines * kCharsPerLine - (n - 1) * sep.length) / n));
  const head = lines.slice(0, headCount).map((l) => capLine(l, cap));
  const tail = lines.slice(n - tailCount).map((l) => capLine(l, cap));
  let marker: string;
  if (dropped > 0) {
    marker = `[… ${dropped} lines cut; full output: ${ref}]`;
  } else {
    const shortened = lines.filter((l) => l.length > cap).length;
    marker = `[… ${shortened} long lines shortened; full output: ${ref}]`;
  }
  return { text: [...head, marker, ...tail].join(sep) + trailing, ref, cut: true };
}

/**
 * Cuts every text part of every tool-result part of `messages` (see truncateToolOutput). A
 * message with nothing to cut is returned as the same object, so untouched messages stay
 * byte-identical; a changed message is a new object whose unchanged parts are the original
 * objects. The input is never modified. Pinned messages are never cut. `refs` lists the stored
 * originals, in message order.
 */
export function truncateToolOutputs(messages: readonly Message[], maxLines: number, store: OffloadStore): { messages: Message[]; refs: string[] } {
  const refs: string[] = [];
  const out = messages.map((m) => {
    if (m.pinned === true) return m;
    let parts: Part[] | undefined;
    m.parts.forEach((p, k) => {
      if (p.type !== "tool-result") return;
      let content: ResultContentPart[] | undefined;
      p.content.forEach((c, j) => {
        if (c.type !== "text") return;
        const r = truncateToolOutput(c.text, maxLines, store);
        if (!r.cut) return;
        refs.push(r.ref!);
        content ??= [...p.content];
        content[j] = { ...c, text: r.text };
      });
      if (!content) return;
      parts ??= [...m.parts];
      parts[k] = { ...p, content };
    });
    return parts ? { ...m, parts } : m;
  });
  return { messages: out, refs };
}

/** The text parts of the messages of one role, joined by newlines. */
function roleText(messages: readonly Message[], role: Message["role"]): string {
  const texts: string[] = [];
  for (const m of messages) {
    if (m.role !== role) continue;
    for (const p of m.parts) if (p.type === "text" && /\S/.test(p.text)) texts.push(p.text);
  }
  return texts.join("\n");
}

/**
 * One line summing up a turn: `${label}: ` then, joined by "; ", the head of the user's text
 * (`user: "…"`), the head of the assistant's text (`assistant: "…"`), and each tool step as
 * its StepReducer observation (results with no call too), in call order; at most 300
 * characters (newlines shown as ⏎, see oneLine). Reasoning, media and opaque parts contribute
 * nothing; a turn with nothing to say gives `${label}: (nothing to summarise)`.
 *
 * The text heads are redacted (redactSecrets); the default reducer describes steps without
 * storing anything (`offload: false`) and redacts secrets in observations, as step reduction's
 * reducer does; and the line never echoes a value of `secrets` (by default, the secret-named
 * call arguments of `messages`, see argumentSecrets).
 */
export function summarizeTurn(
  messages: readonly Message[],
  label: string,
  reducer: StepReducer = new StepReducer({ offload: false }),
  secrets: readonly string[] = argumentSecrets(messages),
): string {
  const bits: string[] = [];
  const user = roleText(messages, "user");
  // Redacted whole before the cut: a cut key would no longer read as one.
  const head = (text: string) => oneLine(redactEchoes(redactSecrets(text), secrets), kTextHeadChars);
  if (user) bits.push(`user: "${head(user)}"`);
  const assistant = roleText(messages, "assistant");
  if (assistant) bits.push(`assistant: "${head(assistant)}"`);
  for (const step of reducer.reduceMessages(messages)) bits.push(step.observation);
  if (bits.length === 0) bits.push("(nothing to summarise)");
  return oneLine(redactEchoes(`${label}: ${bits.join("; ")}`, secrets), kMaxTurnSummaryChars);
}

/** The last line of summarizeTurns when turns were left out. */
export const droppedLine = (dropped: number): string => `… ${dropped} later turns not summarised`;

/**
 * Per-turn one-liners (summarizeTurn), in order, within `maxTokens`: block compaction's basic
 * keep_compacted, which "drops remaining turns when budget exhausted". When turns are dropped
 * a last line `… n later turns not summarised` says so; it counts within the budget (room is
 * kept for it), so the lines returned always fit.
 *
 * Decisions:
 * - The budget is the sum of `estimate(line)` over the lines returned (the line breaks that
 *   join them are not counted).
 * - The kept turns are the longest prefix that fits with the dropped line, and all of them
 *   when they all fit (then no dropped line is needed, so a last turn may take the room that
 *   line would have taken).
 * - When not even the dropped line fits, no line is returned (kept 0, dropped = all).
 * - One reducer (no offloading) serves every turn; turns are summarised only until the budget
 *   is spent, so a long history with a small budget costs only the turns kept.
 */
export function summarizeTurns(
  turns: readonly { label: string; messages: readonly Message[] }[],
  maxTokens: number,
  estimate: (text: string) => number,
): { lines: string[]; kept: number; dropped: number } {
  const reducer = new StepReducer({ offload: false });
  // A turn's text may repeat a secret argument of another turn.
  const secrets = argumentSecrets(turns.flatMap((t) => t.messages));
  const lines: string[] = [];
  const fitsWithDropped = (used: number, kept: number): boolean => {
    const dropped = turns.length - kept;
    return dropped === 0 ? used <= maxTokens : used + estimate(droppedLine(dropped)) <= maxTokens;
  };
  let used = 0;
  let best = fitsWithDropped(0, 0) ? 0 : -1;
  for (let i = 0; i < turns.length; i++) {
    const line = summarizeTurn(turns[i].messages, turns[i].label, reducer, secrets);
    used += estimate(line);
    if (used > maxTokens) break;
    lines.push(line);
    if (fitsWithDropped(used, i + 1)) best = i + 1;
  }
  if (best < 0) return { lines: [], kept: 0, dropped: turns.length };
  const kept = lines.slice(0, best);
  const dropped = turns.length - best;
  if (dropped > 0) kept.push(droppedLine(dropped));
  return { lines: kept, kept: best, dropped };
}

/**
 * The message that stands for summarised turns: one user message (the summary is context the
 * runner gives the model, as the step compactor's "Previous actions" section is) whose text is `header`,
 * then the lines, one per line; meta `{ ctxfold: { kind: "turn-summary" } }`. With no lines the
 * text is the header alone.
 */
export function summaryMessage(lines: string[], header: string, id: string): Message {
  const text = lines.length > 0 ? `${header}\n${lines.join("\n")}` : header;
  return { id, role: "user", parts: [{ type: "text", text }], meta: { ctxfold: { kind: kTurnSummaryKind } } };
}
