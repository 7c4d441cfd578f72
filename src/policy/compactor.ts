import { parseMessages, renderMessages, type Format } from "../adapters/index.js";
import { hashText, hashToHex } from "../core/hash.js";
import { badValueError, optionsObject } from "../errors.js";
import type { Message, Part, ResultContentPart, ToolCallPart, ToolResultPart } from "../model/schema.js";
import { jsonEqual } from "../model/equal.js";
import { messageTexts } from "../model/texts.js";
import { indexedRefs, prepareMessages, putMessages } from "../store/messages.js";
import { compactMessages } from "../session/legacy.js";
import { mergeAdjacent } from "../session/turns.js";
import { StepCompactor } from "../steps/compactor.js";
import { compactStepMessages, isStepSummaryPart, stepSummaryRef } from "../steps/messages.js";
import { presetConfig } from "../steps/config.js";
import { errorHead, extractExitCode, isFailedOutput, parseJsonOutput } from "../steps/detect.js";
import { StepReducer, extractSteps, resultPayload, resultText } from "../steps/reducer.js";
import type { ReducedStep } from "../steps/types.js";
import { createMemoryStore, type OffloadStore } from "../store/index.js";
import { tokenMeasure, type TokenMeasure } from "../tokens/measure.js";
import { TokenCounter } from "../tokens/token-counter.js";
import { isSignedReasoning, turnInProgressOpener, usesThinking } from "../validate/rules.js";
import { classify } from "./classify.js";
import { RedactingStore } from "./redacting-store.js";
import { resolveTieredSettings, type CompactorConfig, type TieredSettings } from "./config.js";
import type { PolicyEvent } from "./events.js";
import { summarizeExtractive } from "./extractive.js";
import type { Summarizer } from "./summarizer.js";
import type { CompactCallOptions, CompactResult, MessageClass, SkipReason, StageReport, Tier } from "./types.js";

/** Memo entries kept before the oldest are forgotten. */
const kMemoEntries = 50_000;

/** Seed 003's run aggregates (Compactor.stats()). */
export interface CompactorStats {
  /** compact() calls, session appends included. */
  calls: number;
  /** Calls that ran the stages (a new epoch in a session). */
  compactions: number;
  tiers: Record<Tier, number>;
  infeasible: number;
  /** Per stage: how often it ran, parts compacted, tokens saved, milliseconds. */
  stages: Partial<Record<StageReport["name"], { runs: number; compacted: number; saved: number; ms: number }>>;
  /** Skip reasons, summed over calls and stages. */
  skipped: Partial<Record<SkipReason, number>>;
  churnWarnings: number;
  summarizerFallbacks: number;
  tokensIn: number;
  tokensOut: number;
}

/** What one run of the stages needs and produces. */
interface Work {
  msgs: Message[];
  classes: MessageClass[];
  total: number;
  target: number;
  refs: string[];
  stages: StageReport[];
  compacted: number;
  /** The steps of the original messages, reduced once (observations for stages 2 and 3). */
  steps: ReducedStep[];
}

const refLine = (what: string, ref: string) => `[${what}: ${ref}]`;

/** A memoised replacement: the text that stands in for an original, and the ref of that original. */
interface Replacement {
  text: string;
  ref: string;
}

/**
 * The tiered compactor (seed 003): deterministic classification, pressure tiers, staged lazy
 * compaction re-measured after each stage, memoisation with skip reasons, deadline awareness,
 * summarisers with an extractive fallback, and epochs for prompt-cache stability (see
 * `session()`). `mode: "legacy"` runs seed 002's three-level strategy instead.
 */
export class Compactor {
  readonly settings: TieredSettings;
  /** Where removed and shortened originals go: the configured store (seen through a redacting view under `redactOffload`). */
  readonly store: OffloadStore;
  readonly counter: TokenCounter;
  readonly #config: CompactorConfig;
  readonly #measure: TokenMeasure;
  readonly #memo = new Map<string, Replacement>();
  readonly #reducer: StepReducer;
  /** Stage 3's reducer: only its store is used (removed messages go there). */
  #storeReducer: StepReducer | undefined;

  constructor(config: CompactorConfig = {}) {
    this.settings = resolveTieredSettings(config);
    this.#config = config;
    const store = config.store ?? createMemoryStore();
    this.store = this.settings.redactOffload ? new RedactingStore(store) : store;
    this.counter = config.counter ?? new TokenCounter({ encoding: "o200k_base" });
    this.#measure = tokenMeasure(this.counter);
    this.#reducer = new StepReducer({ offload: false });
  }

  #now(): number {
    return (this.#config.now ?? Date.now)();
  }

  #emit(e: PolicyEvent): void {
    this.#aggregate(e);
    this.#config.onEvent?.(e);
  }

  readonly #stats: CompactorStats = {
    calls: 0, compactions: 0, tiers: { normal: 0, pressure: 0, critical: 0 }, infeasible: 0,
    stages: {}, skipped: {}, churnWarnings: 0, summarizerFallbacks: 0, tokensIn: 0, tokensOut: 0,
  };

  /** A call its session answered without compacting (an append, or under the soft threshold). */
  noteSkip(tokens: number, budget: number): void {
    this.#emit({ type: "compaction_skipped", reason: "no_pressure", tier: "normal", tokens, budget });
  }

  /** Seed 003's run aggregates over every call of this compactor (its sessions included). */
  stats(): CompactorStats {
    return structuredClone(this.#stats);
  }

  #aggregate(e: PolicyEvent): void {
    const st = this.#stats;
    switch (e.type) {
      case "compaction_skipped":
        st.calls++;
        st.tiers[e.tier]++;
        st.skipped[e.reason] = (st.skipped[e.reason] ?? 0) + 1;
        st.tokensIn += e.tokens;
        st.tokensOut += e.tokens;
        break;
      case "compaction_result":
        st.calls++;
        st.compactions++;
        st.tiers[e.tier]++;
        if (e.status !== "ok") st.infeasible++;
        st.tokensIn += e.tokensBefore;
        st.tokensOut += e.tokensAfter;
        break;
      case "compaction_stage": {
        const s = (st.stages[e.name] ??= { runs: 0, compacted: 0, saved: 0, ms: 0 });
        s.runs++;
        s.compacted += e.compacted;
        s.saved += e.tokensBefore - e.tokensAfter;
        s.ms += e.durationMs;
        for (const [reason, n] of Object.entries(e.skipped)) st.skipped[reason as SkipReason] = (st.skipped[reason as SkipReason] ?? 0) + (n ?? 0);
        break;
      }
      case "churn_warning":
        st.churnWarnings++;
        break;
      case "summarizer_fallback":
        st.summarizerFallbacks++;
        break;
    }
  }

  /**
   * The steps of `messages`, reduced (seed 001), memoised per step object pair: a runner appends
   * to its message list, so a later epoch reduces only the steps it has not seen.
   */
  #reduceSteps(messages: readonly Message[]): ReducedStep[] {
    // A list that starts with the messages of a recent call (a growing conversation) keeps that
    // call's steps up to its first unanswered call and scans only from there.
    let head: ReducedStep[] = [];
    let from = 0;
    for (const prev of this.#stepLists) {
      if (prev.messages.length > messages.length || !prev.messages.every((m, i) => m === messages[i])) continue;
      head = prev.steps.slice(0, prev.kept);
      from = prev.cut;
      break;
    }
    // Step ids number the steps of this history from step_001, whatever came before (determinism).
    const tail = this.#reducer.restartNumbering(head.length + 1).reduceMessagesWith(messages, (call, result, reduce) => {
      const byCall = this.#reducedFor(call, result);
      const hit = byCall.get(call);
      if (hit) return hit;
      const r = reduce();
      byCall.set(call, r);
      return r;
    }, (call, result, placed) => this.#reduced.get(result ?? call)?.set(call, placed), from);
    const out = head.length === 0 ? tail : [...head, ...tail];
    // Where a later, longer list must scan from: the last place no step straddles (a call not
    // answered yet, or answered at or after it, would pair differently in a scan from there).
    let cut = messages.length;
    for (let moved = true; moved; ) {
      moved = false;
      for (const st of out) {
        if (st.callMessage === undefined || st.callMessage >= cut || (st.resultMessage !== undefined && st.resultMessage < cut)) continue;
        cut = st.callMessage;
        moved = true;
      }
    }
    let kept = out.findIndex((st) => (st.callMessage ?? st.resultMessage ?? 0) >= cut);
    if (kept < 0) kept = out.length;
    this.#stepLists.unshift({ messages: [...messages], steps: out, cut, kept });
    this.#stepLists.length = Math.min(this.#stepLists.length, 2);
    return out;
  }

  /**
   * The two latest lists #reduceSteps reduced (an epoch reduces its input, then its output) and
   * their steps: `kept` steps sit before message `cut`, from which a longer list is scanned again.
   */
  readonly #stepLists: { messages: Message[]; steps: ReducedStep[]; cut: number; kept: number }[] = [];

  /** Reduced steps by result part (by call part while unanswered), then by call part. */
  readonly #reduced = new WeakMap<object, WeakMap<object, ReducedStep>>();

  /** The memo of the steps of `result` (of `call` while unanswered), by call part. */
  #reducedFor(call: object, result: object | undefined): WeakMap<object, ReducedStep> {
    const key = result ?? call;
    let byCall = this.#reduced.get(key);
    if (!byCall) this.#reduced.set(key, (byCall = new WeakMap()));
    return byCall;
  }
  /** prepare()'s reducer: the same reductions as #reducer's, without touching its step numbering. */
  readonly #prepReducer = new StepReducer({ offload: false });

  /**
   * Work a later epoch over `messages` will need, done ahead (a session calls it in idle time):
   * each step answered in `messages[from..]` reduced and memoised as #reduceSteps memoises it
   * (the epoch then only places it), and each tool message rendered as putMessages stores it.
   * Stops once `sliceMs` have passed (after one message at least) and returns the index it
   * reached (`messages.length` when done). Output does not depend on whether it ran.
   */
  prepare(messages: readonly Message[], from: number, sliceMs = 2): number {
    const t0 = performance.now();
    let i = from;
    while (i < messages.length) {
      const m = messages[i];
      let trace = false;
      for (const p of m.parts) {
        if (p.type === "tool-call") trace = true;
        if (p.type !== "tool-result") continue;
        trace = true;
        const call = callOf(messages, i, p.callId);
        if (call === undefined) continue;
        const byCall = this.#reducedFor(call.part, p);
        if (!byCall.has(call.part)) byCall.set(call.part, this.#prepReducer.reduceStep({ call: call.part, callMessage: call.at, result: p, resultMessage: i }));
      }
      if (trace) prepareMessages([m]);
      i++;
      if (performance.now() - t0 >= sliceMs) break;
    }
    return i;
  }

  /** Estimated tokens of canonical messages as a request (memoised per message). */
  measure(messages: readonly Message[]): number {
    return this.#measure.all(messages);
  }

  /** A fresh session: epochs and measurements kept between calls over one growing conversation. */
  session(): CompactorSession {
    return new CompactorSession(this);
  }

  /**
   * Compacts `input` (provider messages in any supported format, or canonical messages) to
   * `options.budget`. Stateless: each call decides from scratch (use `session()` across the
   * calls of one conversation for stable prefixes).
   */
  async compact(input: unknown, options: CompactCallOptions): Promise<CompactResult> {
    const checked = checkCallOptions(options);
    const { format, messages } = this.parse(input, checked.format);
    const r = await this.compactCanonical(messages, checked);
    return { ...r, format, messages: renderMessages(r.canonical, format) };
  }

  /** Parses provider input (detecting the format unless given). */
  parse(input: unknown, format?: Format): { format: Format; messages: Message[] } {
    return parseMessages(input, format ? { format } : {});
  }

  /** The tier of `tokens` against a budget. */
  tier(tokens: number, budget: number): Tier {
    if (tokens <= this.settings.softRatio * budget) return "normal";
    return tokens <= this.settings.hardRatio * budget ? "pressure" : "critical";
  }

  /** compact() on canonical messages; the result's `messages` is the canonical list too. */
  async compactCanonical(messages: readonly Message[], options: CompactCallOptions, epoch = 0): Promise<Omit<CompactResult, "format"> & { format?: Format }> {
    options = checkCallOptions(options);
    this.#summarizerDown = false;
    const started = this.#now();
    const budget = options.budget;
    const tokensBefore = this.#measure.all(messages);
    const tier = this.tier(tokensBefore, budget);
    const mode = this.settings.mode;
    const base = { mode, budget, tokensBefore, tier, epoch };
    if (tier === "normal") {
      // Stage 0: the request fits; no compactor work at all.
      this.#emit({ type: "compaction_skipped", reason: "no_pressure", tier, tokens: tokensBefore, budget });
      return { ...base, messages: [...messages], canonical: [...messages], status: "ok", tokensAfter: tokensBefore, stages: [], refs: [] };
    }
    if (mode === "legacy") {
      const r = compactMessages(messages, { compactAtPct: this.settings.lowWaterRatio + 0.05, compactBudgetThresholdPct: 0.05 }, budget, { store: this.store, counter: this.counter });
      const tokensAfter = this.#measure.all(r.messages);
      const status = tokensAfter <= budget ? "ok" : "budget_infeasible";
      this.#emit({ type: "compaction_result", tier, mode, status, tokensBefore, tokensAfter, budget, epoch, newEpoch: true, durationMs: this.#now() - started });
      return { ...base, messages: r.messages, canonical: r.messages, status, tokensAfter, stages: [], refs: r.refs };
    }
    const w = await this.#stages(messages, tokensBefore, budget, tier, options.deadline, started);
    this.#keepThinkingOpener(w, messages, budget);
    let tokensAfter = w.total;
    // Estimates are within a few percent; near the budget the exact count decides, and where it
    // is over, stage 4 runs again against the budget scaled by how far the estimate was off.
    if (tokensAfter > 0.9 * budget) tokensAfter = this.#measure.exact(w.msgs);
    for (let retry = 0; retry < 2 && tokensAfter > budget; retry++) {
      const scaled = Math.max(1, Math.floor((budget * w.total) / tokensAfter) - 8);
      await this.#merge(w, scaled);
      tokensAfter = this.#measure.exact(w.msgs);
    }
    const status = tokensAfter <= budget ? "ok" : "budget_infeasible";
    const critical = status === "ok" ? 0 : this.#measure.exact(this.#criticalSet(w.msgs, w.classes));
    const result = {
      ...base, messages: w.msgs, canonical: w.msgs, status, tokensAfter, stages: w.stages, refs: w.refs,
      ...(status === "budget_infeasible" ? { infeasible: { criticalTokens: critical, budget } } : {}),
    } as const;
    if (w.compacted > this.settings.churnWarnAt) this.#emit({ type: "churn_warning", compacted: w.compacted, limit: this.settings.churnWarnAt });
    this.#emit({ type: "compaction_result", tier, mode, status, tokensBefore, tokensAfter, budget, epoch, newEpoch: true, durationMs: this.#now() - started });
    return result;
  }

  /**
   * The payload of a memory-extraction call (seed 003's `_extract_memory`), bounded by
   * summarisation, not truncation: tool-call arguments appear as their minimal arguments
   * (never document-sized written content), tool results as their observations, text as it is;
   * if that is still over `targetTokens`, the summariser brings it within (the original is
   * offloaded with a ref). Background work: with less than `deadlineReserveMs` left it is
   * skipped, so extraction never takes the critical path's time.
   */
  async extractionPayload(messages: readonly Message[], options: { targetTokens: number; deadline?: CompactCallOptions["deadline"] }): Promise<{ text: string; tokens: number; skipped?: "deadline"; ref?: string }> {
    options = optionsObject(options, "{ targetTokens, deadline? }") as typeof options;
    checkBudget(options.targetTokens, "options.targetTokens");
    checkDeadline(options.deadline);
    this.#summarizerDown = false;
    const d = options.deadline;
    const left = d === undefined ? Infinity : typeof d === "number" ? d - this.#now() : d.remainingMs;
    if (left < this.settings.deadlineReserveMs) return { text: "", tokens: 0, skipped: "deadline" };
    const steps = new Map(this.#reducer.restartNumbering().reduceMessages(messages).filter((x) => x.callId !== undefined).map((x) => [x.callId!, x]));
    const lines: string[] = [];
    for (const m of messages) {
      for (const p of m.parts) {
        if (p.type === "text") lines.push(`${m.role}: ${p.text}`);
        else if (p.type === "tool-call") lines.push(`${m.role} called ${p.name}(${JSON.stringify(steps.get(p.id)?.minimalArgs ?? {})})`);
        else if (p.type === "tool-result") lines.push(`result: ${steps.get(p.callId)?.observation ?? "(no observation)"}`);
      }
    }
    const text = lines.join("\n");
    const tokens = this.#measure.text(text);
    if (tokens <= options.targetTokens) return { text, tokens };
    const summary = await this.#summarize(text, options.targetTokens, "memory-extraction");
    return { text: summary.text, tokens: this.#measure.text(summary.text), ref: summary.ref };
  }

  /** The critical messages and, for a critical message that calls tools, the results it needs (provider rules). */
  #criticalSet(msgs: readonly Message[], classes: readonly MessageClass[]): Message[] {
    const calls = new Set<string>();
    msgs.forEach((m, i) => {
      if (classes[i] === "critical") for (const p of m.parts) if (p.type === "tool-call") calls.add(p.id);
    });
    return msgs.filter((m, i) => classes[i] === "critical" || m.parts.some((p) => p.type === "tool-result" && calls.has(p.callId)));
  }

  #criticalTokens(msgs: readonly Message[], classes: readonly MessageClass[]): number {
    return this.#measure.all(this.#criticalSet(msgs, classes));
  }

  /** Runs stages 1–4 until the total is at or below the target (the low-water mark). */
  async #stages(messages: readonly Message[], total: number, budget: number, tier: Tier, deadline: CompactCallOptions["deadline"], started: number): Promise<Work> {
    const s = this.settings;
    const msgs = [...messages];
    const w: Work = {
      msgs, classes: classify(msgs), total, target: Math.floor(s.lowWaterRatio * budget),
      refs: [], stages: [], compacted: 0, steps: this.#reduceSteps(msgs),
    };
    const remaining = () => (deadline === undefined ? Infinity : typeof deadline === "number" ? deadline - this.#now() : deadline.remainingMs - (this.#now() - started));
    const preserve = tier === "critical" ? Math.min(1, s.preserveRecentSteps) : s.preserveRecentSteps;
    const stages: [StageReport["stage"], StageReport["name"], () => Promise<void> | void, boolean][] = [
      [1, "tool_args", () => this.#toolArgs(w, this.#tailStart(w, preserve)), true],
      [2, "tool_outputs", () => this.#toolOutputs(w, this.#tailStart(w, preserve)), true],
      [3, "historical_text", () => this.#historical(w, this.#tailStart(w, preserve)), false],
      [4, "merge_oldest", () => this.#merge(w, budget), false],
    ];
    // When even the best case of stages 1 and 2 leaves the request above the target and stage 3
    // will run, their work would be superseded: stage 3 replaces every old step (arguments and
    // outputs included, stored whole) by the step summary. They are then skipped as no_gain.
    const superseded = remaining() >= s.deadlineReserveMs && this.#bestCaseTraceSavings(w, this.#tailStart(w, preserve)) < w.total - w.target;
    for (const [stage, name, run, essential] of stages) {
      if (w.total <= w.target) break;
      if (stage === 4 && w.total <= s.hardRatio * budget) break; // only above hard
      const before = w.total;
      const t0 = this.#now();
      const report: StageReport = { stage, name, candidateCount: 0, compacted: 0, skipped: {}, tokensBefore: before, tokensAfter: before, durationMs: 0 };
      w.stages.push(report);
      if (!essential && remaining() < s.deadlineReserveMs) {
        report.skipped.deadline = 1;
      } else if (superseded && stage <= 2) {
        report.skipped.no_gain = 1;
      } else {
        this.#report = report;
        await run();
        this.#report = undefined;
      }
      report.tokensAfter = w.total;
      report.durationMs = this.#now() - t0;
      this.#emit({ type: "compaction_stage", tier, ...report });
    }
    return w;
  }

  #report: StageReport | undefined;

  /**
   * An upper bound of what stages 1 and 2 can save: every tool-trace message before the tail
   * shrunk to 40 tokens a part (a replacement is an observation or minimal arguments plus a ref,
   * rarely less).
   */
  #bestCaseTraceSavings(w: Work, tail: number): number {
    let saving = 0;
    for (let i = 0; i < tail; i++) {
      if (w.classes[i] !== "tool_trace") continue;
      const m = w.msgs[i];
      const trace = m.parts.filter((p) => p.type === "tool-call" || p.type === "tool-result").length;
      saving += Math.max(0, this.#measure.of(m) - 40 * Math.max(1, trace));
    }
    return saving;
  }

  #skip(reason: SkipReason, n = 1): void {
    if (this.#report) this.#report.skipped[reason] = (this.#report.skipped[reason] ?? 0) + n;
  }

  /**
   * Where the preserved tail starts: the call message of the `keep`-th step from the end (the
   * latest assistant/tool exchange and the ones before it stay whole in stages 1–3).
   */
  #tailStart(w: Work, keep: number): number {
    const calls: number[] = [];
    let criticalCall = w.msgs.length;
    w.msgs.forEach((m, i) => {
      if (m.role === "assistant" && m.parts.some((p) => p.type === "tool-call")) {
        calls.push(i);
        // A critical message that calls tools (the latest assistant text) keeps its exchange whole.
        if (w.classes[i] === "critical" && criticalCall === w.msgs.length) criticalCall = i;
      }
    });
    const byCount = keep === 0 ? w.msgs.length : calls.length >= keep ? calls[calls.length - keep] : calls.length > 0 ? calls[0] : w.msgs.length;
    return Math.min(byCount, criticalCall);
  }

  #replace(w: Work, i: number, parts: Part[]): void {
    const old = w.msgs[i];
    const next: Message = { ...old, parts };
    w.total += this.#measure.of(next) - this.#measure.of(old);
    w.msgs[i] = next;
    w.compacted++;
    if (this.#report) this.#report.compacted++;
  }

  #memoGet(key: string): Replacement | undefined {
    const hit = this.#memo.get(key);
    if (hit !== undefined) this.#skip("cache_hit");
    return hit;
  }

  #memoSet(key: string, value: Replacement): void {
    if (this.#memo.size >= kMemoEntries) this.#memo.delete(this.#memo.keys().next().value!);
    this.#memo.set(key, value);
  }

  /** Stage 1: long tool-call arguments become their minimal arguments plus the ref of the original. */
  #toolArgs(w: Work, tail: number, includeCritical = false): void {
    const s = this.settings;
    const reduced = new Map(w.steps.filter((x) => x.callId !== undefined).map((x) => [`${x.callMessage}:${x.callId}`, x]));
    for (let i = 0; i < w.msgs.length && w.total > w.target; i++) {
      const m = w.msgs[i];
      if (!m.parts.some((p) => p.type === "tool-call")) continue;
      if (i >= tail || (w.classes[i] === "critical" && !includeCritical)) {
        this.#skip("policy_preserve");
        continue;
      }
      let changed = false;
      const parts = m.parts.map((p) => {
        if (p.type !== "tool-call") return p;
        report(this.#report);
        if (this.#measure.text(p.args) <= s.argTokens) {
          this.#skip("no_gain");
          return p;
        }
        const key = `${hashToHex(hashText(p.args))}:args:${s.argTokens}`;
        let args = this.#memoGet(key);
        if (args === undefined) {
          const ref = this.store.put(p.args, { kind: "args", ext: "json" });
          const minimal = reduced.get(`${i}:${p.id}`)?.minimalArgs ?? {};
          args = { text: JSON.stringify({ ...minimal, _ctxfold: `arguments offloaded: ${ref}` }), ref };
          this.#memoSet(key, args);
        }
        w.refs.push(args.ref);
        changed = true;
        return { ...p, args: args.text } satisfies ToolCallPart;
      });
      if (changed) this.#replace(w, i, parts);
    }
  }

  /** Stage 2: tool outputs, oldest first, become the step's observation plus the ref of the original. */
  #toolOutputs(w: Work, tail: number): void {
    const s = this.settings;
    // The observations were made once, from the original outputs (w.steps); a result whose step
    // is not there (its call was compacted away) is reduced on its own.
    const reduced = new Map<string, ReducedStep>();
    for (const st of w.steps) if (st.callId !== undefined && st.resultMessage !== undefined) reduced.set(`${st.resultMessage}:${st.callId}`, st);
    let calls: Map<string, { name: string; args: string }> | undefined;
    for (let i = 0; i < w.msgs.length && w.total > w.target; i++) {
      const m = w.msgs[i];
      if (!m.parts.some((p) => p.type === "tool-result")) continue;
      if (i >= tail || w.classes[i] === "critical") {
        this.#skip("policy_preserve");
        continue;
      }
      let changed = false;
      const parts = m.parts.map((p) => {
        if (p.type !== "tool-result") return p;
        report(this.#report);
        const { data, json } = resultPayload(p.content);
        if (data.startsWith("[ctxfold]") || this.#measure.text(resultText(p.content)) <= s.outputTokens) {
          this.#skip("no_gain");
          return p;
        }
        const replacement = this.#observation(p, data, json, () => {
          const step = reduced.get(`${i}:${p.callId}`);
          if (step) return step;
          calls ??= new Map(extractSteps(w.msgs).steps.map(({ call }) => [call.id, { name: call.name, args: call.args }]));
          const call = calls.get(p.callId) ?? { name: p.name ?? "unknown_tool", args: "{}" };
          return this.#reducer.reduce(call.name, call.args, p.content, { isError: p.isError });
        });
        w.refs.push(replacement.ref);
        changed = true;
        const content: ResultContentPart[] = [{ type: "text", text: replacement.text }];
        return { ...p, content };
      });
      if (changed) this.#replace(w, i, parts);
    }
  }

  /** A tool output's stage-2 replacement: its step's observation plus the ref of the output (memoised). */
  #observation(p: ToolResultPart, data: string, json: unknown, step: () => ReducedStep): Replacement {
    const key = `${hashToHex(hashText(data))}:output:${this.settings.outputTokens}:${p.callId}`;
    let replacement = this.#memoGet(key);
    if (replacement === undefined) {
      const st = step();
      const ref = this.store.put(data, { kind: "output", ext: json ? "json" : "txt" });
      const text = `[ctxfold] ${st.observation}${st.success ? "" : ` (failed: ${st.error ?? "error"}; call ${p.callId})`}\n${refLine("full output", ref)}`;
      replacement = { text, ref };
      this.#memoSet(key, replacement);
    }
    return replacement;
  }

  /**
   * Extended thinking (Anthropic): a tool-use turn in progress must open with its thinking. When
   * the stages removed the input's opener of that turn (its first assistant message, opening with
   * signed thinking) and the output's turn now opens without thinking (THINKING_DROPPED), the
   * opener goes back where the output's turn starts, whole (its thinking must be sent unmodified),
   * with its results as their observations and refs. Left as it was when the opener's calls or
   * results are still elsewhere in the output, or when putting it back would take the output
   * above the soft threshold.
   */
  #keepThinkingOpener(w: Work, input: readonly Message[], budget: number): void {
    if (!usesThinking(input)) return;
    // Whether or not the turn is in progress yet: the agent's next call will make it so.
    const at = turnInProgressOpener(input, { evenIfDone: true });
    if (at < 0 || !isSignedReasoning(input[at].parts[0]) || w.msgs.includes(input[at])) return;
    const into = turnInProgressOpener(w.msgs, { evenIfDone: true });
    if (into < 0 || isSignedReasoning(w.msgs[into].parts[0])) return;
    const opener = input[at];
    const ids = new Set(opener.parts.flatMap((p) => (p.type === "tool-call" ? [p.id] : [])));
    if (w.msgs.some((m) => m.parts.some((p) => (p.type === "tool-call" || p.type === "tool-result") && ids.has(p.type === "tool-call" ? p.id : p.callId)))) return;
    const results: Message[] = [];
    for (let i = at + 1; i < input.length && input[i].role === "tool"; i++) results.push(input[i]);
    const answered = new Set(results.flatMap((m) => m.parts.flatMap((p) => (p.type === "tool-result" ? [p.callId] : []))));
    if ([...ids].some((id) => !answered.has(id))) return;
    const calls = new Map(opener.parts.flatMap((p) => (p.type === "tool-call" ? [[p.id, p] as const] : [])));
    const refsBefore = w.refs.length;
    const shortened = results.map((m) => {
      let changed = false;
      const parts = m.parts.map((p) => {
        if (p.type !== "tool-result") return p;
        const { data, json } = resultPayload(p.content);
        if (data.startsWith("[ctxfold]") || this.#measure.text(resultText(p.content)) <= this.settings.outputTokens) return p;
        const call = calls.get(p.callId)!;
        const replacement = this.#observation(p, data, json, () => this.#reducer.reduce(call.name, call.args, p.content, { isError: p.isError }));
        w.refs.push(replacement.ref);
        changed = true;
        return { ...p, content: [{ type: "text", text: replacement.text }] as ResultContentPart[] };
      });
      return changed ? { ...m, parts } : m;
    });
    const msgs = [...w.msgs.slice(0, into), opener, ...shortened, ...w.msgs.slice(into)];
    const total = this.#measure.all(msgs);
    // Only within the soft threshold: above it the output would not be a fixed point (compacting
    // it again would change it) and could miss the budget; there the gap stays.
    if (total > this.settings.softRatio * budget) {
      w.refs.length = refsBefore;
      return;
    }
    w.msgs = msgs;
    w.classes = classify(msgs);
    w.total = total;
    w.steps = this.#reduceSteps(msgs);
  }

  /** Stage 3: old steps grouped into one summary (seed 000), then long historical text summarised. */
  async #historical(w: Work, tail: number): Promise<void> {
    const s = this.settings;
    const recent = w.steps.filter((x) => (x.callMessage ?? x.resultMessage ?? 0) >= tail).length;
    const oldSteps = w.steps.length - recent;
    if (oldSteps > 0) {
      report(this.#report, oldSteps);
      let stepCompactor = this.#stepCompactors.get(recent);
      if (!stepCompactor) this.#stepCompactors.set(recent, (stepCompactor = new StepCompactor({ ...(s.stepPreset ? presetConfig(s.stepPreset) : {}), recentWindow: recent })));
      const r = compactStepMessages(w.msgs, { steps: w.steps, force: true, compactor: stepCompactor, reducer: (this.#storeReducer ??= new StepReducer({ store: this.store })) });
      if (r.compacted) {
        w.msgs.splice(0, w.msgs.length, ...r.messages);
        w.classes = classify(w.msgs);
        w.total = this.#measure.all(w.msgs);
        w.steps = this.#reduceSteps(w.msgs);
        if (r.removedRef) w.refs.push(r.removedRef, ...(r.removedRefs ?? []));
        w.compacted += oldSteps;
        if (this.#report) this.#report.compacted += oldSteps;
      }
    }
    const tailNow = this.#tailStart(w, Math.min(1, s.preserveRecentSteps));
    for (let i = 0; i < w.msgs.length && w.total > w.target; i++) {
      if (w.classes[i] !== "historical_context" && w.classes[i] !== "background_extraction") continue;
      if (i >= tailNow) {
        this.#skip("policy_preserve");
        continue;
      }
      const m = w.msgs[i];
      let changed = false;
      const parts: Part[] = [];
      for (const p of m.parts) {
        if (p.type !== "text" || isStepSummaryPart(p)) {
          parts.push(p);
          continue;
        }
        report(this.#report);
        const tokens = this.#measure.text(p.text);
        if (tokens <= s.textTokens) {
          this.#skip("no_gain");
          parts.push(p);
          continue;
        }
        const target = Math.max(40, Math.floor(tokens * s.textRatio));
        const summary = await this.#summarize(p.text, target, `text:${m.role}`);
        parts.push({ ...p, text: summary.text });
        w.refs.push(summary.ref);
        changed = true;
      }
      if (changed) this.#replace(w, i, parts);
    }
  }

  /** Stage 3's step compactors, by how many recent steps stay whole (validated once each). */
  readonly #stepCompactors = new Map<number, StepCompactor>();

  #summarizerDown = false;

  /** A summary of `text` within `target` tokens plus the ref of the original (memoised). */
  async #summarize(text: string, target: number, label: string): Promise<Replacement> {
    const key = `${hashToHex(hashText(text))}:${target}:${label}`;
    const hit = this.#memoGet(key);
    if (hit !== undefined) return hit;
    const ref = this.store.put(text, { kind: "text", ext: "txt" });
    const room = Math.max(1, target - this.#measure.text(refLine("original", ref)) - 1);
    let summary: string | undefined;
    const custom: Summarizer | undefined = this.#summarizerDown ? undefined : this.#config.summarizer;
    if (custom) {
      try {
        const answer = await withTimeout(Promise.resolve().then(() => custom(text, room, label)), this.settings.summarizerTimeoutMs);
        if (typeof answer === "string" && answer.trim() && this.#measure.text(answer) <= room) summary = answer.trim();
        else this.#emit({ type: "summarizer_fallback", label, reason: typeof answer === "string" && answer.trim() ? "over target" : "empty answer" });
      } catch (err) {
        // A summariser that fails or times out is not asked again in this call: one wait, not one per part.
        this.#summarizerDown = true;
        this.#emit({ type: "summarizer_fallback", label, reason: err instanceof Error ? err.message : String(err) });
      }
    }
    summary ??= summarizeExtractive(text, room, label, this.counter);
    const out = { text: `${summary}\n${refLine("original", ref)}`, ref };
    this.#memoSet(key, out);
    return out;
  }

  /**
   * Stage 4 (above hard only): the oldest context between the critical head (system prompt and
   * task) and the latest exchange is merged into one summary message, originals stored whole;
   * critical messages in between stay. If that is still not enough, the latest tool outputs
   * are summarised (with refs) — never dropped.
   */
  async #merge(w: Work, budget: number): Promise<void> {
    const s = this.settings;
    const head = w.msgs.findIndex((m) => m.role === "user") + 1;
    const tail = this.#tailStart(w, 1);
    const middle: number[] = [];
    for (let i = Math.max(head, 0); i < tail; i++) if (w.classes[i] !== "critical") middle.push(i);
    report(this.#report, middle.length);
    if (middle.length > 0) {
      // A step summary that stage 3 merged into a critical message before the tail (ours, not
      // the caller's text) is merged too: its text with the rest, and the originals it names
      // listed where it stood, so that the merge's one index names everything before the tail.
      const gone = new Set(middle);
      const items: (Message | string)[] = [];
      const texts: string[] = [];
      for (let i = 0; i < tail; i++) {
        if (gone.has(i)) {
          items.push(w.msgs[i]);
          texts.push(...messageTexts([w.msgs[i]]));
          continue;
        }
        const m = w.msgs[i];
        const at = w.classes[i] === "critical" && m.parts.length > 1 ? m.parts.findIndex(isStepSummaryPart) : -1;
        const summaryRef = at >= 0 ? stepSummaryRef((m.parts[at] as { text: string }).text) : undefined;
        if (summaryRef === undefined) continue;
        items.push(...indexedRefs(this.store, summaryRef));
        texts.push((m.parts[at] as { text: string }).text);
        this.#replace(w, i, m.parts.filter((_, k) => k !== at));
        // Its index is superseded by the merge's, which names the same messages.
        w.refs = w.refs.filter((r) => r !== summaryRef);
      }
      const { ref, refs } = putMessages(this.store, items);
      w.refs.push(ref, ...refs.filter((_, k) => typeof items[k] !== "string"));
      const text = texts.join("\n");
      // Failures stay visible through the merge: each failed step's call id and error head
      // (from the steps, and from the failure lines of an earlier step summary) on a line of its own.
      const failures: string[] = [];
      for (const st of w.steps) {
        const at = st.resultMessage ?? st.callMessage;
        if (!st.success && at !== undefined && gone.has(at)) failures.push(`${st.callId ?? st.id} (${st.error ?? "failed"})`);
      }
      for (const line of text.split("\n")) {
        const m = /\(failed calls: (.*)\)$/.exec(line.trim());
        if (m) failures.push(...m[1].split(", "));
      }
      const failLine = failures.length === 0 ? "" : `\nFailed: ${[...new Set(failures)].slice(0, 20).join("; ")}${failures.length > 20 ? `; +${failures.length - 20} more` : ""}`;
      const target = Math.min(s.mergeTokens, Math.max(60, Math.floor((budget - this.#criticalTokens(w.msgs, w.classes)) / 4)));
      const summary = (await this.#summarize(text, target, "merge")).text;
      const merged: Message = {
        id: `ctxfold-merge-${hashToHex(hashText(summary)).slice(0, 12)}`,
        role: "user",
        parts: [{ type: "text", text: `[Earlier context, merged: ${items.length} messages; originals: ${ref}]${failLine}\n${summary}` }],
        meta: { ctxfold: { kind: "merge", ref } },
      };
      const out: Message[] = [];
      const gapBefore: boolean[] = [];
      let gap = false;
      w.msgs.forEach((m, i) => {
        if (i === middle[0]) {
          out.push(merged);
          gapBefore.push(true);
          gap = true;
        }
        if (gone.has(i)) {
          gap = true;
          return;
        }
        out.push(m);
        gapBefore.push(gap);
        gap = false;
      });
      w.msgs.splice(0, w.msgs.length, ...mergeAdjacent(out, gapBefore));
      w.classes = classify(w.msgs);
      w.total = this.#measure.all(w.msgs);
      w.compacted += middle.length;
      if (this.#report) this.#report.compacted += middle.length;
    }
    // Still over budget: the arguments of every remaining call, the latest exchange's included
    // (a critical message's text stays; its calls' arguments are trace, not critical text)…
    if (w.total > budget) {
      const target = w.target;
      w.target = budget;
      this.#toolArgs(w, w.msgs.length, true);
      w.target = target;
    }
    // …then the remaining tool outputs, newest last, summarised within what is left.
    for (let i = 0; i < w.msgs.length && w.total > budget; i++) {
      const m = w.msgs[i];
      if (!m.parts.some((p) => p.type === "tool-result")) continue;
      const over = w.total - Math.floor(s.lowWaterRatio * budget);
      const parts: Part[] = [];
      let changed = false;
      for (const p of m.parts) {
        if (p.type !== "tool-result") {
          parts.push(p);
          continue;
        }
        const text = resultText(p.content);
        const tokens = this.#measure.text(text);
        if (tokens <= 60) {
          parts.push(p);
          continue;
        }
        // A failed output keeps its failure visible whole (call id and error head) above the
        // summary, which gets the rest of the room: an error line cut to fit is not visible.
        const failure = failureLine(p, text);
        const room = Math.max(60, tokens - over) - (failure ? this.#measure.text(failure) + 1 : 0);
        const summary = await this.#summarize(resultPayload(p.content).data, Math.max(20, room), `output:${p.name ?? "tool"}`);
        w.refs.push(summary.ref);
        parts.push({ ...p, content: [{ type: "text", text: failure ? `${failure}\n${summary.text}` : summary.text }] });
        changed = true;
      }
      if (changed) this.#replace(w, i, parts);
    }
    // Then a merged summary already in place (from an earlier pass) is summarised tighter,
    // keeping its header and failure line…
    for (let i = 0; i < w.msgs.length && w.total > budget; i++) {
      const m = w.msgs[i];
      const at = m.parts.findIndex((p) => p.type === "text" && p.text.startsWith("[Earlier context, merged"));
      if (at < 0) continue;
      const old = (m.parts[at] as { text: string }).text;
      const lines = old.split("\n");
      const head = lines[1]?.startsWith("Failed: ") ? 2 : 1;
      const body = lines.slice(head).join("\n");
      const tokens = this.#measure.text(body);
      const want = Math.max(20, tokens - (w.total - budget) - 8);
      if (want >= tokens) continue;
      const shorter = summarizeExtractive(body, want, "merge", this.counter);
      const parts = [...m.parts];
      parts[at] = { ...(m.parts[at] as { type: "text"; text: string }), text: [...lines.slice(0, head), shorter].join("\n") };
      this.#replace(w, i, parts);
    }
    // Last, a step summary that stage 3 merged into a critical message shrinks (it is ours, not
    // the caller's critical text): to its failure lines and refs, then to the failed call ids and
    // the ref of the removed messages, then to that ref alone. It never goes: that ref is how
    // the messages it stands for are reached from the output (where there was a middle to
    // merge, the merge above took it in, with them); the budget may then be infeasible.
    for (const keep of [/✗|\(failed calls|\(removed messages|earlier steps omitted/, /\(failed calls|\(removed messages/, /\(removed messages/]) {
      for (let i = 0; i < w.msgs.length && w.total > budget; i++) {
        const m = w.msgs[i];
        const at = m.parts.findIndex(isStepSummaryPart);
        if (at < 0) continue;
        const old = (m.parts[at] as { text: string }).text;
        const kept = old.split("\n").filter((l, k) => k === 0 || keep.test(l)).join("\n");
        if (kept.length >= old.length) continue;
        const parts = [...m.parts];
        parts[at] = { ...(m.parts[at] as { type: "text"; text: string }), text: kept };
        this.#replace(w, i, parts);
      }
    }
  }
}

/** The tool-call part `id` names, searched backwards from message `at` (at most 64 messages). */
function callOf(messages: readonly Message[], at: number, id: string): { part: ToolCallPart; at: number } | undefined {
  for (let i = at - 1; i >= 0 && i >= at - 64; i--) {
    if (messages[i].role !== "assistant") continue;
    for (const p of messages[i].parts) if (p.type === "tool-call" && p.id === id) return { part: p, at: i };
  }
  return undefined;
}

/**
 * For a tool result that failed (flagged as an error, reads as a failure, or reports a non-zero
 * exit code): one line naming its call and its error head, kept whole wherever the result is
 * shortened to fit. Undefined for a result that did not fail.
 */
function failureLine(p: { callId: string; isError?: boolean }, text: string): string | undefined {
  const json = parseJsonOutput(text);
  const code = extractExitCode(text, json);
  if (!isFailedOutput(text, json, p.isError, code)) return undefined;
  const head = errorHead(text);
  return `[ctxfold] call ${p.callId} failed${code ? ` (exit ${code})` : ""}${head ? `: ${head}` : ""}`;
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

function report(r: StageReport | undefined, n = 1): void {
  if (r) r.candidateCount += n;
}

function checkBudget(budget: unknown, path = "options.budget"): void {
  if (typeof budget !== "number" || !Number.isInteger(budget) || budget <= 0) throw badValueError(path, "a positive integer token budget", budget);
}

/** An epoch-ms deadline, or `{ remainingMs }`; a NaN or a non-number would silently mean no deadline. */
function checkDeadline(deadline: unknown, path = "options.deadline"): void {
  if (deadline === undefined || (typeof deadline === "number" && !Number.isNaN(deadline))) return;
  if (typeof deadline !== "object" || deadline === null) throw badValueError(path, "an epoch-ms number or { remainingMs }", deadline);
  const ms = (deadline as { remainingMs?: unknown }).remainingMs;
  if (typeof ms !== "number" || Number.isNaN(ms)) throw badValueError(`${path}.remainingMs`, "a number of milliseconds", ms);
}

/** A compact call's options, checked before any of them is read. */
function checkCallOptions(options: unknown): CompactCallOptions {
  const o = optionsObject(options, "{ budget, format?, deadline? }");
  checkBudget(o.budget);
  checkDeadline(o.deadline);
  return o as unknown as CompactCallOptions;
}

/**
 * One conversation across calls (issue 6, item 8): compaction works in epochs. A call whose
 * messages extend the previous call's (same message objects, or same ids and content, plus new
 * ones at the end) appends the new messages to the current epoch's output, so the rendered
 * prefix is byte-identical to the previous call's and provider prompt caches keep hitting;
 * only when that crosses the soft threshold does a new epoch compact the whole conversation
 * down to the low-water mark. Measurements are memoised per message, so appending one step
 * costs O(new parts).
 */
export class CompactorSession {
  #epoch = 0;
  /** The input messages the current epoch covers, and their compacted form. */
  #base: Message[] = [];
  #output: Message[] = [];
  #format: Format | undefined;

  constructor(readonly compactor: Compactor) {}

  /** How far into #base idle-time preparation has got, and its pending callback. */
  #prepared = 0;
  #idle: { unref?: () => unknown } | undefined;

  /**
   * Schedules Compactor.prepare over the messages appended since the epoch, in slices, after the
   * current call returns (settings.idlePrepare). A runner awaiting its model gives it the time;
   * one that calls back to back leaves it to the epoch. Failures are left to the epoch too,
   * which does the same work and reports them.
   */
  #schedulePrepare(): void {
    if (!this.compactor.settings.idlePrepare || this.#idle !== undefined || this.#prepared >= this.#base.length) return;
    this.#idle = kIdle(() => {
      this.#idle = undefined;
      try {
        this.#prepared = this.compactor.prepare(this.#base, this.#prepared);
      } catch {
        this.#prepared = this.#base.length;
      }
      this.#schedulePrepare();
    });
    this.#idle.unref?.();
  }

  get epoch(): number {
    return this.#epoch;
  }

  /** compact() with epochs; input in a provider format or canonical. */
  async compact(input: unknown, options: CompactCallOptions): Promise<CompactResult> {
    const checked = checkCallOptions(options);
    const { format, messages } = this.compactor.parse(input, checked.format ?? this.#format);
    this.#format = format;
    const r = await this.compactCanonical(messages, checked);
    return { ...r, format, messages: renderMessages(r.canonical, format) };
  }

  /** The epoch logic on canonical messages. */
  async compactCanonical(messages: readonly Message[], options: CompactCallOptions): Promise<Omit<CompactResult, "format">> {
    options = checkCallOptions(options);
    const c = this.compactor;
    const ok = (canonical: Message[], tokensBefore: number, tokensAfter: number): Omit<CompactResult, "format"> => ({
      messages: canonical, canonical, status: "ok", tier: "normal", mode: c.settings.mode, budget: options.budget,
      tokensBefore, tokensAfter, epoch: this.#epoch, stages: [], refs: [...this.#refs],
    });
    if (this.#extends(messages)) {
      // Appending: O(new messages) — their tokens join the running totals.
      const appended = messages.slice(this.#base.length);
      const added = appended.length > 0 ? c.measure(appended) - c.measure([]) : 0;
      if (c.tier(this.#outputTokens + added, options.budget) === "normal") {
        for (const m of appended) {
          this.#base.push(m);
          this.#output.push(m);
        }
        this.#baseTokens += added;
        this.#outputTokens += added;
        this.#schedulePrepare();
        c.noteSkip(this.#outputTokens, options.budget);
        return ok([...this.#output], this.#baseTokens, this.#outputTokens);
      }
    }
    const tokensBefore = c.measure(messages);
    if (c.tier(tokensBefore, options.budget) === "normal") {
      this.#base = [...messages];
      this.#output = [...messages];
      this.#refs = [];
      this.#baseTokens = this.#outputTokens = tokensBefore;
      this.#prepared = 0;
      this.#schedulePrepare();
      c.noteSkip(tokensBefore, options.budget);
      return ok([...messages], tokensBefore, tokensBefore);
    }
    this.#epoch++;
    const r = await c.compactCanonical(messages, options, this.#epoch);
    this.#base = [...messages];
    // The epoch did every message's work; what it kept whole is prepared when next removed.
    this.#prepared = this.#base.length;
    this.#output = [...r.canonical];
    this.#refs = [...r.refs];
    this.#baseTokens = tokensBefore;
    this.#outputTokens = c.measure(r.canonical);
    return r;
  }

  #baseTokens = 0;
  #outputTokens = 0;
  /** The refs of the current epoch's compaction: every later call's output still holds its replacements. */
  #refs: string[] = [];

  /** Whether `messages` starts with the messages the current epoch covers. */
  #extends(messages: readonly Message[]): boolean {
    const base = this.#base;
    if (base.length === 0 || messages.length < base.length) return false;
    // The same message objects (a runner appending to its list) compare by identity; parsed
    // provider input gives new objects, compared by id and content.
    for (let i = 0; i < base.length; i++) {
      const a = base[i];
      const b = messages[i];
      if (a !== b && (a.id !== b.id || !jsonEqual(a, b))) return false;
    }
    return true;
  }
}

/** Runs `f` once the event loop is idle (setImmediate on Node; a zero timeout elsewhere). */
const kIdle: (f: () => void) => { unref?: () => unknown } = typeof setImmediate === "function" ? (f) => setImmediate(f) : (f) => setTimeout(f, 0);

/** The default entry point: `createCompactor(config).compact(messages, { budget, format?, deadline? })`. */
export function createCompactor(config: CompactorConfig = {}): Compactor {
  return new Compactor(config);
}
