/**
 * A Summarizer backed by any OpenAI-compatible chat-completions endpoint (OpenAI, Azure's
 * OpenAI-compatible routes, vLLM, llama.cpp's server, Ollama's /v1, LiteLLM, …), with the
 * extractive summariser as its fallback.
 *
 * The tiered policy's "compactor churn" came from an LLM compactor retrying `output_exceeds_target` five
 * times on one payload. Here the retries are bounded (`maxRetries`, default 2), each retry asks
 * more firmly (it names the previous length and the target), and after the last one the
 * extractive summariser, within the target by construction, answers from the ORIGINAL text (a
 * summary is never summarised again). Every other failure (an HTTP error, a body that is not
 * JSON, no `choices[0].message.content`, an empty answer, a timeout, a network error) goes to
 * the fallback at once, without retrying: an endpoint that fails is not hammered. Each retry
 * and each fallback is reported through `onEvent` with the reason.
 *
 * Decisions:
 * - The returned function never throws or rejects. Bad arguments (a text that is not a string,
 *   a target that is not a number) give "" and a fallback event; a fallback that throws or
 *   answers over the target is replaced by the built-in extractive summariser.
 * - `timeoutMs` bounds the whole call, retries included (one deadline; each request is aborted
 *   with an AbortController when it passes), so a caller on the critical path knows how long a
 *   summary can take: at most timeoutMs plus the fallback's few milliseconds.
 * - An answer is checked with the counter's `estimate`, as the policy checks it. An answer cut
 *   by `max_tokens` (finish_reason "length") is treated as over the target: it is a truncation,
 *   not a summary.
 * - No request is made when it cannot help: a target of 0 or an empty text give "", a text
 *   already within the target is returned as the extractive summariser returns it (unchanged,
 *   secrets redacted), and a text estimated above `maxInputTokens` goes to the fallback.
 * - Secrets: the text is redacted (redactSecrets) before it is sent, and so is the answer. The
 *   API key travels only in the Authorization header: it is never logged (nothing here logs),
 *   never put in an event, an error or a reason (reasons are scrubbed of it, in case a server
 *   echoes it back), and not kept on any object the caller can reach.
 * - Configuration: options first, then the environment, read once at construction:
 *   CTXFOLD_LLM_BASE_URL or OPENAI_BASE_URL (default https://api.openai.com/v1),
 *   CTXFOLD_LLM_MODEL (default gpt-4o-mini), CTXFOLD_LLM_API_KEY or OPENAI_API_KEY. A missing
 *   key is a CtxfoldError E_BAD_INPUT at construction, naming `apiKey` and the variables.
 */
import { CtxfoldError } from "../errors.js";
import { redactSecrets } from "../steps/redact.js";
import { TokenCounter } from "../tokens/token-counter.js";
import { extractiveSummarizer, oneLineLabel, type SyncSummarizer } from "./extractive.js";
import type { Summarizer, SummarizerFallbackEvent } from "../steps/summarizer.js";

/** A Summarizer that answers with a promise (assignable to Summarizer). */
export type AsyncSummarizer = (text: string, targetTokens: number, label: string) => Promise<string>;

/** A fallback, in the one shape every summariser fallback has, or a retry of a request; with the requests made. */
export interface LlmSummarizerEvent extends Omit<SummarizerFallbackEvent, "type"> {
  type: SummarizerFallbackEvent["type"] | "summarizer_retry";
  /** Requests made so far (0 when the fallback answered without one). */
  attempt: number;
}

export interface LlmSummarizerOptions {
  /** @default CTXFOLD_LLM_BASE_URL, else OPENAI_BASE_URL, else "https://api.openai.com/v1" */
  baseUrl?: string;
  /** @default CTXFOLD_LLM_MODEL, else "gpt-4o-mini" */
  model?: string;
  /** @default CTXFOLD_LLM_API_KEY, else OPENAI_API_KEY; required */
  apiKey?: string;
  /** Milliseconds the whole call may take, retries included. @default 20000 */
  timeoutMs?: number;
  /** Requests after the first when an answer is over the target. @default 2 */
  maxRetries?: number;
  /** Answers when the model does not. @default the extractive summariser over `counter` */
  fallback?: Summarizer;
  /** The counter answers are checked with. @default a new TokenCounter() */
  counter?: TokenCounter;
  /** Told about each retry and each fallback. A throw from it is ignored. @default none */
  onEvent?: (e: LlmSummarizerEvent) => void;
  /** @default globalThis.fetch */
  fetch?: typeof fetch;
  /** A text estimated above this goes to the fallback without a request (it would not fit the model). @default 100000 */
  maxInputTokens?: number;
}

/** The defaults of llmSummarizer. */
export const kLlmSummarizerDefaults = Object.freeze({
  baseUrl: "https://api.openai.com/v1",
  model: "gpt-4o-mini",
  timeoutMs: 20_000,
  maxRetries: 2,
  maxInputTokens: 100_000,
  /** max_tokens of a request: this times the target (the estimate and the model's tokenizer differ a little). */
  maxTokensFactor: 1.2,
  /** A retry asks for this share of the target. */
  retryShare: 0.8,
  /** Characters of a server's error body quoted in a reason. */
  reasonBodyChars: 200,
});

type Outcome = { ok: true; content: string; finishReason: unknown } | { ok: false; reason: string };

function positiveNumber(value: unknown, path: string, integer: boolean, min: number): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < min || (integer && !Number.isInteger(value))) {
    throw new CtxfoldError("E_BAD_INPUT", `expected ${integer ? "an integer" : "a number"} >= ${min}`, { path });
  }
  return value;
}

const nonEmpty = (s: string | undefined): string | undefined => (typeof s === "string" && s.trim() !== "" ? s.trim() : undefined);

/** A summariser's settings as resolved at construction (see resolveSettings). */
interface LlmSettings {
  apiKey: string;
  /** The chat-completions endpoint. */
  url: string;
  model: string;
  timeoutMs: number;
  maxRetries: number;
  maxInputTokens: number;
  fetch: typeof fetch;
  counter: TokenCounter;
  fallback: Summarizer | undefined;
  onEvent: ((e: LlmSummarizerEvent) => void) | undefined;
}

/** An OpenAI-compatible chat-completions Summarizer with a bounded retry and an extractive fallback (see the module comment). */
export function llmSummarizer(options: LlmSummarizerOptions = {}): AsyncSummarizer {
  const summarizer = new ChatSummarizer(resolveSettings(options));
  return (text: string, targetTokens: number, label: string): Promise<string> => summarizer.summarize(text, targetTokens, label);
}

/**
 * The settings: options first, then the environment, then the defaults (see the module
 * comment); a missing key or a bad option is a CtxfoldError E_BAD_INPUT naming it.
 */
function resolveSettings(options: LlmSummarizerOptions): LlmSettings {
  // User configuration, not a test hook: the endpoint, model and key an option leaves out come
  // from these variables, as LlmSummarizerOptions' @default and the module comment document
  // (OPENAI_API_KEY / OPENAI_BASE_URL are every OpenAI client's own).
  const env = process.env;
  const apiKey = nonEmpty(options.apiKey) ?? nonEmpty(env.CTXFOLD_LLM_API_KEY) ?? nonEmpty(env.OPENAI_API_KEY);
  if (apiKey === undefined) {
    throw new CtxfoldError("E_BAD_INPUT", "no API key: pass options.apiKey or set CTXFOLD_LLM_API_KEY or OPENAI_API_KEY", { path: "apiKey" });
  }
  const baseUrl = nonEmpty(options.baseUrl) ?? nonEmpty(env.CTXFOLD_LLM_BASE_URL) ?? nonEmpty(env.OPENAI_BASE_URL) ?? kLlmSummarizerDefaults.baseUrl;
  const url = chatCompletionsUrl(baseUrl, apiKey);
  const model = nonEmpty(options.model) ?? nonEmpty(env.CTXFOLD_LLM_MODEL) ?? kLlmSummarizerDefaults.model;
  const timeoutMs = positiveNumber(options.timeoutMs ?? kLlmSummarizerDefaults.timeoutMs, "timeoutMs", false, 1);
  const maxRetries = positiveNumber(options.maxRetries ?? kLlmSummarizerDefaults.maxRetries, "maxRetries", true, 0);
  const maxInputTokens = positiveNumber(options.maxInputTokens ?? kLlmSummarizerDefaults.maxInputTokens, "maxInputTokens", false, 1);
  const fetchImpl = options.fetch ?? globalThis.fetch;
  if (typeof fetchImpl !== "function") throw new CtxfoldError("E_BAD_INPUT", "expected a fetch function", { path: "fetch" });
  if (options.fallback !== undefined && typeof options.fallback !== "function")
    throw new CtxfoldError("E_BAD_INPUT", "expected a Summarizer", { path: "fallback" });
  if (options.onEvent !== undefined && typeof options.onEvent !== "function") throw new CtxfoldError("E_BAD_INPUT", "expected a function", { path: "onEvent" });
  const counter = options.counter ?? new TokenCounter();
  return { apiKey, url, model, timeoutMs, maxRetries, maxInputTokens, fetch: fetchImpl, counter, fallback: options.fallback, onEvent: options.onEvent };
}

/** The chat-completions URL under `baseUrl`; an E_BAD_INPUT quoting it (secrets and the key redacted) when it is not http(s). */
function chatCompletionsUrl(baseUrl: string, apiKey: string): string {
  try {
    const u = new URL(baseUrl.replace(/\/+$/, "") + "/chat/completions");
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("not http(s)");
    return u.href;
  } catch {
    throw new CtxfoldError(
      "E_BAD_INPUT",
      `not an http(s) URL: ${JSON.stringify(redactSecrets(baseUrl).split(apiKey).join("[REDACTED]"))} (options.baseUrl, CTXFOLD_LLM_BASE_URL or OPENAI_BASE_URL)`,
      { path: "baseUrl" },
    );
  }
}

/**
 * One llmSummarizer: asks the model, retries an answer over the target a bounded number of
 * times, and falls back on every other failure (see the module comment). The key stays in a
 * private field; the caller holds only the function llmSummarizer returns.
 */
class ChatSummarizer {
  readonly #s: LlmSettings;
  readonly #extractive: SyncSummarizer;

  constructor(settings: LlmSettings) {
    this.#s = settings;
    this.#extractive = extractiveSummarizer({ counter: settings.counter });
  }

  /** The summary of `text` within `targetTokens`: never throws nor rejects. */
  async summarize(text: string, targetTokens: number, label: string): Promise<string> {
    const lbl = typeof label === "string" ? label : String(label);
    try {
      if (typeof text !== "string" || typeof targetTokens !== "number" || Number.isNaN(targetTokens)) {
        this.#emit({ type: "summarizer_fallback", label: lbl, reason: `bad_input: expected a string and a number of tokens`, attempt: 0 });
        return "";
      }
      const target = Math.floor(targetTokens);
      if (target <= 0 || text.length === 0) return "";
      const tokens = this.#s.counter.estimate(text);
      if (tokens <= target) return this.#extractive(text, target, lbl);
      if (tokens > this.#s.maxInputTokens) return await this.#fallBack(text, target, lbl, `input_too_large: ${tokens} > ${this.#s.maxInputTokens} tokens`, 0);
      return await this.#askModel(text, target, lbl);
    } catch (err) {
      // Nothing above should throw; if something does, the caller still gets a summary.
      try {
        return await this.#fallBack(text, Math.max(0, Math.floor(targetTokens)), lbl, `internal_error: ${err instanceof Error ? err.message : String(err)}`, 0);
      } catch {
        return "";
      }
    }
  }

  /**
   * The model's answer within the target: requests until one fits, each retry asking more firmly
   * (instruction), within one deadline; the fallback after the last retry or any other failure.
   */
  async #askModel(text: string, target: number, label: string): Promise<string> {
    const { counter, timeoutMs, maxRetries } = this.#s;
    const deadline = Date.now() + timeoutMs;
    const sent = redactSecrets(text);
    let previous: { tokens: number; truncated: boolean } | undefined;
    for (let attempt = 1; ; attempt++) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) return await this.#fallBack(text, target, label, `timeout: no answer within ${timeoutMs} ms`, attempt - 1);
      const outcome = await this.#request(
        [
          { role: "system", content: instruction(oneLineLabel(label), target, previous) },
          { role: "user", content: sent },
        ],
        target,
        remaining,
      );
      if (!outcome.ok) return await this.#fallBack(text, target, label, outcome.reason, attempt);
      const answer = redactSecrets(this.#withoutKey(outcome.content).trim());
      if (answer.length === 0) return await this.#fallBack(text, target, label, "empty_answer", attempt);
      const got = counter.estimate(answer);
      if (got <= target && outcome.finishReason !== "length") return answer;
      const reason = got > target ? `output_exceeds_target: ${got} > ${target} tokens` : `output_truncated: the answer hit max_tokens`;
      if (attempt > maxRetries) return await this.#fallBack(text, target, label, reason, attempt);
      this.#emit({ type: "summarizer_retry", label, reason, attempt });
      previous = { tokens: got, truncated: got <= target };
    }
  }

  /** One chat-completions request, aborted when `remainingMs` pass: the answer, or why there is none. */
  async #request(messages: { role: string; content: string }[], target: number, remainingMs: number): Promise<Outcome> {
    const { url, model, apiKey, timeoutMs, fetch: fetchImpl } = this.#s;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), remainingMs);
    try {
      const res = await fetchImpl(url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json", authorization: `Bearer ${apiKey}` },
        body: JSON.stringify({ model, messages, max_tokens: Math.max(16, Math.ceil(target * kLlmSummarizerDefaults.maxTokensFactor)), temperature: 0 }),
        signal: controller.signal,
      });
      return completionOutcome(res, await res.text());
    } catch (err) {
      if (controller.signal.aborted) return { ok: false, reason: `timeout: no answer within ${timeoutMs} ms` };
      return { ok: false, reason: networkFailure(err) };
    } finally {
      clearTimeout(timer);
    }
  }

  /** The fallback's answer on the original text; the extractive summariser when the fallback fails. */
  async #fallBack(text: string, target: number, label: string, reason: string, attempt: number): Promise<string> {
    const { fallback, counter } = this.#s;
    let why = reason;
    if (fallback) {
      try {
        const out = await fallback(text, target, label);
        if (typeof out === "string" && counter.estimate(out) <= target) {
          this.#emit({ type: "summarizer_fallback", label, reason: why, attempt });
          return out;
        }
        why +=
          typeof out === "string"
            ? `; the fallback answered over the target (${counter.estimate(out)} > ${target} tokens): used the extractive summariser`
            : "; the fallback answered no string: used the extractive summariser";
      } catch (err) {
        why += `; the fallback failed (${err instanceof Error ? err.message : String(err)}): used the extractive summariser`;
      }
    }
    this.#emit({ type: "summarizer_fallback", label, reason: why, attempt });
    try {
      return this.#extractive(text, target, label);
    } catch {
      return "";
    }
  }

  /** Tells onEvent, with the reason scrubbed. */
  #emit(e: LlmSummarizerEvent): void {
    const { onEvent } = this.#s;
    try {
      onEvent?.({ ...e, reason: this.#scrub(e.reason) });
    } catch {
      // an observer's failure is not the summariser's
    }
  }

  /** A reason as an event may carry it: without the key or any secret, one line, bounded. */
  #scrub(s: string): string {
    const clean = redactSecrets(this.#withoutKey(s)).replace(/\s+/g, " ").trim();
    return clean.length > 300 ? clean.slice(0, 299) + "…" : clean;
  }

  /** `s` with the API key replaced, in case a server echoes it back. */
  #withoutKey(s: string): string {
    return s.split(this.#s.apiKey).join("[REDACTED]");
  }
}

/** A chat completion's reply as an outcome: its first choice's text and finish reason, or why there is none. */
function completionOutcome(res: Response, body: string): Outcome {
  const quote = (): string => body.slice(0, kLlmSummarizerDefaults.reasonBodyChars);
  if (!res.ok) return { ok: false, reason: `http_${res.status}: ${quote()}` };
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { ok: false, reason: `invalid_json: ${quote()}` };
  }
  const choice = (json as { choices?: { message?: { content?: unknown }; finish_reason?: unknown }[] } | null)?.choices?.[0];
  const content = textOf(choice?.message?.content);
  if (content === undefined) {
    const error = (json as { error?: { message?: unknown } } | null)?.error;
    const detail = typeof error?.message === "string" ? `: ${error.message}` : "";
    return { ok: false, reason: `invalid_response: no choices[0].message.content${detail}` };
  }
  return { ok: true, content, finishReason: choice?.finish_reason };
}

/** Why a request failed without a reply (not a timeout): the error and its cause's code or message. */
function networkFailure(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown; message?: unknown } })?.cause;
  const detail = typeof cause?.code === "string" ? cause.code : typeof cause?.message === "string" ? cause.message : "";
  return `network_error: ${err instanceof Error ? err.message : String(err)}${detail ? ` (${detail})` : ""}`;
}

/** A message content as text: a string, or the text parts of a content array. */
function textOf(content: unknown): string | undefined {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    const texts = content.map((p) => (typeof p === "string" ? p : typeof (p as { text?: unknown })?.text === "string" ? (p as { text: string }).text : ""));
    const joined = texts.join("");
    return joined.length > 0 ? joined : undefined;
  }
  return undefined;
}

/**
 * The system instruction. A retry (`previous` set) says how long the last answer was (or that it
 * was cut off), repeats the target and asks for less, so the model has a reason to cut harder.
 */
function instruction(label: string, target: number, previous?: { tokens: number; truncated: boolean }): string {
  const words = (n: number): number => Math.max(1, Math.floor(n * 0.75));
  const lines = [
    "You compress context for an AI agent that will continue its task from your summary alone.",
    `Summarise the text the user sends (${label}) in at most ${target} tokens (about ${words(target)} words).`,
    "Keep verbatim what the agent must act on: error messages and their types, failing tests, file paths, identifiers, commands, numbers, and the final result or status.",
    "Drop repetition, boilerplate and progress noise. Reply with the summary only: no preamble, no code fences, no commentary.",
  ];
  if (previous !== undefined) {
    const aim = Math.max(1, Math.floor(target * kLlmSummarizerDefaults.retryShare));
    lines.push(
      previous.truncated
        ? `Your previous summary was cut off at the length limit before it ended; the limit is ${target} tokens. This is a hard limit.`
        : `Your previous summary was ${previous.tokens} tokens long, over the limit of ${target} tokens. This is a hard limit.`,
      `Write a much shorter summary this time: aim for ${aim} tokens (about ${words(aim)} words), keeping only the most important facts.`,
    );
  }
  return lines.join("\n");
}
