/**
 * Checks canonical messages against the rules of the provider they will be rendered for, and
 * tells which issues a transformation (compaction) introduced. Runs on every compaction output,
 * so it is one pass per rule over messages and parts, with the call/result pairing shared.
 */
import type { Format } from "../adapters/common.js";
import { inputPaths, type InputPaths } from "../adapters/input-paths.js";
import type { Message } from "../model/schema.js";
import { pairCalls, type Pairing } from "./pairing.js";
import type { Finding, Issue } from "./issues.js";
import { canonicalPath } from "./paths.js";
import { kRules, severityOf, usesThinking, type RuleContext } from "./rules.js";

export interface ValidationResult {
  /** No error-severity issue: the provider should accept the transcript. */
  ok: boolean;
  /** Ordered by message index, then by rule order (kRules). */
  issues: Issue[];
}

export interface ValidateOptions {
  /**
   * Whether the request uses extended thinking (Anthropic's THINKING_DROPPED). Pass it
   * explicitly when checking a compaction output, which may have dropped every reasoning part of
   * a thinking transcript.
   * @default whether some assistant message has a reasoning part
   */
  thinking?: boolean;
}

/** A RuleContext whose analyses are computed on first use and then shared. */
class Context implements RuleContext {
  #pairing: Pairing | undefined;
  #thinking: boolean | undefined;
  /** The input's paths (null: the messages have no input to name, canonical paths then); decided when an issue is first named. */
  #paths: InputPaths | null | undefined;

  constructor(
    readonly messages: readonly Message[],
    readonly format: Format,
    thinking: boolean | undefined,
  ) {
    this.#thinking = thinking;
  }

  get pairing(): Pairing {
    return (this.#pairing ??= pairCalls(this.messages, this.format, (i, k) => this.pathOf(i, k)));
  }

  pathOf(index: number, part?: number): string {
    const paths = (this.#paths ??= inputPaths(this.messages) ?? null);
    return paths ? paths(index, part) : canonicalPath(index, part);
  }

  /** The issue a rule's finding makes: its place named in the input's shape (Issue's path). */
  issueOf(f: Finding, code: Issue["code"], severity: Issue["severity"]): Issue {
    return { code, severity, message: f.message, path: this.pathOf(f.index, f.part), canonicalPath: f.path, index: f.index, key: f.key };
  }

  get thinking(): boolean {
    return (this.#thinking ??= usesThinking(this.messages));
  }
}

/** Validates `messages` for `format`: every rule of kRules that applies to the format. */
export function validate(messages: readonly Message[], format: Format, options: ValidateOptions = {}): ValidationResult {
  const ctx = new Context(messages, format, options.thinking);
  const issues: Issue[] = [];
  for (const rule of kRules) {
    if (!rule.formats.includes(format)) continue;
    const severity = severityOf(rule, format);
    for (const f of rule.check(ctx)) issues.push(ctx.issueOf(f, rule.code, severity));
  }
  issues.sort((a, b) => a.index - b.index);
  return { ok: !issues.some((i) => i.severity === "error"), issues };
}

const identity = (i: Issue): string => `${i.code}\u0000${i.key}`;

/**
 * The issues of `after` that `before` does not have, matched by code + key (never by index or
 * path, which compaction shifts). Matching counts: if `before` has an issue n times and `after`
 * m > n times, the last m - n of them in `after` are new.
 */
export function newViolations(before: ValidationResult, after: ValidationResult): Issue[] {
  const allowed = new Map<string, number>();
  for (const i of before.issues) allowed.set(identity(i), (allowed.get(identity(i)) ?? 0) + 1);
  const seen = new Map<string, number>();
  const out: Issue[] = [];
  for (const i of after.issues) {
    const id = identity(i);
    const k = (seen.get(id) ?? 0) + 1;
    seen.set(id, k);
    if (k > (allowed.get(id) ?? 0)) out.push(i);
  }
  return out;
}
