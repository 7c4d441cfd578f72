/**
 * The one protocol every contender of `ctxfold eval` speaks (contenders.ts, tail-baseline.ts):
 * OpenAI Chat Completions messages in, the same out, a token budget; what a call answers besides
 * the compacted prompt (a typed refusal, refs and how to read them, the epoch and stages).
 */
import type { OpenAIChatMessage } from "../adapters/openai-chat.js";
import type { Message } from "../model/schema.js";
import type { StageReport } from "../policy/index.js";

export interface CompactOutput {
  /** The compacted prompt, OpenAI Chat Completions messages. */
  messages: OpenAIChatMessage[];
  /** The contender's typed refusal: even what it must keep does not fit. */
  infeasible?: boolean;
  /** Refs of everything the contender removed or shortened (ctxfold). */
  refs?: string[];
  /** A ref's stored text; throws when it does not resolve. */
  resolve?: (ref: string) => string;
  /** Something odd the adapter had to mend (tallied and reported under the tables). */
  anomaly?: string;
  /** ctxfold: the session's epoch after the call, whether the call started it, and its stages. */
  epoch?: number;
  newEpoch?: boolean;
  stages?: StageReport[];
  /** ctxfold: the call's tokens before and after by the compactor's own count (CompactResult's), where its stages start and end. */
  compactorTokens?: { tokensBefore: number; tokensAfter: number };
  /** ctxfold: the compacted prompt as canonical messages, whose ids and marks `--misses` reads. */
  canonical?: Message[];
}

export interface Contender {
  name: string;
  /** Package and version ("ctxfold 0.1.0", "@langchain/core 1.1.0"), or what the contender is ("baseline"). */
  version: string;
  /** How it is configured and how it counts tokens, for the benchmarks page's list of contenders. */
  note: string;
  /** Called before the first prompt point of each run at each budget (stateful contenders start afresh). */
  startRun?(): void;
  compact(messages: OpenAIChatMessage[], budget: number): Promise<CompactOutput>;
}
