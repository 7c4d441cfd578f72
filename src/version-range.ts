/**
 * The version ranges of ctxfold's peerDependencies, and whether a version is inside one. Only
 * the forms package.json uses are read; any other range is not guessed at (parseRange gives
 * undefined, and the peer check then checks nothing).
 *
 *   range   := ("^" | ">=") version
 *   version := core ["-" pre] ["+" build]          (SemVer 2.0.0)
 *   core    := num "." num "." num                 (num: 0, or digits without a leading zero)
 *   pre     := ident *("." ident)                  (ident: a num, or [0-9A-Za-z-]+ with a non-digit)
 *   build   := [0-9A-Za-z-]+ *("." [0-9A-Za-z-]+)  (ignored in comparisons)
 *
 * No spaces, `v` or `=` prefixes, x-ranges, `~`, hyphen ranges or `||`.
 *
 * Decisions:
 * - Versions compare by SemVer precedence (a prerelease precedes its release: 6.0.0-beta.3 <
 *   6.0.0), so `>=6.0.0` refuses the betas of 6.0.0 but takes 7.0.0-beta.1: the check is there to
 *   catch versions too old for ctxfold, not newer prereleases the range's floor admits. npm's
 *   semver refuses every prerelease by default; we read ranges as its `includePrerelease` does.
 * - `^X.Y.Z` is npm's caret: below the next major (`<(X+1).0.0-0`, so the next major's
 *   prereleases are outside too); for 0.Y.Z below 0.(Y+1).0, for 0.0.Z only 0.0.Z.
 */

/** A parsed version: its numbers and prerelease identifiers (numeric ones as numbers); build metadata dropped. */
export interface Version {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
  readonly prerelease: readonly (string | number)[];
}

/** A parsed range: versions from `floor` (inclusive) up to `ceiling` (exclusive), when there is one. */
export interface VersionRange {
  readonly floor: Version;
  readonly ceiling?: Version;
}

const kNum = "0|[1-9]\\d*";
const kIdent = `(?:${kNum}|\\d*[A-Za-z-][0-9A-Za-z-]*)`;
const kVersion = new RegExp(`^(${kNum})\\.(${kNum})\\.(${kNum})(?:-(${kIdent}(?:\\.${kIdent})*))?(?:\\+[0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*)?$`);

/** `text` as a SemVer 2.0.0 version, or undefined when it is not one (or a number is past 2^53). */
export function parseVersion(text: string): Version | undefined {
  const m = kVersion.exec(text);
  if (!m) return undefined;
  const [major, minor, patch] = [m[1], m[2], m[3]].map(Number) as [number, number, number];
  if (![major, minor, patch].every(Number.isSafeInteger)) return undefined;
  const prerelease = m[4] === undefined ? [] : m[4].split(".").map((id) => (/^\d+$/.test(id) ? Number(id) : id));
  if (prerelease.some((id) => typeof id === "number" && !Number.isSafeInteger(id))) return undefined;
  return { major, minor, patch, prerelease };
}

/** `text` as a range of the grammar above, or undefined for any other form. */
export function parseRange(text: string): VersionRange | undefined {
  const op = text.startsWith(">=") ? ">=" : text.startsWith("^") ? "^" : undefined;
  if (op === undefined) return undefined;
  const floor = parseVersion(text.slice(op.length));
  if (floor === undefined) return undefined;
  if (op === ">=") return { floor };
  const { major, minor, patch } = floor;
  const next = major > 0 ? [major + 1, 0, 0] : minor > 0 ? [0, minor + 1, 0] : [0, 0, patch + 1];
  return { floor, ceiling: { major: next[0]!, minor: next[1]!, patch: next[2]!, prerelease: [0] } };
}

/** SemVer precedence: negative when a precedes b, 0 when equal (build metadata aside), positive when it follows. */
export function compareVersions(a: Version, b: Version): number {
  const core = a.major - b.major || a.minor - b.minor || a.patch - b.patch;
  if (core !== 0) return Math.sign(core);
  // A release follows its prereleases.
  if (a.prerelease.length === 0 || b.prerelease.length === 0) return Math.sign(b.prerelease.length - a.prerelease.length);
  for (let i = 0; i < Math.min(a.prerelease.length, b.prerelease.length); i++) {
    const x = a.prerelease[i]!;
    const y = b.prerelease[i]!;
    if (x === y) continue;
    // Numeric identifiers precede alphanumeric ones; like kinds compare as numbers or in ASCII order.
    if (typeof x !== typeof y) return typeof x === "number" ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return Math.sign(a.prerelease.length - b.prerelease.length);
}

/** Whether `version` is inside `range`. */
export function inRange(version: Version, range: VersionRange): boolean {
  return compareVersions(version, range.floor) >= 0 && (range.ceiling === undefined || compareVersions(version, range.ceiling) < 0);
}

/**
 * Whether the version `version` is inside the range `range`, both as text: undefined when either
 * is not of the grammar above (the caller cannot tell, and does not guess).
 */
export function satisfiesRange(version: string, range: string): boolean | undefined {
  const v = parseVersion(version);
  const r = parseRange(range);
  return v === undefined || r === undefined ? undefined : inRange(v, r);
}
