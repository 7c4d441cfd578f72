import { badValueError, optionsObject } from "../errors.js";
import { RecallHintSetting } from "./config.js";
import type { CompactCallOptions } from "./types.js";

/** A positive integer token budget, or a typed error naming `path`. */
export function checkBudget(budget: unknown, path = "options.budget"): void {
  if (typeof budget !== "number" || !Number.isInteger(budget) || budget <= 0) throw badValueError(path, "a positive integer token budget", budget);
}

/** An epoch-ms deadline, or `{ remainingMs }`; a NaN or a non-number would silently mean no deadline. */
export function checkDeadline(deadline: unknown, path = "options.deadline"): void {
  if (deadline === undefined || (typeof deadline === "number" && !Number.isNaN(deadline))) return;
  if (typeof deadline !== "object" || deadline === null) throw badValueError(path, "an epoch-ms number or { remainingMs }", deadline);
  const ms = (deadline as { remainingMs?: unknown }).remainingMs;
  if (typeof ms !== "number" || Number.isNaN(ms)) throw badValueError(`${path}.remainingMs`, "a number of milliseconds", ms);
}

/** A compact call's options, checked before any of them is read. */
export function checkCallOptions(options: unknown): CompactCallOptions {
  const o = optionsObject(options, "{ budget, format?, deadline?, recallHint? }");
  checkBudget(o.budget);
  checkDeadline(o.deadline);
  if (o.recallHint !== undefined && !RecallHintSetting.safeParse(o.recallHint).success) {
    throw badValueError("options.recallHint", "true, false or one line of at most 300 characters", o.recallHint);
  }
  return o as unknown as CompactCallOptions;
}

/**
 * Milliseconds left before `deadline` at `now` (Infinity without one); a `{ remainingMs }`
 * deadline counts from `started`, when the call began.
 */
export function remainingMs(deadline: CompactCallOptions["deadline"], now: number, started: number): number {
  if (deadline === undefined) return Infinity;
  return typeof deadline === "number" ? deadline - now : deadline.remainingMs - (now - started);
}
