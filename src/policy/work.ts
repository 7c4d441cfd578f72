import { hashText, hashToHex } from "../core/hash.js";
import { markOf, type LedgerLine } from "../model/marks.js";
import { FactWindow } from "./relevance/fact-window.js";
import type { Message, Part, TextPart, ToolResultPart } from "../model/schema.js";
import { messageTexts } from "../model/texts.js";
import { StepCompactor } from "../steps/compactor.js";
import { presetConfig } from "../steps/config.js";
import { redactSecrets } from "../steps/redact.js";
import { type StepReducer, resultText } from "../steps/reducer.js";
import type { ReducedStep } from "../steps/types.js";
import type { OffloadStore } from "../store/index.js";
import type { TokenMeasure } from "../tokens/measure.js";
import type { TokenCounter } from "../tokens/token-counter.js";
import { classify } from "./classify.js";
import type { TieredSettings } from "./config.js";
import type { PolicyEvent } from "./events.js";
import { summarizeExtractive } from "../summarize/extractive.js";
import { focusLines, type Focus } from "./relevance/focus.js";
import { extendLedger, isLedgerPart, ledgerPart, type Removed } from "./relevance/ledger.js";
import type { ReplacementMemo, Replacement } from "./replacement-memo.js";
import type { StepCache } from "./step-cache.js";
import type { Summarizer } from "../steps/summarizer.js";
import type { MessageClass, SkipReason, StageReport } from "./types.js";

/**
 * What one run of the stages works on: the state every stage reads. Only the kit writes it
 * (StageKit's replace, relist, addRefs, dropRef, countCompactions), so that every change keeps
 * the total, the classes and the running stage's report current; to anyone else its fields
 * are read-only.
 */
export interface Work {
  readonly msgs: readonly Message[];
  readonly classes: readonly MessageClass[];
  /** Estimated tokens of `msgs` as a request, kept current by every change. */
  readonly total: number;
  /** What the stages work down to (targetRatio × budget). */
  readonly target: number;
  /** The budget the stages work to (the ledger's room is a share of it). */
  readonly budget: number;
  /** The call's input: until a stage moves messages (stage 3 is the first), `msgs[i]` stands for `input[i]`, originals whole. */
  readonly input: readonly Message[];
  /** Refs of everything removed or shortened so far. */
  readonly refs: readonly string[];
  /** How many parts and messages the stages compacted. */
  readonly compacted: number;
  /** The steps of `msgs`, reduced (observations and minimal arguments for the stages). */
  readonly steps: readonly ReducedStep[];
}

/** The work as its one writer, the kit, holds it. */
type WorkState = { -readonly [K in keyof Work]: Work[K] extends readonly (infer T)[] ? T[] : Work[K] };

const writable = (w: Work): WorkState => w as WorkState;

/** The work of one run over `input` (`total` tokens), to `budget`: its target targetRatio × budget. */
export function openWork(kit: StageKit, input: readonly Message[], total: number, budget: number): Work {
  const msgs = [...input];
  return {
    msgs,
    classes: classify(msgs),
    total,
    target: Math.floor(kit.settings.targetRatio * budget),
    budget,
    input,
    refs: [],
    compacted: 0,
    steps: kit.steps.reduce(msgs),
  };
}

/**
 * Where the preserved tail starts: the call message of the `keep`-th step from the end (the
 * latest assistant/tool exchange and the ones before it stay whole in stages 1–3), or earlier,
 * at a critical message that calls tools (the latest assistant text): stages 1–3 leave
 * everything from it on whole, so that its exchange stays whole.
 */
export function tailStart(w: Work, keep: number): number {
  const criticalCall = w.msgs.findIndex((m, i) => w.classes[i] === "critical" && callsTools(m));
  return Math.min(exchangeTail(w, keep), criticalCall < 0 ? w.msgs.length : criticalCall);
}

/** Where the latest `keep` exchanges start (the call message of the `keep`-th step from the end; the end with `keep` 0). */
export function exchangeTail(w: Work, keep: number): number {
  if (keep === 0) return w.msgs.length;
  const calls: number[] = [];
  w.msgs.forEach((m, i) => {
    if (callsTools(m)) calls.push(i);
  });
  return calls.length >= keep ? calls[calls.length - keep] : calls.length > 0 ? calls[0] : w.msgs.length;
}

const callsTools = (m: Message) => m.role === "assistant" && m.parts.some((p) => p.type === "tool-call");

/** The indices of the critical messages and, for a critical message that calls tools, of the results it needs (provider rules). */
export function criticalIndices(msgs: readonly Message[], classes: readonly MessageClass[]): Set<number> {
  const calls = new Set<string>();
  msgs.forEach((m, i) => {
    if (classes[i] === "critical") for (const p of m.parts) if (p.type === "tool-call") calls.add(p.id);
  });
  const at = new Set<number>();
  msgs.forEach((m, i) => {
    if (classes[i] === "critical" || m.parts.some((p) => p.type === "tool-result" && calls.has(p.callId))) at.add(i);
  });
  return at;
}

/** The critical messages and, for a critical message that calls tools, the results it needs (see criticalIndices). */
export function criticalSet(msgs: readonly Message[], classes: readonly MessageClass[]): Message[] {
  const at = criticalIndices(msgs, classes);
  return msgs.filter((_, i) => at.has(i));
}

export type { Replacement } from "./replacement-memo.js";

export const refLine = (what: string, ref: string) => `[${what}: ${ref}]`;

/** What every call of one compactor shares: its services, and what is memoised across calls. */
export interface KitServices {
  readonly settings: TieredSettings;
  readonly store: OffloadStore;
  readonly counter: TokenCounter;
  readonly steps: StepCache;
  readonly summarizer: Summarizer | undefined;
  readonly emit: (e: PolicyEvent) => void;
  /** Replacements by (content hash, target, label): a part compacted once is not stored or summarised again. */
  readonly memo: ReplacementMemo;
  /** Stage 3's step compactors, by how many recent steps stay whole (validated once each). */
  readonly stepCompactors: Map<number, StepCompactor>;
  /** Stage 3's reducer: only its store is used (removed messages go there). */
  readonly storeReducer: StepReducer;
}

/**
 * What the stages of one call work with: the compactor's services (settings, store, memo,
 * summariser with its timeout and extractive fallback, step reductions), the measure of the
 * call's provider, the report of the stage running now (candidates, compactions, skip
 * reasons), and the writes of the work, which no one else makes. One per call, so concurrent
 * calls of one compactor never count into each other's reports.
 */
export class StageKit {
  /** The stage running now, whose report the helpers below count into. */
  #report: StageReport | undefined;
  /** Set when the summariser failed or timed out in this call: it is not asked again in it. */
  summarizerDown = false;
  /** The ledger lines of the session's previous epoch, which this call's ledger starts with while they hold (policy/relevance/ledger.ts). */
  priorLedger: readonly LedgerLine[] = [];
  /** The facts stage 3's ledger ranks (policy/relevance/fact-window.ts): the session's, kept across its epochs, or this call's own. */
  facts = new FactWindow();
  readonly settings: TieredSettings;
  readonly store: OffloadStore;
  readonly counter: TokenCounter;
  readonly steps: StepCache;
  readonly emit: (e: PolicyEvent) => void;

  constructor(
    readonly services: KitServices,
    readonly measure: TokenMeasure,
  ) {
    ({ settings: this.settings, store: this.store, counter: this.counter, steps: this.steps, emit: this.emit } = services);
  }

  /** The policy's step reducer (observations, minimal arguments). */
  get reducer(): StepReducer {
    return this.steps.reducer;
  }

  /** A reducer whose store is the compactor's (stage 3 stores removed messages through it). */
  get storeReducer(): StepReducer {
    return this.services.storeReducer;
  }

  /** The step compactor that keeps `recent` steps whole. */
  stepCompactor(recent: number): StepCompactor {
    let c = this.services.stepCompactors.get(recent);
    const preset = this.settings.stepPreset;
    if (!c)
      this.services.stepCompactors.set(
        recent,
        (c = new StepCompactor({ ...(preset ? presetConfig(preset) : {}), keepRecent: recent, groupTargets: this.settings.stepTargets })),
      );
    return c;
  }

  /** Runs a stage with `report` as the one its candidates, compactions and skips count into. */
  async tally(report: StageReport, run: () => Promise<void> | void): Promise<void> {
    this.#report = report;
    try {
      await run();
    } finally {
      this.#report = undefined;
    }
  }

  candidate(n = 1): void {
    if (this.#report) this.#report.candidateCount += n;
  }

  skip(reason: SkipReason, n = 1): void {
    if (this.#report) this.#report.skipped[reason] = (this.#report.skipped[reason] ?? 0) + n;
  }

  /** Message `i` of the work with new parts; the total follows. `count`: it counts as a compaction (not a second change of one). */
  replace(w: Work, i: number, parts: Part[], count = true): void {
    const state = writable(w);
    const old = state.msgs[i];
    const next: Message = { ...old, parts };
    state.total += this.measure.of(next) - this.measure.of(old);
    state.msgs[i] = next;
    if (count) this.countCompactions(w, 1);
  }

  /**
   * The work's list replaced by `msgs` (a stage moved messages): classes and total anew, and
   * with `restep` its steps reduced anew (stage 4 keeps the steps it merged from, for its later passes).
   */
  relist(w: Work, msgs: readonly Message[], restep: boolean): void {
    const state = writable(w);
    state.msgs.splice(0, state.msgs.length, ...msgs);
    state.classes = classify(state.msgs);
    state.total = this.measure.all(state.msgs);
    if (restep) state.steps = this.steps.reduce(state.msgs);
  }

  /** Refs of what a stage removed or shortened, after those the work has. */
  addRefs(w: Work, ...refs: string[]): void {
    writable(w).refs.push(...refs);
  }

  /** A ref the work no longer leads to directly (an index superseded by one that names the same originals). */
  dropRef(w: Work, ref: string): void {
    const state = writable(w);
    state.refs = state.refs.filter((r) => r !== ref);
  }

  /** `n` compactions, in the work's count and the running stage's report. */
  countCompactions(w: Work, n: number): void {
    writable(w).compacted += n;
    if (this.#report) this.#report.compacted += n;
  }

  memoGet(key: string): Replacement | undefined {
    const hit = this.services.memo.get(key);
    if (hit !== undefined) this.skip("cache_hit");
    return hit;
  }

  memoSet(key: string, value: Replacement): void {
    this.services.memo.set(key, value);
  }

  /** A tool output's stage-2 replacement: its step's observation plus the ref of the output (memoised). */
  observation(p: ToolResultPart, data: string, json: unknown, step: () => ReducedStep): Replacement {
    const key = `${hashToHex(hashText(data))}:output:${this.settings.outputTokens}:${p.callId}`;
    let replacement = this.memoGet(key);
    if (replacement === undefined) {
      const st = step();
      const ref = this.store.put(data, { kind: "output", ext: json ? "json" : "txt" });
      const text = `[ctxfold] ${st.observation}${st.success ? "" : ` (failed: ${st.error ?? "error"}; call ${p.callId})`}\n${refLine("full output", ref)}`;
      replacement = { text, ref };
      this.memoSet(key, replacement);
    }
    return replacement;
  }

  /**
   * `plain` (an output's observation and ref) with the output's lines on `focus` (focusLines
   * within settings.focusTokens) between the two; `plain` itself when no line names the focus.
   * Memoised by output (the ref of `plain` names its content) and focus; a hit is not counted
   * again as a cache hit (`plain` was). The lines are a function of the output and the focus
   * terms it holds, so an older output renders the same in the next epoch unless the focus
   * moved onto or off its own names.
   */
  withFocusLines(p: ToolResultPart, data: string, json: unknown, plain: Replacement, focus: Focus): Replacement {
    const cap = this.settings.focusTokens;
    if (cap === 0 || focus.terms.length === 0) return plain;
    const key = `${plain.ref}:focus:${cap}:${focus.key}:${p.callId}`;
    let out = this.services.memo.get(key);
    if (out === undefined) {
      const lines = focusLines(json ? resultText(p.content) : data, focus, cap, (t) => this.measure.text(t));
      const cut = plain.text.lastIndexOf("\n");
      out = lines === "" ? plain : { text: `${plain.text.slice(0, cut)}\n${lines}${plain.text.slice(cut)}`, ref: plain.ref };
      this.memoSet(key, out);
    }
    return out;
  }

  /** A summary of `text` within `target` tokens plus the ref of the original (memoised). */
  async summarize(text: string, target: number, label: string): Promise<Replacement> {
    const key = `${hashToHex(hashText(text))}:${target}:${label}`;
    const hit = this.memoGet(key);
    if (hit !== undefined) return hit;
    const ref = this.store.put(text, { kind: "text", ext: "txt" });
    const room = Math.max(1, target - this.measure.text(refLine("original", ref)) - 1);
    let summary: string | undefined;
    const custom = this.summarizerDown ? undefined : this.services.summarizer;
    if (custom) {
      try {
        const raw = await withTimeout(
          Promise.resolve().then(() => custom(text, room, label)),
          this.settings.summarizerTimeoutMs,
        );
        // The answer goes into the prompt as ctxfold's text: it never echoes a secret of the text it read.
        const answer = typeof raw === "string" ? redactSecrets(raw) : raw;
        if (typeof answer === "string" && answer.trim() && this.measure.text(answer) <= room) summary = answer.trim();
        else this.emit({ type: "summarizer_fallback", label, reason: typeof answer === "string" && answer.trim() ? "over target" : "empty answer" });
      } catch (err) {
        // A summariser that fails or times out is not asked again in this call: one wait, not one per part.
        this.summarizerDown = true;
        // A summariser's error may quote what it was sent: the event, ctxfold's text, never echoes a secret.
        this.emit({ type: "summarizer_fallback", label, reason: redactSecrets(err instanceof Error ? err.message : String(err)) });
      }
    }
    summary ??= summarizeExtractive(text, room, label, this.counter);
    const out = { text: `${summary}\n${refLine("original", ref)}`, ref };
    this.memoSet(key, out);
    return out;
  }
}

/** `p`, or a rejection after `ms` milliseconds (the timer never keeps the process alive). */
function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`summariser timed out after ${ms} ms`)), ms);
    timer.unref?.();
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

// The ledger in the work: where it stands, and its writes (relevance/ledger.ts makes its lines).

/** Where the ledger is in `w` (message, part), or where it goes: right before the first step summary or merge. */
function ledgerPlace(w: Work): { i: number; k: number; exists: boolean } | undefined {
  let anchor: { i: number; k: number; exists: boolean } | undefined;
  for (let i = 0; i < w.msgs.length; i++) {
    const parts = w.msgs[i].parts;
    for (let k = 0; k < parts.length; k++) {
      const kind = markOf(parts[k])?.kind;
      if (kind === "ledger") return { i, k, exists: true };
      if (kind !== undefined && anchor === undefined) anchor = { i, k, exists: false };
    }
  }
  return anchor;
}

/**
 * Writes the ledger into `w` after a stage removed `removed`: the ledger already there (or, for
 * the first one of this call, the previous epoch's lines, `kit.priorLedger`) extended with the
 * new facts, within `ledgerRatio × budget` tokens (and, below the hard threshold, what is left under it).
 * Nothing when the setting is 0 or there is no step summary or merge to put it before.
 * `window` aggregates the facts (stage 3 passes the session's, kept across epochs; by default
 * a fresh one).
 */
export function writeLedger(kit: StageKit, w: Work, removed: Removed, window?: FactWindow): void {
  const s = kit.settings;
  if (s.ledgerRatio <= 0 || removed.messages.length === 0) return;
  const place = ledgerPlace(w);
  if (!place) return;
  const parts = [...w.msgs[place.i].parts];
  const current = place.exists ? markOf(parts[place.k]) : undefined;
  const fresh = current?.kind !== "ledger";
  const prior = current?.kind === "ledger" ? current.lines : kit.priorLedger;
  const own = fresh ? 0 : kit.measure.text((parts[place.k] as TextPart).text);
  // Below the hard threshold the ledger never takes the request above it (stage 4 would run
  // for it); above it, stage 4 runs anyway, and its last resort may shrink the ledger.
  const hard = Math.floor(s.hardRatio * w.budget);
  const share = Math.floor(s.ledgerRatio * w.budget);
  const room = w.total > hard ? share : Math.min(share, own + Math.max(0, hard - w.total - 16));
  if (room <= own + 8) return;
  const keptMsgs = w.msgs.map((m) => ({ ...m, parts: m.parts.filter((p) => !isLedgerPart(p)) }));
  const lines = extendLedger(kit, prior, removed, messageTexts(keptMsgs).join("\n"), room, fresh, window);
  if (lines.length === 0 || (!fresh && lines.length === prior.length)) return;
  if (place.exists) parts[place.k] = ledgerPart(lines);
  else parts.splice(place.k, 0, ledgerPart(lines));
  kit.replace(w, place.i, parts, false);
}

/**
 * Stage 4's last resort for the ledger: it keeps only its error lines (a failure it names stays
 * visible), or goes when it has none (every fact it named is in the stored messages). Whether
 * it changed.
 */
export function shrinkLedger(kit: StageKit, w: Work): boolean {
  const place = ledgerPlace(w);
  if (!place?.exists) return false;
  const parts = [...w.msgs[place.i].parts];
  const mark = markOf(parts[place.k]);
  if (mark?.kind !== "ledger") return false;
  const errors = mark.lines.filter((l) => l.text.startsWith("- error: "));
  if (errors.length === mark.lines.length) return false;
  if (errors.length > 0) parts[place.k] = ledgerPart(errors);
  else parts.splice(place.k, 1);
  kit.replace(w, place.i, parts, false);
  return true;
}
