import type { Format } from "../adapters/index.js";
import type { Message } from "../model/schema.js";
import { jsonEqual } from "../model/equal.js";
import { whenIdle } from "../event-loop.js";
import { detectFormat } from "../adapters/index.js";
import type { LedgerLine } from "../model/marks.js";
import { FactWindow } from "./relevance/fact-window.js";
import { ledgerLines, ledgerTokens } from "./relevance/ledger.js";
import { WireCache } from "../adapters/wire-cache.js";
import type { TieredSettings } from "./config.js";
import { checkCallOptions } from "./options.js";
import type { PolicyEvent } from "./events.js";
import type { AnthropicForm, ArrayFormat, CanonicalResult, CompactCallOptions, CompactResult, Tier } from "./types.js";

/** What one epoch of a session hands the next. */
export interface EpochCarry {
  /** The previous epoch's ledger, which this epoch's starts with while its facts hold (append-only, so the cached prefix reaches through it). */
  ledger: readonly LedgerLine[];
  /** The facts the previous epoch's ledger ranked, aggregated over its window: this epoch folds in and out only what changed. */
  facts: FactWindow;
  /** Where the epoch's events go instead of the compactor's listeners (an epoch compacted ahead reports when it is used). */
  emit?: (e: PolicyEvent) => void;
  /** The settings this epoch compacts with, when not the compactor's (an epoch compacted ahead leaves room for the messages appended after it). */
  settings?: TieredSettings;
}

/** What a session needs of its compactor (Compactor.session() hands it over; not public). */
export interface EpochHost {
  readonly settings: TieredSettings;
  /** Estimated tokens of messages as a request, with `format`'s provider's overheads (memoised per message). */
  measure(messages: readonly Message[], format?: Format): number;
  tier(tokens: number, budget: number): Tier;
  /** Reports a call answered without compacting (an append, or under the soft threshold). */
  skipped(tokens: number, budget: number): void;
  /** Reports an event to the compactor's listeners and stats. */
  emit(e: PolicyEvent): void;
  /** A compaction of `messages` (options checked) as the session's epoch `epoch`, with what the previous epoch carries over. */
  compactEpoch(messages: readonly Message[], options: CompactCallOptions, epoch: number, carry: EpochCarry): Promise<CanonicalResult>;
  /** Step reductions and renders a later epoch will need, done ahead for `messages[from..]` (see StepCache.prepare). */
  prepare(messages: readonly Message[], from: number, sliceMs?: number): number;
}

/**
 * One conversation across calls: compaction works in epochs. A call whose
 * messages extend the previous call's (same message objects, or same ids and content, plus new
 * ones at the end) appends the new messages to the current epoch's output, so the rendered
 * prefix is byte-identical to the previous call's and provider prompt caches keep hitting;
 * only when that crosses the soft threshold does a new epoch compact the whole conversation
 * down to the target (targetRatio × budget). Measurements are memoised per message, so appending one step
 * costs O(new parts).
 */
export class CompactorSession {
  #epoch = 0;
  /** The input messages the current epoch covers, and their compacted form. */
  #base: Message[] = [];
  #output: Message[] = [];
  #format: Format | undefined;
  #wire: WireCache | undefined;
  #facts = new FactWindow();

  /** @internal Sessions are made by `Compactor.session()`, which passes itself as the host. */
  constructor(host: EpochHost) {
    this.#host = host;
  }

  readonly #host: EpochHost;

  /** How far into #base idle-time preparation has got, and its pending callback. */
  #prepared = 0;
  #idle: { unref?: () => unknown } | undefined;

  /**
   * Schedules the step preparation (StepCache.prepare) over the messages appended since the epoch, in slices, after the
   * current call returns (settings.idlePrepare). A runner awaiting its model gives it the time;
   * one that calls back to back leaves it to the epoch. Failures are left to the epoch too,
   * which does the same work and reports them.
   */
  #schedulePrepare(): void {
    if (!this.#host.settings.idlePrepare || this.#idle !== undefined || this.#prepared >= this.#base.length) return;
    this.#idle = whenIdle(() => {
      this.#idle = undefined;
      try {
        this.#prepared = this.#host.prepare(this.#base, this.#prepared);
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

  /**
   * compact() with epochs; input in a provider format. The session keeps the previous call's
   * wire messages and their canonical forms (a WireCache), so a call parses only the messages
   * the previous one did not have, and renders only the output messages it did not render.
   */
  compact<M extends object>(input: readonly M[], options: CompactCallOptions & { format: ArrayFormat }): Promise<CompactResult<M[]>>;
  compact<M extends object>(
    input: readonly M[] | AnthropicForm<M>,
    options: CompactCallOptions & { format: "anthropic" },
  ): Promise<CompactResult<AnthropicForm<M>>>;
  compact(input: unknown, options: CompactCallOptions): Promise<CompactResult>;
  async compact(input: unknown, options: CompactCallOptions): Promise<CompactResult> {
    const checked = checkCallOptions(options);
    const format = detectFormat(input, checked.format ?? this.#format);
    if (this.#wire?.format !== format) this.#wire = new WireCache(format);
    const messages = this.#wire.parse(input);
    this.#format = format;
    const r = await this.compactCanonical(messages, { ...checked, format });
    return { ...r, format, messages: this.#wire.render(r.canonical) };
  }

  /** The epoch logic on canonical messages. */
  async compactCanonical(messages: readonly Message[], options: CompactCallOptions): Promise<CanonicalResult> {
    options = checkCallOptions(options);
    const c = this.#host;
    const ok = (canonical: Message[], tokensBefore: number, tokensAfter: number): CanonicalResult => ({
      messages: canonical,
      canonical,
      status: "ok",
      tier: "normal",
      mode: c.settings.mode,
      budget: options.budget,
      tokensBefore,
      tokensAfter,
      epoch: this.#epoch,
      stages: [],
      refs: [...this.#refs],
    });
    const extended = this.#extends(messages);
    if (extended) {
      // Appending: O(new messages) — their tokens join the running totals.
      const appended = messages.slice(this.#base.length);
      const added = appended.length > 0 ? c.measure(appended, options.format) - c.measure([], options.format) : 0;
      if (c.tier(this.#outputTokens + added, options.budget) === "normal") {
        for (const m of appended) {
          this.#base.push(m);
          this.#output.push(m);
        }
        this.#baseTokens += added;
        this.#outputTokens += added;
        this.#appended.tokens += added;
        this.#appended.calls++;
        this.#schedulePrepare();
        this.#planAhead(options);
        c.skipped(this.#outputTokens, options.budget);
        return ok([...this.#output], this.#baseTokens, this.#outputTokens);
      }
      const applied = await this.#applyAhead(messages, options, this.#baseTokens + added);
      if (applied) return applied;
    }
    this.#ahead = undefined;
    const tokensBefore = c.measure(messages, options.format);
    if (c.tier(tokensBefore, options.budget) === "normal") {
      this.#base = [...messages];
      this.#output = [...messages];
      this.#refs = [];
      this.#baseTokens = this.#outputTokens = tokensBefore;
      this.#appended = { tokens: 0, calls: 0 };
      this.#prepared = 0;
      this.#compactsDown = false;
      this.#schedulePrepare();
      c.skipped(tokensBefore, options.budget);
      return ok([...messages], tokensBefore, tokensBefore);
    }
    this.#epoch++;
    // The ledger carries over only within one conversation: its facts are those of messages
    // this one still begins with.
    if (!extended) this.#facts = new FactWindow();
    const r = await c.compactEpoch(messages, options, this.#epoch, { ledger: extended ? ledgerLines(this.#output) : [], facts: this.#facts });
    this.#base = [...messages];
    // The epoch did every message's work; what it kept whole is prepared when next removed.
    this.#prepared = this.#base.length;
    this.#output = [...r.canonical];
    this.#refs = [...r.refs];
    this.#baseTokens = tokensBefore;
    this.#outputTokens = c.measure(r.canonical, options.format);
    this.#appended = { tokens: 0, calls: 0 };
    this.#compactsDown = compactsDown(c.settings, c.settings.targetRatio, r.tokensAfter - this.#ledgerTokens(r.canonical, options.format), options.budget);
    return r;
  }

  /** Whether the last epoch compacted down (see compactsDown): only then is the next one planned ahead. */
  #compactsDown = false;

  /**
   * The tokens of the ledger in an epoch's `output` (0 without one). The ledger is left out of
   * whether an epoch compacted down: its room is bounded (ledgerRatio) and it starts over when
   * full, so it never keeps the output near the threshold the way what must stay whole does.
   */
  #ledgerTokens(output: readonly Message[], format: Format | undefined): number {
    return ledgerTokens(output, (m) => this.#host.measure([m], format));
  }

  /**
   * Plans the next epoch ahead (settings.aheadRatio) once the output is within aheadRatio ×
   * budget of the soft threshold, the reach: the conversation as it stands is compacted down
   * to the target less the reach, the room for the messages appended before it is used, in
   * idle time with idlePrepare (or by the call that needs it). Only where steps are small
   * against the reach (kAheadSteps appends of the mean size since the epoch fit it), and after
   * an epoch that compacted down; never with a deadline: that call's compaction is bounded by
   * its own time.
   */
  #planAhead(options: CompactCallOptions): void {
    const c = this.#host;
    const s = c.settings;
    const reach = Math.floor(s.aheadRatio * options.budget);
    const meanStep = this.#appended.tokens / this.#appended.calls;
    if (reach === 0 || kAheadSteps * meanStep > reach || options.deadline !== undefined || this.#ahead?.epoch === this.#epoch) return;
    // Not after an epoch that could not compact down; not yet near the threshold; or nothing to
    // compact, the whole conversation under it.
    if (!this.#compactsDown || c.tier(this.#outputTokens + reach, options.budget) === "normal" || c.tier(this.#baseTokens, options.budget) === "normal") return;
    const target = Math.max(0, Math.floor(s.targetRatio * options.budget) - reach);
    const settings = { ...s, targetRatio: (target + 0.5) / options.budget };
    const ahead: Ahead = { epoch: this.#epoch, messages: [...this.#base], options, ledger: ledgerLines(this.#output), settings, reach, events: [] };
    this.#ahead = ahead;
    if (s.idlePrepare) whenIdle(() => this.#startAhead(ahead)).unref?.();
  }

  /** Starts the compaction of `ahead` unless it has started (or was dropped). */
  #startAhead(ahead: Ahead): Promise<CanonicalResult | undefined> {
    ahead.run ??= this.#host
      .compactEpoch(ahead.messages, ahead.options, ahead.epoch + 1, {
        ledger: ahead.ledger,
        facts: this.#facts,
        emit: (e) => ahead.events.push(e),
        settings: ahead.settings,
      })
      .catch(() => undefined);
    return ahead.run;
  }

  /**
   * The epoch compacted ahead with the messages appended since after it, as this call's epoch
   * (`messages` of `tokensBefore` tokens, the running total of the appends):
   * when it was planned in this epoch with the same budget and format, those messages are
   * within twice its reach (the whole ends within the reach of the target), and the whole
   * stays within the soft threshold. Otherwise undefined, and the
   * caller compacts in full (a failure of the compaction ahead is left to it too: it meets the
   * failure again and reports it). Every condition but the last is decided before the
   * compaction ahead is awaited, so a call that must compact in full never also compacts ahead.
   */
  async #applyAhead(messages: readonly Message[], options: CompactCallOptions, tokensBefore: number): Promise<CanonicalResult | undefined> {
    const ahead = this.#ahead;
    this.#ahead = undefined;
    const c = this.#host;
    if (
      ahead === undefined ||
      ahead.epoch !== this.#epoch ||
      ahead.options.budget !== options.budget ||
      ahead.options.format !== options.format ||
      ahead.options.recallHint !== options.recallHint ||
      options.deadline !== undefined
    )
      return undefined;
    const since = messages.slice(ahead.messages.length);
    if (c.measure(since, options.format) - c.measure([], options.format) > 2 * ahead.reach) return undefined;
    const r = await this.#startAhead(ahead);
    if (r === undefined || r.status !== "ok") return undefined;
    const output = [...r.canonical, ...since];
    const tokensAfter = c.measure(output, options.format);
    if (c.tier(tokensAfter, options.budget) !== "normal") return undefined;
    for (const e of ahead.events) c.emit(e);
    this.#compactsDown = compactsDown(c.settings, ahead.settings.targetRatio, r.tokensAfter - this.#ledgerTokens(r.canonical, options.format), options.budget);
    this.#epoch = ahead.epoch + 1;
    this.#base = [...messages];
    this.#prepared = ahead.messages.length;
    this.#output = output;
    this.#refs = [...r.refs];
    this.#baseTokens = tokensBefore;
    this.#outputTokens = tokensAfter;
    this.#appended = { tokens: 0, calls: 0 };
    this.#schedulePrepare();
    return { ...r, messages: [...output], canonical: [...output], tokensBefore: this.#baseTokens, tokensAfter, epoch: this.#epoch };
  }

  /** The next epoch planned ahead, if any (see #planAhead). */
  #ahead: Ahead | undefined;
  /** The tokens appended since the current epoch, and in how many calls. */
  #appended = { tokens: 0, calls: 0 };
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

/**
 * Whether an epoch's output of `tokens`, compacted towards `targetRatio`, ended in the lower
 * quarter of the hysteresis band (target to soft threshold): the conversation compacts down.
 * Above it, what must stay whole sits near the threshold, and the messages an epoch ahead
 * leaves whole would only bring the next epoch sooner (more cache writes for the same content).
 */
function compactsDown(s: TieredSettings, targetRatio: number, tokens: number, budget: number): boolean {
  return tokens <= (targetRatio + (s.softRatio - targetRatio) / 4) * budget;
}

/** Appends of the mean size since the epoch that must fit the reach for the next epoch to be planned ahead (see #planAhead). */
const kAheadSteps = 2;

/**
 * An epoch compacted ahead: the session's epoch it was planned in, the conversation then, the
 * call's options, the ledger to start with, the settings it compacts with and the reach it was
 * planned at (tokens below the target it compacts to); its compaction once started, and the
 * events it reported.
 */
interface Ahead {
  epoch: number;
  messages: readonly Message[];
  options: CompactCallOptions;
  ledger: readonly LedgerLine[];
  settings: TieredSettings;
  reach: number;
  events: PolicyEvent[];
  run?: Promise<CanonicalResult | undefined>;
}
