/**
 * Deprecated names of settings. A renamed setting still reads its old name as input, as the new
 * one; what a config resolves to holds the new name only. The same value under both names is
 * that value; two different values are E_BAD_INPUT naming the old name, since the config cannot
 * mean both.
 *
 * The renames so far give "keep the recent N" one name across the three configs, `keepRecent`:
 * the tiered compactor's `preserveRecentSteps`, the step compactor's `recentWindow` and block
 * compaction's `keepRecentTurns`. Each counts its own unit, the one its compaction cuts at —
 * tool exchanges (an assistant message calling tools, with its results), steps (one call with
 * its result), turns (the messages of one turn id) — so the one name carries no unit, and each
 * field's doc says which.
 */
import { CtxfoldError, shownValue } from "./errors.js";

/** A config's deprecated setting names, each to the name it has now. */
export type DeprecatedNames = Readonly<Record<string, string>>;

/**
 * `input` with every deprecated name of `names` read as its new name: a copy without the old
 * keys, or `input` itself when it holds none (or is no object: the schema reports that). An old
 * name given `undefined` counts as not given, as a new one does.
 */
export function readDeprecatedNames<T>(input: T, names: DeprecatedNames, path: string): T {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return input;
  const given = input as Record<string, unknown>;
  let read: Record<string, unknown> | undefined;
  for (const [old, name] of Object.entries(names)) {
    if (!Object.hasOwn(given, old)) continue;
    read ??= { ...given };
    delete read[old];
    const value = given[old];
    if (value === undefined) continue;
    const current = given[name];
    if (current !== undefined && current !== value) {
      throw new CtxfoldError(
        "E_BAD_INPUT",
        `the deprecated name of ${name}, given beside it with another value (${shownValue(value)} and ${shownValue(current)}): give ${name} only`,
        { path: `${path}.${old}` },
      );
    }
    read[name] = value;
  }
  return (read ?? input) as T;
}

/**
 * A schema issue about the settings `readDeprecatedNames` read, named as the caller wrote them:
 * a setting given under its deprecated name only is reported under that name.
 */
export function issueAsGiven<I extends { readonly path: readonly PropertyKey[] }>(issue: I, input: unknown, names: DeprecatedNames): I {
  if (typeof input !== "object" || input === null) return issue;
  const given = input as Record<string, unknown>;
  const [field, ...rest] = issue.path;
  if (typeof field !== "string" || given[field] !== undefined) return issue;
  const old = Object.keys(names).find((o) => names[o] === field && given[o] !== undefined);
  return old === undefined ? issue : { ...issue, path: [old, ...rest] };
}
