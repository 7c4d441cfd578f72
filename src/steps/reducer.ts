import { badValueError } from "../errors.js";
import type { Message, ResultContentPart, Step, ToolCallPart, ToolResultPart } from "../model/schema.js";
import { createFsStore, type OffloadStore } from "../store/index.js";
import { noteCallSecrets, redactEchoes, redactNamedFields, redactSecrets, redactValue, type SecretPattern, kSecretPatterns } from "./redact.js";
import {
  defaultRule,
  kBuiltinRules,
  kDefaultThresholds,
  oneLine,
  ruleMatches,
  type ReductionRule,
  type ReductionThresholds,
  type RuleInput,
  type RuleOutput,
} from "./rules.js";
import type { ReducedStep } from "./types.js";

export interface StepReducerOptions {
  /**
   * Where large outputs go. @default a filesystem store under ./workspace/outputs, created on
   * the first offload (so a ref is also the path an agent reads it back by, as in step reduction's design).
   */
  store?: OffloadStore;
  /**
   * Step reduction's thresholds; any subset overrides the defaults.
   * @default each threshold's own default (ReductionThresholds)
   */
  thresholds?: Partial<ReductionThresholds>;
  /**
   * Rules tried before the built-in ones, in order (match by tool name, pattern or predicate).
   * @default none: the built-in rules only
   */
  rules?: readonly ReductionRule[];
  /**
   * Redact secrets in observations, summaries, errors and minimal arguments: known shapes, and
   * the values of secret-named arguments (isSecretKey) wherever the step's texts show them, its
   * output's echoes included. Every reducer ctxfold makes itself keeps the default. @default true
   */
  redact?: boolean;
  /** Also redact the offloaded originals (then a ref gives the redacted bytes). @default false */
  redactOffload?: boolean;
  /** The secret patterns. @default kSecretPatterns */
  secretPatterns?: readonly SecretPattern[];
  /** The first step number (step reduction's counter starts at 1). @default 1 */
  firstStep?: number;
  /** Offload at all; false describes steps only (outcomeRef stays null), e.g. for summaries. @default true */
  offload?: boolean;
}

/** Step reduction's step id: `step_001`. */
const stepId = (n: number) => `step_${String(n).padStart(3, "0")}`;

/** A tool result with no call before it, as reduceMessages reports it. */
export interface OrphanResult {
  result: ToolResultPart;
  resultMessage: number;
}

/**
 * Pairs every tool call of `messages` with its result (the first later tool-result part with
 * the call's id), in call order; results no call answers are returned apart. With `from`, only
 * `messages[from..]` are scanned (indices stay those of `messages`).
 */
export function extractSteps(messages: readonly Message[], from = 0): { steps: Step[]; orphans: OrphanResult[] } {
  const steps: Step[] = [];
  const open = new Map<string, Step>();
  const orphans: OrphanResult[] = [];
  for (let i = from; i < messages.length; i++) {
    const m = messages[i];
    for (const p of m.parts) {
      if (p.type === "tool-call") {
        const step: Step = { call: p, callMessage: i };
        steps.push(step);
        open.set(p.id, step);
      } else if (p.type === "tool-result") {
        const step = open.get(p.callId);
        if (step && !step.result) {
          step.result = p;
          step.resultMessage = i;
          open.delete(p.callId);
        } else {
          orphans.push({ result: p, resultMessage: i });
        }
      }
    }
  }
  return { steps, orphans };
}

/** The text of a result's content: text parts joined by newlines. */
export function resultText(content: readonly ResultContentPart[]): string {
  if (content.length === 1 && content[0].type === "text") return content[0].text;
  return content
    .filter((c) => c.type === "text")
    .map((c) => (c as { text: string }).text)
    .join("\n");
}

/** What a result stores when offloaded: its text when it is one text part, else its parts as JSON. */
export function resultPayload(content: readonly ResultContentPart[]): { data: string; json: boolean } {
  if (content.length === 1 && content[0].type === "text") return { data: content[0].text, json: false };
  if (content.every((c) => c.type === "text")) return { data: resultText(content), json: false };
  return { data: JSON.stringify(content), json: true };
}

function mediaBytes(c: ResultContentPart): number {
  if (c.type === "text") return Buffer.byteLength(c.text);
  const data = c.type === "media" ? c.data : c.value;
  if (typeof data === "string") return c.type === "media" ? Math.floor((data.length * 3) / 4) : Buffer.byteLength(data);
  if (data instanceof Uint8Array) return data.byteLength;
  return Buffer.byteLength(JSON.stringify(data) ?? "");
}

/** A call's arguments as the reduction rules see them: the JSON object (up to 16 MB), else {}; `valid` when JSON or empty. */
export function parseArgs(raw: string): { args: Record<string, unknown>; valid: boolean } {
  if (raw.length > 0 && raw.length < 16 << 20) {
    try {
      const v: unknown = JSON.parse(raw);
      if (v !== null && typeof v === "object" && !Array.isArray(v)) return { args: v as Record<string, unknown>, valid: true };
    } catch {
      // not JSON: rules fall back to the raw string
    }
  }
  return { args: {}, valid: raw.length === 0 };
}

/** A call's result as reduce takes it: its text, its bytes, or a canonical tool result's content parts. */
export type CallResult = string | Uint8Array | readonly ResultContentPart[];

/** What an offload stores of a result: its bytes or text, and whether the text is the parts' JSON. */
interface OffloadPayload {
  data: string | Uint8Array;
  json: boolean;
}

/** No secret-named argument: nothing to hide, nothing the step's texts may not echo. */
const kNoSecrets: readonly string[] = [];

/**
 * What the rules are given of a call, before any redaction: the arguments both parsed (an
 * object given as such is taken as it is) and raw, and the result's text (a placeholder for
 * bytes), its size in bytes (media by their decoded size) and whether it holds more than text.
 */
function ruleInput(tool: string, args: unknown, result: CallResult | undefined, isError: boolean): RuleInput {
  const rawArgs = typeof args === "string" ? args : (JSON.stringify(args ?? {}) ?? "");
  const parsed =
    typeof args === "string"
      ? parseArgs(args)
      : args && typeof args === "object" && !Array.isArray(args)
        ? { args: args as Record<string, unknown>, valid: true }
        : { args: {}, valid: false };
  let output = "";
  let outputBytes = 0;
  let binary = false;
  if (typeof result === "string") {
    output = result;
    outputBytes = Buffer.byteLength(result);
  } else if (result instanceof Uint8Array) {
    binary = true;
    outputBytes = result.byteLength;
    output = `<${result.byteLength} bytes of binary data>`;
  } else if (result) {
    output = resultText(result);
    binary = result.some((c) => c.type !== "text");
    outputBytes = result.reduce((n, c) => n + mediaBytes(c), 0);
  }
  return { tool, args: parsed.args, rawArgs, argsValid: parsed.valid, output, outputBytes, binary, isError, missingResult: result === undefined };
}

/** What an offload of `result` would store (resultPayload for content parts); undefined with no result. */
function offloadPayload(result: CallResult | undefined): OffloadPayload | undefined {
  if (typeof result === "string" || result instanceof Uint8Array) return { data: result, json: false };
  return result ? resultPayload(result) : undefined;
}

/** The reduced step the rule's output makes, numbered `id`, its texts passed through `redact`. */
function reducedStep(id: string, tool: string, rule: ReductionRule, out: RuleOutput, outcomeRef: string | null, redact: <T>(v: T) => T): ReducedStep {
  const step: ReducedStep = {
    id,
    tool,
    category: rule.category,
    action: rule.action,
    minimalArgs: redact(out.minimalArgs),
    observation: redact(out.observation),
    summary: redact(out.summary),
    outcomeRef,
    success: out.success,
  };
  if (out.error !== undefined) step.error = redact(out.error);
  if (out.size !== undefined) step.size = out.size;
  if (out.count !== undefined) step.count = out.count;
  if (out.exitCode !== undefined) step.exitCode = out.exitCode;
  if (out.lines !== undefined) step.lines = out.lines;
  return step;
}

/**
 * The StepReducer (step reduction): turns each tool call and its result into a ReducedStep —
 * `{tool, minimal_args, observation, outcome_ref, success, error?}` — keeping what the agent
 * needs to resume and offloading what is recoverable. Rules are looked up by tool name (user
 * rules first, then the built-ins, then the default rule); a rule that throws is reported in
 * the observation and the step is reduced by the default rule, so reduction never throws out
 * on odd input (unparseable arguments, binary content, huge outputs, results with no call).
 * Only a failing store write throws (a typed E_STORE_WRITE; nothing partial is left behind).
 */
export class StepReducer {
  readonly thresholds: ReductionThresholds;
  readonly #rules: ReductionRule[];
  readonly #options: StepReducerOptions;
  #store: OffloadStore | undefined;
  #counter: number;

  constructor(options: StepReducerOptions = {}) {
    this.#options = options;
    this.thresholds = { ...kDefaultThresholds, ...options.thresholds };
    for (const [k, v] of Object.entries(this.thresholds)) {
      const ok = k === "browserAlways" ? typeof v === "boolean" : typeof v === "number" && v >= 0 && Number.isFinite(v);
      if (!ok) throw badValueError(`thresholds.${k}`, k === "browserAlways" ? "a boolean" : "a non-negative number", v);
    }
    this.#rules = [...(options.rules ?? [])];
    this.#store = options.store;
    this.#counter = (options.firstStep ?? 1) - 1;
  }

  /** The store offloads go to (created on first use when none was given). */
  get store(): OffloadStore {
    this.#store ??= createFsStore({});
    return this.#store;
  }

  /** Restarts step numbering (the next step is `step_00<first>`): one history, one numbering. */
  restartNumbering(first = 1): this {
    this.#counter = first - 1;
    return this;
  }

  /** Adds a rule tried before every rule added earlier and the built-ins. */
  addRule(rule: ReductionRule): this {
    this.#rules.unshift(rule);
    return this;
  }

  /** The rule that reduces `tool` called with `args`. */
  ruleFor(tool: string, args: Record<string, unknown> = {}): ReductionRule {
    return this.#rules.find((r) => ruleMatches(r, tool, args)) ?? kBuiltinRules.find((r) => ruleMatches(r, tool, args)) ?? defaultRule;
  }

  #nextId(): string {
    return stepId(++this.#counter);
  }

  /**
   * Reduces one call: `args` as the raw argument string or an object, `result` as a string,
   * bytes, or the content parts of a canonical tool result (undefined when unanswered).
   */
  reduce(tool: string, args: unknown, result?: CallResult, options: { isError?: boolean; callId?: string; part?: ToolCallPart } = {}): ReducedStep {
    const input = ruleInput(tool, args, result, options.isError ?? false);
    const payload = offloadPayload(result);
    const redact = this.#options.redact ?? true;
    const secrets = redact && input.argsValid ? this.#hideSecretArguments(input, options.part) : kNoSecrets;
    const rule = this.ruleFor(tool, input.args);
    const out = this.#applyRule(rule, input);
    const outcomeRef = out.offload && payload && (this.#options.offload ?? true) ? this.#offload(out.offload, payload, secrets) : null;
    // Shapes anywhere, and the secret arguments' values where the output echoes them.
    const r = <T>(v: T): T => (redact ? redactEchoes(redactValue(v, this.#patterns), secrets) : v);
    const step = reducedStep(this.#nextId(), tool, rule, out, outcomeRef, r);
    if (options.callId !== undefined) step.callId = options.callId;
    return step;
  }

  /**
   * Hides the values of the secret-named arguments from the rules: what they render from the
   * arguments (summaries, minimal arguments, targets) shows their redaction. Returns the values
   * hidden, which no text of the step may echo either.
   */
  #hideSecretArguments(input: RuleInput, part: ToolCallPart | undefined): readonly string[] {
    const named = redactNamedFields(input.args, this.#patterns);
    // What the arguments held is read once: argumentSecrets takes it from here for this call.
    if (part) noteCallSecrets(part, named.secrets);
    input.args = named.value;
    if (named.secrets.length > 0) input.rawArgs = JSON.stringify(named.value);
    return named.secrets;
  }

  /** The rule's reduction; a rule that throws gives way to the default rule, the failure told in the observation. */
  #applyRule(rule: ReductionRule, input: RuleInput): RuleOutput {
    try {
      return rule.reduce(input, this.thresholds);
    } catch (cause) {
      if (rule === defaultRule) throw cause;
      const out = defaultRule.reduce(input, this.thresholds);
      out.observation += ` (rule ${rule.name} failed: ${oneLine((cause as Error)?.message ?? String(cause), 120)})`;
      return out;
    }
  }

  /** Stores the result as the rule asks (redacted first with redactOffload, a text only): its ref. */
  #offload(as: NonNullable<RuleOutput["offload"]>, payload: OffloadPayload, secrets: readonly string[]): string {
    const redactOffload = this.#options.redactOffload ?? false;
    const data = redactOffload && typeof payload.data === "string" ? redactEchoes(redactSecrets(payload.data, this.#patterns), secrets) : payload.data;
    return this.store.put(data, { kind: as.kind, ext: payload.json ? "json" : as.ext });
  }

  get #patterns(): readonly SecretPattern[] {
    return this.#options.secretPatterns ?? kSecretPatterns;
  }

  /** Reduces a canonical Step (a tool-call part and its result part). */
  reduceStep(step: Step): ReducedStep {
    const s = this.reduce(step.call.name, step.call.args, step.result?.content, { isError: step.result?.isError, callId: step.call.id, part: step.call });
    s.callMessage = step.callMessage;
    if (step.resultMessage !== undefined) s.resultMessage = step.resultMessage;
    return s;
  }

  /**
   * Every step of a message list in order of its call (results with no call last-in-place:
   * they are reduced as a step of their own, flagged in the observation, with no callMessage).
   */
  reduceMessages(messages: readonly Message[]): ReducedStep[] {
    return this.reduceMessagesWith(messages, (_call, _result, reduce) => reduce());
  }

  /**
   * reduceMessages with a cache hook: `lookup(call, result, reduce)` returns a cached reduction of
   * that call and result part or calls `reduce()`. Ids, indices and the step counter are set
   * here, after the lookup, so a cached step lands with the ids of its new position. With
   * `from`, only the steps of `messages[from..]` (indices stay those of `messages`).
   */
  reduceMessagesWith(
    messages: readonly Message[],
    lookup: (call: object, result: object | undefined, reduce: () => ReducedStep) => ReducedStep,
    remember?: (call: object, result: object | undefined, placed: ReducedStep) => void,
    from = 0,
  ): ReducedStep[] {
    const { steps, orphans } = extractSteps(messages, from);
    const items: ({ at: number; step: Step } | { at: number; orphan: OrphanResult })[] = steps.map((step) => ({ at: step.callMessage, step }));
    // Steps come in call order; orphans go in at their result's place.
    if (orphans.length > 0) {
      items.push(...orphans.map((orphan) => ({ at: orphan.resultMessage, orphan })));
      items.sort((a, b) => a.at - b.at);
    }
    // Ids follow the message order (step reduction's counter), whatever the cache returns.
    const base = this.#counter;
    const out = items.map((item, k) => {
      const id = stepId(base + k + 1);
      if ("step" in item) {
        const { step } = item;
        const cached = lookup(step.call, step.result, () => this.reduceStep(step));
        // The cached step as it is when it already sits where this history puts it.
        if (cached.id === id && cached.callMessage === step.callMessage && cached.resultMessage === step.resultMessage) return cached;
        const s = { ...cached, id, callMessage: step.callMessage };
        if (step.resultMessage !== undefined) s.resultMessage = step.resultMessage;
        else delete s.resultMessage;
        remember?.(step.call, step.result, s);
        return s;
      }
      const { result, resultMessage } = item.orphan;
      const s = this.reduce(result.name ?? "unknown_tool", "{}", result.content, { isError: result.isError, callId: result.callId });
      s.observation = `${s.observation} (result with no matching call ${JSON.stringify(result.callId)})`;
      s.resultMessage = resultMessage;
      s.id = id;
      return s;
    });
    this.#counter = base + items.length;
    return out;
  }
}
