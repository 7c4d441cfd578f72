/**
 * Secret redaction for what compaction writes into a prompt: observations, summaries, error
 * heads, minimal arguments, ledger facts, merge and turn summaries never echo a credential.
 * Each pattern names the kind of secret, and a match becomes `[REDACTED:<kind>]`, so the model
 * still sees that a key was there and which kind (often what it needs to resume: "the request
 * sent an OpenAI key"). Offloaded originals are stored as they are unless the reducer's
 * `redactOffload` is set: the store is the recovery path and sits with the user's own files.
 *
 * Two ways a secret is known:
 * - By its shape, in any text: patterns anchored on the providers' documented prefixes, so
 *   ordinary text, hashes and ids do not match; key-value forms (`"api_key": "…"`,
 *   `PASSWORD=…`, `Authorization: Bearer …`, `--token …`) keep the key and replace only the value.
 * - By its name, in structured values (a tool call's JSON arguments): every string under a
 *   secret-named key (isSecretKey) is a secret whatever it looks like, `[REDACTED:<kind>]` with
 *   the kind of its shape when the whole value has one, else `[REDACTED:credential]`. Numbers,
 *   booleans and null under such a key stay (`token_count: 5000` is a count, not a key).
 */
import type { Message, ToolCallPart } from "../model/schema.js";

export interface SecretPattern {
  kind: string;
  /** Global regex; with a capture group named `value`, only that group is replaced. */
  re: RegExp;
  /**
   * A cheap test that every match of `re` passes (a literal it cannot match without), tried on
   * the text as the patterns before it left it; where it fails, `re` is not run. Absent: always run.
   */
  needs?: RegExp;
  /**
   * A regex (searched globally) every match of `re` holds a match of, in the run of word characters and
   * hyphens that starts the match (after at most one quote): `re` is then tried only at the
   * starts of those runs up to each such match, not at every character (the key-value patterns,
   * whose `[\w-]*` prefix made a scan of a long text try each word at each of its characters).
   * Absent: `re` runs as a global regex.
   */
  near?: RegExp;
}

const kKeyNames =
  "(?:api[_-]?key|apikey|access[_-]?key(?:[_-]?id)?|secret(?:[_-]?access)?(?:[_-]?key)?|client[_-]?secret|auth[_-]?token|access[_-]?token|refresh[_-]?token|id[_-]?token|token|password|passwd|pwd|private[_-]?key)";

/** A part of every name in kKeyNames. */
const kKeyNameParts = /key|secret|token|passw|pwd/i;
const kKeyNamePartsAll = new RegExp(kKeyNameParts.source, "gi");

/**
 * The last words of a secret-named key (isSecretKey): the key names its value as one of these.
 * A superset of kKeyNames (the names the text forms look for, kept to words a cheap check can
 * find), with the names a structured value's keys add: `auth`, `authorization`, `credentials`,
 * `cookie`, `pass`, `sessionid`.
 */
const kSecretWords: ReadonlySet<string> = new Set([
  "password",
  "passwords",
  "passwd",
  "passphrase",
  "pwd",
  "pass",
  "secret",
  "secrets",
  "token",
  "apikey",
  "privatekey",
  "auth",
  "authorization",
  "credential",
  "credentials",
  "cookie",
  "cookies",
  "sessionid",
  "jsessionid",
]);
/** The words that make a key ending in `key` a secret one (`api_key`, `private_key`; `sort_key` is not). */
const kKeyQualifiers: ReadonlySet<string> = new Set([
  "api",
  "access",
  "private",
  "secret",
  "client",
  "signing",
  "encryption",
  "master",
  "session",
  "account",
  "auth",
  "ssh",
  "app",
  "license",
]);

/** The words of a key name: split at `_`, `-`, `.`, spaces and camelCase humps, lower-cased (`githubToken` → github, token). */
function keyWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/**
 * Whether a key names a secret: its last word is one of kSecretWords (`password`, `db_password`,
 * `githubToken`, `X-Auth-Token`, `Authorization`, `credentials`, `Cookie`), or is `key` after a
 * qualifier of kKeyQualifiers (`api_key`, `apiKey`, `x-api-key`, `secret_access_key`,
 * `private_key`). Case does not matter. A key whose secret word is not its last names something
 * about a secret, not the secret: `max_tokens`, `tokens_used`, `token_count`, `password_file`,
 * `auth_type`, `secret_name`.
 */
export function isSecretKey(name: string): boolean {
  let hit = kSecretKeyMemo.get(name);
  if (hit === undefined) {
    const words = keyWords(name);
    const last = words.at(-1);
    hit = last !== undefined && (kSecretWords.has(last) || (last === "key" && words.length > 1 && kKeyQualifiers.has(words[words.length - 2])));
    if (kSecretKeyMemo.size >= kSecretKeyMemoSize) kSecretKeyMemo.clear();
    kSecretKeyMemo.set(name, hit);
  }
  return hit;
}

/** Argument keys repeat across calls (a few hundred distinct in a corpus of thousands of calls): isSecretKey's answers, bounded. */
const kSecretKeyMemo = new Map<string, boolean>();
const kSecretKeyMemoSize = 4096;

export const kSecretPatterns: readonly SecretPattern[] = [
  {
    kind: "private-key",
    needs: /PRIVATE KEY/,
    re: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|$)/g,
  },
  { kind: "anthropic-key", needs: /sk-ant-/, re: /\bsk-ant-[A-Za-z0-9_-]{20,}/g },
  { kind: "openai-key", needs: /sk-/, re: /\bsk-(?:proj-|svcacct-|admin-|live-|test-)?[A-Za-z0-9_-]{20,}/g },
  { kind: "github-token", needs: /gh[pousr]_|github_pat_/, re: /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})/g },
  { kind: "slack-token", needs: /xox/, re: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g },
  { kind: "aws-access-key", needs: /AKIA|ASIA|AGPA|AIDA|AROA|ANPA/, re: /\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b/g },
  { kind: "google-api-key", needs: /AIza/, re: /\bAIza[0-9A-Za-z_-]{35}/g },
  { kind: "stripe-key", needs: /k_(?:live|test)_/, re: /\b[rsp]k_(?:live|test)_[0-9A-Za-z]{16,}/g },
  { kind: "jwt", needs: /eyJ/, re: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g },
  { kind: "bearer-token", needs: /Bearer|Basic|token/, re: /\b(?:Bearer|Basic|token)\s+(?<value>[A-Za-z0-9._~+/-]{16,}=*)/g },
  // "api_key": "…", 'password': '…', api_key="…"
  {
    kind: "credential",
    needs: kKeyNameParts,
    near: kKeyNamePartsAll,
    re: new RegExp(String.raw`(["']?)\b[\w-]*${kKeyNames}\1\s*[:=]\s*(["'])(?<value>(?:(?!\2)[^\\\n]|\\.){4,})\2`, "gi"),
  },
  // API_KEY=… and password: … in env files, shell commands and logs (unquoted values)
  {
    kind: "credential",
    needs: kKeyNameParts,
    near: kKeyNamePartsAll,
    re: new RegExp(String.raw`\b[A-Za-z0-9_]*${kKeyNames}[A-Za-z0-9_]*\s*[=:]\s*(?<value>(?!\[REDACTED)[^\s"',;&|]{6,})`, "gi"),
  },
  // --password …, --api-key … in commands: a flag named for a secret, its value after a space
  {
    kind: "credential",
    needs: kKeyNameParts,
    near: kKeyNamePartsAll,
    re: new RegExp(String.raw`--(?:[A-Za-z0-9]+-)*${kKeyNames}[ \t]+(?<value>(?!-|\[REDACTED)(?:"[^"\n]{4,}"|'[^'\n]{4,}'|[^\s"',;&|]{4,}))`, "gi"),
  },
  { kind: "url-password", needs: /:\/\//, re: /\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:(?<value>[^\s@/]{3,})@/g },
];

const kQuickCheck =
  /sk-|gh[pousr]_|github_pat_|xox|AKIA|ASIA|AGPA|AIDA|AROA|ANPA|AIza|_live_|_test_|eyJ|PRIVATE KEY|bearer|basic |token|key|secret|passw|pwd|:\/\/[^\s:/@]+:/i;

/** `text` with every secret replaced by `[REDACTED:<kind>]`. Cheap when nothing matches. */
export function redactSecrets(text: string, patterns: readonly SecretPattern[] = kSecretPatterns): string {
  if (!kQuickCheck.test(text)) return text;
  let out = text;
  // Where each `near` regex matches in `out`, kept while `out` is unchanged (the key-value patterns share one).
  let anchors: { text: string; near: RegExp; at: number[] } | undefined;
  for (const p of patterns) {
    if (p.needs && !p.needs.test(out)) continue;
    if (p.near) {
      if (anchors?.text !== out || anchors.near !== p.near) anchors = { text: out, near: p.near, at: matchStarts(out, p.near) };
      out = replaceNear(out, p, anchors.at);
      continue;
    }
    p.re.lastIndex = 0;
    out = out.replace(p.re, (...m: unknown[]) => {
      const groups = m.at(-1);
      return redaction(p.kind, m[0] as string, typeof groups === "object" && groups ? (groups as Record<string, string | undefined>).value : undefined);
    });
  }
  return out;
}

/** The replacement of a match `whole` of a pattern of `kind`: all of it, or only its `value` group. */
function redaction(kind: string, whole: string, value: string | undefined): string {
  if (value === undefined) return `[REDACTED:${kind}]`;
  const at = whole.lastIndexOf(value);
  return whole.slice(0, at) + `[REDACTED:${kind}]` + whole.slice(at + value.length);
}

/** A pattern's regex tried only where it is put (sticky), and its `near` searched globally, by the regex they are made from. */
const kSticky = new WeakMap<RegExp, RegExp>();
const kGlobal = new WeakMap<RegExp, RegExp>();

const isRunUnit = (c: number) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f || c === 0x2d;

/**
 * `text` with every match of `p.re` redacted, as a global replace would (the same matches,
 * leftmost first, each search going on after the last match), trying `p.re` only where a match
 * can start (SecretPattern.near): for each of `anchors` (where `p.near` matches in `text`,
 * ascending), at each position from the start of the run of word characters and hyphens it ends
 * (or one quote before it) up to it. Every other position is not the start of any match, and a
 * position tried once is not tried again.
 */
function replaceNear(text: string, p: SecretPattern, anchors: readonly number[]): string {
  let sticky = kSticky.get(p.re);
  if (sticky === undefined) kSticky.set(p.re, (sticky = new RegExp(p.re.source, `${p.re.flags.replace(/[gy]/g, "")}y`)));
  let out = "";
  let from = 0; // where the global search goes on: text before it is written out
  let tried = 0; // positions below it are tried or cannot start a match
  for (const a of anchors) {
    if (a < tried) continue;
    let start = a;
    while (start > tried && isRunUnit(text.charCodeAt(start - 1))) start--;
    if (start > tried && (text.charCodeAt(start - 1) === 0x22 || text.charCodeAt(start - 1) === 0x27)) start--;
    let m: RegExpExecArray | null = null;
    for (let q = start; q <= a && m === null; q++) {
      sticky.lastIndex = q;
      m = sticky.exec(text);
    }
    if (m === null) {
      tried = a + 1;
      continue;
    }
    out += text.slice(from, m.index) + redaction(p.kind, m[0], m.groups?.value);
    from = tried = m.index + Math.max(1, m[0].length);
    if (m[0].length === 0) out += text.slice(m.index, from);
  }
  return from === 0 ? text : out + text.slice(from);
}

/** Every position of `text` where `re` (searched globally whatever its flags) has a match, ascending. */
function matchStarts(text: string, re: RegExp): number[] {
  let g = re.global ? re : kGlobal.get(re);
  if (g === undefined) kGlobal.set(re, (g = new RegExp(re.source, `${re.flags}g`)));
  const at: number[] = [];
  g.lastIndex = 0;
  for (let m = g.exec(text); m !== null; m = g.exec(text)) {
    at.push(m.index);
    g.lastIndex = m.index + 1;
  }
  return at;
}

/**
 * Characters either side of a cut searched for a secret across it: a name with its value fits in
 * kAcrossMargin (the cuts themselves keep whole any token of up to 1,024 characters, and no key
 * redaction knows is one token longer), a PEM block (~3,200 characters for a 4,096-bit key) in
 * kPemMargin.
 */
const kAcrossMargin = 1024;
const kPemMargin = 4096;

/**
 * Where a cut at `at` would split a secret redactSecrets knows: the span [start, end) of the
 * secrets found near the cut that begin before `at` and end after it (the union where several
 * do), or undefined. A text cut there and redacted in its pieces would show a piece as plain
 * text: a key cut in two, or a value cut off from the name (`password: `) that marks it. Ranges
 * are of the secret's whole match, name included.
 */
export function secretAcross(text: string, at: number, patterns: readonly SecretPattern[] = kSecretPatterns): { start: number; end: number } | undefined {
  if (at <= 0 || at >= text.length) return undefined;
  const around = (margin: number) => {
    const from = Math.max(0, at - margin);
    return { from, near: text.slice(from, Math.min(text.length, at + margin)) };
  };
  const narrow = around(kAcrossMargin);
  const quick = kQuickCheck.test(narrow.near);
  let wide: { from: number; near: string } | undefined;
  let span: { start: number; end: number } | undefined;
  for (const { kind, re, needs } of patterns) {
    const pem = kind === "private-key";
    const { from, near } = pem ? (wide ??= around(kPemMargin)) : narrow;
    if ((!pem && !quick) || (needs && !needs.test(near))) continue;
    re.lastIndex = 0;
    for (let m = re.exec(near); m !== null; m = re.exec(near)) {
      const [start, end] = [from + m.index, from + m.index + m[0].length];
      if (start >= at) break;
      if (end > at) span = { start: Math.min(start, span?.start ?? start), end: Math.max(end, span?.end ?? end) };
      if (m[0].length === 0) re.lastIndex++;
    }
  }
  return span;
}

/** Whether `text` holds anything redactSecrets would replace. */
export function containsSecret(text: string, patterns: readonly SecretPattern[] = kSecretPatterns): boolean {
  return redactSecrets(text, patterns) !== text;
}

/** A whole value that is one redaction. */
const kRedactedWhole = /^\[REDACTED:[\w-]+\]$/;

/** A string under a secret-named key, redacted whole: the kind of its shape when it is one known secret, else credential. */
function redactNamed(value: string, patterns: readonly SecretPattern[]): string {
  if (value === "" || kRedactedWhole.test(value)) return value;
  const shaped = redactSecrets(value, patterns);
  return kRedactedWhole.test(shaped) ? shaped : "[REDACTED:credential]";
}

/**
 * `value` with its secret-named fields redacted (see the module comment), and the strings they
 * held (the same object when it has none). `all`: every other string goes through the shape
 * patterns too. Keys are walked, other strings are not read unless `all`: cheap on large
 * arguments (written file content).
 */
function redactWalk<T>(value: T, patterns: readonly SecretPattern[], all: boolean, found: string[], named = false): T {
  if (typeof value === "string") {
    if (named) {
      const out = redactNamed(value, patterns);
      if (out !== value) found.push(value);
      return out as T;
    }
    return (all ? redactSecrets(value, patterns) : value) as T;
  }
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    value.forEach((v, i) => {
      const r = redactWalk(v, patterns, all, found, named);
      if (r !== v) (out ??= [...value])[i] = r;
    });
    return (out ?? value) as T;
  }
  if (value !== null && typeof value === "object") {
    let out: Record<string, unknown> | undefined;
    for (const [k, v] of Object.entries(value)) {
      const r = redactWalk(v, patterns, all, found, named || isSecretKey(k));
      if (r !== v) (out ??= { ...(value as Record<string, unknown>) })[k] = r;
    }
    return (out ?? value) as T;
  }
  return value;
}

/** A JSON-like value with every string in it redacted: by shape, and whole under a secret-named key (for minimal arguments). */
export function redactValue<T>(value: T, patterns: readonly SecretPattern[] = kSecretPatterns): T {
  return redactWalk(value, patterns, true, []);
}

/**
 * A tool call's parsed arguments with only their secret-named fields redacted (other strings
 * untouched), and the values those fields held, longest first (to redact where the call's own
 * output or command echoes them, see redactEchoes).
 */
export function redactNamedFields<T>(value: T, patterns: readonly SecretPattern[] = kSecretPatterns): { value: T; secrets: string[] } {
  const found: string[] = [];
  const out = redactWalk(value, patterns, false, found);
  return { value: out, secrets: [...new Set(found)].sort((a, b) => b.length - a.length) };
}

/**
 * A tool call's argument string as a reader of its values may see it: JSON arguments with their
 * secret-named fields redacted (redactNamedFields), anything else as it is (the shape patterns
 * see it where it is written).
 */
export function redactArgumentText(args: string, patterns: readonly SecretPattern[] = kSecretPatterns): string {
  const named = namedFieldsOf(args, patterns);
  return named === undefined || named.secrets.length === 0 ? args : JSON.stringify(named.value);
}

/** Secret values shorter than this are not looked for in other text (a short one would hit ordinary words). */
const kMinEchoChars = 6;

/**
 * `value` (a text, or a JSON-like value's strings) with every occurrence of one of `secrets`
 * (redactNamedFields's or argumentSecrets's, longest first) as `[REDACTED:credential]`; the same
 * object where nothing was found.
 */
export function redactEchoes<T>(value: T, secrets: readonly string[]): T {
  if (secrets.length === 0) return value;
  if (typeof value === "string") {
    let out: string = value;
    for (const s of secrets) if (s.length >= kMinEchoChars && out.includes(s)) out = out.split(s).join("[REDACTED:credential]");
    return out as T;
  }
  if (value === null || typeof value !== "object") return value;
  let out: Record<string, unknown> | unknown[] | undefined;
  for (const [k, v] of Object.entries(value)) {
    const r = redactEchoes(v, secrets);
    if (r !== v) (out ??= Array.isArray(value) ? [...value] : { ...(value as Record<string, unknown>) })[k as never] = r as never;
  }
  return (out ?? value) as T;
}

/** A JSON key holding a word every secret-named key holds: arguments without one are not parsed for secrets. */
const kSecretKeyHint = /"[^"\\]*(?:pass|pwd|secret|token|key|auth|credential|cookie|session)[^"\\]*"\s*:/i;
/** The secrets of each tool-call part seen (parts are immutable; a session sees the same ones at every call). */
const kCallSecrets = new WeakMap<object, readonly string[]>();

/**
 * The values of the secret-named fields (isSecretKey) of every tool call's JSON arguments in
 * `messages`, distinct, longest first: what text ctxfold writes about the conversation must not
 * echo, wherever it read them from (a tool's output or the agent's text repeating them).
 */
export function argumentSecrets(messages: readonly Message[]): string[] {
  const all = new Set<string>();
  for (const m of messages) {
    for (const p of m.parts) {
      if (p.type !== "tool-call") continue;
      let found = kCallSecrets.get(p);
      if (found === undefined) kCallSecrets.set(p, (found = callSecrets(p.args)));
      for (const x of found) all.add(x);
    }
  }
  return [...all].sort((a, b) => b.length - a.length);
}

/** Records what a call's arguments hold (the step reducer read them already), so argumentSecrets need not read them again. */
export function noteCallSecrets(part: ToolCallPart, secrets: readonly string[]): void {
  if (!kCallSecrets.has(part)) kCallSecrets.set(part, secrets);
}

/** The secret-named fields' values of one call's argument string. */
function callSecrets(args: string): readonly string[] {
  return namedFieldsOf(args)?.secrets ?? [];
}

/**
 * redactNamedFields of an argument string read as JSON; undefined when it is not JSON, or names
 * no key that could be secret-named (kSecretKeyHint; a string with a `\u` escape, which may spell
 * a key, is always read), so arguments without one are never parsed.
 */
function namedFieldsOf(args: string, patterns: readonly SecretPattern[] = kSecretPatterns): { value: unknown; secrets: string[] } | undefined {
  const t = args.trimStart();
  if (!(t.startsWith("{") || t.startsWith("[")) || !(kSecretKeyHint.test(args) || args.includes("\\u"))) return undefined;
  try {
    return redactNamedFields(JSON.parse(args) as unknown, patterns);
  } catch {
    return undefined;
  }
}
