import { kFormats, parseMessages, renderMessages, type Format } from "../adapters/index.js";
import type { Message } from "../model/schema.js";
import { compactMessages } from "../block/legacy.js";
import { createMemoryStore, type OffloadStore } from "../store/index.js";
import { providerOf, tokenMeasure, type TokenMeasure } from "../tokens/measure.js";
import { StepReducer } from "../steps/reducer.js";
import { kDefaultEncoding, TokenCounter } from "../tokens/token-counter.js";
import { resolveTieredSettings, type CompactorConfig, type TieredSettings } from "./config.js";
import type { PolicyEvent } from "./events.js";
import { extractionPayload, type ExtractionOptions, type ExtractionPayload } from "./extraction.js";
import { messageFacts } from "./relevance/ledger-facts.js";
import { checkCallOptions } from "./options.js";
import { runPipeline } from "./pipeline.js";
import { hintedBudget, placeRecallHint, recallHintText } from "./recall-hint.js";
import { RedactingStore } from "./redacting-store.js";
import { nextTurn } from "../event-loop.js";
import { CompactorSession, type EpochCarry, type EpochHost } from "./session.js";
import { addEvent, newCompactionStats, type CompactionStats } from "./telemetry.js";
import { ReplacementMemo } from "./replacement-memo.js";
import { StepCache } from "./step-cache.js";
import { primeRun } from "./prime-run.js";
import type { AnthropicForm, ArrayFormat, CanonicalResult, CompactCallOptions, CompactResult, Tier } from "./types.js";
import { StageKit, type KitServices } from "./work.js";

/** The thread's warm-up compactions (see Compactor.warmup), started by the first warm-up. */
let primed: Promise<void> | undefined;

/** Steps of the prime run each warm-up call compacts: a first whole compaction, then a session growing past it. */
export const kPrimeSteps = [10, 11, 12, 13, 14, 16, 18];

/**
 * The warm-up's budgets, a session each: under both, the prime run's first call (already past
 * the budget) compacts it whole, the next steps append to that epoch, and a long file read
 * starts another. They end far under the budget, so the exact counter is primed apart (prime).
 */
export const kPrimeBudgets = [9000, 4000];

/** Steps of the prime run each other format's warm-up session compacts: an epoch, then an append. */
export const kPrimeFormatSteps = [10, 11];

/**
 * Compacts the prime run as a growing session at a budget its later prompts exceed, then as a
 * short session in each other format (kFormats), so a first call in the format an integration
 * speaks does not compile that format's validators and renderers either; then counts each of
 * its messages exactly, since compactions that end far enough under the budget never do, and a
 * first exact count in the real call would run the counter's code uncompiled (measured: 6.6 ms
 * for 9.5k chars against 1.7 ms). Errors are swallowed (a warm-up never fails a caller).
 */
async function prime(config: CompactorConfig & { counter: TokenCounter }): Promise<void> {
  try {
    const compactor = new Compactor(config);
    for (const budget of kPrimeBudgets) {
      const session = compactor.session();
      for (const steps of kPrimeSteps) {
        await nextTurn();
        await session.compact(primeRun(steps), { format: "openai-chat", budget });
      }
    }
    const budget = kPrimeBudgets[kPrimeBudgets.length - 1];
    for (const format of kFormats) {
      if (format === "openai-chat") continue;
      const session = compactor.session();
      for (const steps of kPrimeFormatSteps) {
        await nextTurn();
        const run = renderMessages(parseMessages(primeRun(steps), { format: "openai-chat" }).messages, format);
        await session.compact(run, { format, budget });
      }
    }
    await nextTurn();
    for (const m of primeRun(kPrimeSteps[kPrimeSteps.length - 1])) config.counter.exact(JSON.stringify(m));
  } catch {
    // A warm-up that fails leaves the first call as cold as it was, nothing worse.
  }
}

/**
 * The tiered compactor, ctxfold's default: deterministic classification, pressure tiers, staged
 * lazy compaction re-measured after each stage (the pipeline: tool arguments, tool outputs,
 * history, merge of the oldest context), memoisation with skip reasons, deadline awareness,
 * summarisers with an extractive fallback, and epochs for prompt-cache stability (see
 * `session()`). `mode: "legacy"` runs the three-level legacy strategy of block compaction instead.
 */
export class Compactor {
  readonly settings: TieredSettings;
  /** Where removed and shortened originals go: the configured store (seen through a redacting view under `redactOffload`). */
  readonly store: OffloadStore;
  readonly counter: TokenCounter;
  readonly #config: CompactorConfig;
  readonly #measure: TokenMeasure;
  readonly #steps = new StepCache();
  readonly #services: KitServices;
  readonly #stats = newCompactionStats();
  /** What the sessions of this compactor use of it. */
  readonly #host: EpochHost;

  constructor(config: CompactorConfig = {}) {
    this.settings = resolveTieredSettings(config);
    this.#config = config;
    const store = config.store ?? createMemoryStore();
    this.store = this.settings.redactOffload ? new RedactingStore(store) : store;
    this.counter = config.counter ?? new TokenCounter({ encoding: kDefaultEncoding });
    this.#measure = tokenMeasure(this.counter);
    this.#services = {
      settings: this.settings,
      store: this.store,
      counter: this.counter,
      steps: this.#steps,
      summarizer: config.summarizer,
      emit: (e) => this.#emit(e),
      memo: new ReplacementMemo(),
      stepCompactors: new Map(),
      storeReducer: new StepReducer({ store: this.store }),
    };
    this.#host = {
      settings: this.settings,
      measure: (messages, format) => this.#measureOf(format).all(messages),
      tier: (tokens, budget) => this.tier(tokens, budget),
      skipped: (tokens, budget) => this.#emit({ type: "compaction_skipped", reason: "no_pressure", tier: "normal", tokens, budget }),
      emit: (e) => this.#emit(e),
      compactEpoch: (messages, options, epoch, carry) => this.#compact(messages, options, epoch, carry),
      prepare: (messages, from, sliceMs) => {
        const to = this.#steps.prepare(messages, from, sliceMs);
        // The ledger's facts of each message too (memoised on it): the epoch then only ranks them.
        if (this.settings.ledgerRatio > 0) for (let i = from; i < to; i++) messageFacts(messages[i]);
        return to;
      },
    };
  }

  #now(): number {
    return (this.#config.now ?? Date.now)();
  }

  #emit(e: PolicyEvent): void {
    addEvent(this.#stats, e);
    this.#config.onEvent?.(e);
  }

  /** The run aggregates over every call of this compactor (its sessions included). */
  stats(): CompactionStats {
    return structuredClone(this.#stats);
  }

  /**
   * Estimated tokens of canonical messages as a request (memoised per message), with the
   * overheads of `format`'s provider (the counter's provider when no format is given).
   */
  measure(messages: readonly Message[], format?: Format): number {
    return this.#measureOf(format).all(messages);
  }

  /** The measure of `format`'s provider (see providerOf), or of the counter's. */
  #measureOf(format: Format | undefined): TokenMeasure {
    return format === undefined ? this.#measure : tokenMeasure(this.counter, providerOf(format));
  }

  /**
   * Readies this compactor for a latency-sensitive first call: its counter's exact table (see
   * TokenCounter.warmup), then, once per thread, a few compactions of a small synthetic agent
   * run (primeRun) by a throwaway compactor of the same settings, each a turn of the event loop
   * apart, so the first real call does not also pay the code's first runs (compiling it, the
   * regular expressions, the WASM core's first calls). Nothing of this compactor's is touched:
   * not its store, events, stats, summariser or counter memo. The integrations start it when they
   * are created; a caller of `compact()` can await it at start. Never rejects.
   */
  warmup(): Promise<void> {
    const table = this.counter.warmup().catch(() => undefined);
    primed ??= table.then(() =>
      prime({ ...this.#config, store: undefined, summarizer: undefined, onEvent: undefined, counter: new TokenCounter({ encoding: this.counter.encoding }) }),
    );
    return Promise.all([table, primed]).then(() => undefined);
  }

  /** A fresh session: epochs and measurements kept between calls over one growing conversation. */
  session(): CompactorSession {
    return new CompactorSession(this.#host);
  }

  /**
   * Compacts `input` (provider messages in any supported format, or canonical messages) to
   * `options.budget`. Stateless: each call decides from scratch (use `session()` across the
   * calls of one conversation for stable prefixes).
   */
  compact<M extends object>(input: readonly M[], options: CompactCallOptions & { format: ArrayFormat }): Promise<CompactResult<M[]>>;
  compact<M extends object>(
    input: readonly M[] | AnthropicForm<M>,
    options: CompactCallOptions & { format: "anthropic" },
  ): Promise<CompactResult<AnthropicForm<M>>>;
  compact(input: unknown, options: CompactCallOptions): Promise<CompactResult>;
  async compact(input: unknown, options: CompactCallOptions): Promise<CompactResult> {
    const checked = checkCallOptions(options);
    const { format, messages } = this.parse(input, checked.format);
    const r = await this.#compact(messages, { ...checked, format }, 0);
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
  async compactCanonical(messages: readonly Message[], options: CompactCallOptions): Promise<CanonicalResult> {
    return this.#compact(messages, checkCallOptions(options), 0);
  }

  /** See extractionPayload: a memory-extraction payload within `targetTokens`, skipped near the deadline. */
  extractionPayload(messages: readonly Message[], options: ExtractionOptions): Promise<ExtractionPayload> {
    return extractionPayload(new StageKit(this.#services, this.#measure), messages, options, this.#now());
  }

  /** One compaction of `messages` (options checked), as epoch `epoch` of a session (0 outside one), with what its previous epoch carries over. */
  async #compact(messages: readonly Message[], options: CompactCallOptions, epoch: number, carry?: EpochCarry): Promise<CanonicalResult> {
    const measure = this.#measureOf(options.format);
    const started = this.#now();
    const budget = options.budget;
    const tokensBefore = measure.all(messages);
    const tier = this.tier(tokensBefore, budget);
    const mode = this.settings.mode;
    const base = { mode, budget, tokensBefore, tier, epoch };
    const emit = carry?.emit ?? ((e: PolicyEvent) => this.#emit(e));
    if (tier === "normal") {
      // The request fits: no compactor work at all.
      emit({ type: "compaction_skipped", reason: "no_pressure", tier, tokens: tokensBefore, budget });
      return { ...base, messages: [...messages], canonical: [...messages], status: "ok", tokensAfter: tokensBefore, stages: [], refs: [] };
    }
    const hint = recallHintText(options.recallHint ?? (carry?.settings ?? this.settings).recallHint);
    if (mode === "legacy") {
      // Legacy compaction works to the budget less the hint's room too (see runPipeline).
      const r = compactMessages(
        messages,
        { compactAtPct: this.settings.targetRatio + 0.05, compactBudgetThresholdPct: 0.05 },
        hintedBudget(budget, hint, this.counter),
        { store: this.store, counter: this.counter },
      );
      const hinted = hint === undefined ? undefined : placeRecallHint(r.messages, messages, this.store.prefix, hint);
      if (hinted) r.messages[hinted.index] = { ...r.messages[hinted.index], parts: hinted.parts };
      const tokensAfter = measure.all(r.messages);
      const status = tokensAfter <= budget ? "ok" : "budget_infeasible";
      emit({ type: "compaction_result", tier, mode, status, tokensBefore, tokensAfter, budget, epoch, newEpoch: true, durationMs: this.#now() - started });
      return { ...base, messages: r.messages, canonical: r.messages, status, tokensAfter, stages: [], refs: r.refs };
    }
    const kit = new StageKit(carry?.emit || carry?.settings ? { ...this.#services, emit, settings: carry.settings ?? this.settings } : this.#services, measure);
    if (carry) ({ ledger: kit.priorLedger, facts: kit.facts } = carry);
    const {
      work: w,
      stages,
      tokensAfter,
      status,
      criticalTokens,
    } = await runPipeline(kit, messages, tokensBefore, budget, tier, options.deadline, () => this.#now(), started, hint);
    const canonical = [...w.msgs];
    const result: CanonicalResult = {
      ...base,
      messages: canonical,
      canonical,
      status,
      tokensAfter,
      stages,
      refs: [...w.refs],
      ...(criticalTokens !== undefined ? { infeasible: { criticalTokens, budget } } : {}),
    };
    if (w.compacted > this.settings.churnWarnAt) emit({ type: "churn_warning", compacted: w.compacted, limit: this.settings.churnWarnAt });
    emit({ type: "compaction_result", tier, mode, status, tokensBefore, tokensAfter, budget, epoch, newEpoch: true, durationMs: this.#now() - started });
    return result;
  }
}

/** The default entry point: `createCompactor(config).compact(messages, { budget, format?, deadline? })`. */
export function createCompactor(config: CompactorConfig = {}): Compactor {
  return new Compactor(config);
}
