/**
 * Secret redaction for what compaction writes into a prompt: observations, summaries, error
 * heads and minimal arguments never echo a credential. Each pattern names the kind of secret,
 * and a match becomes `[REDACTED:<kind>]`, so the model still sees that a key was there and
 * which kind (often what it needs to resume: "the request sent an OpenAI key"). Offloaded
 * originals are stored as they are unless the reducer's `redactOffload` is set: the store is
 * the recovery path and sits with the user's own files.
 *
 * Patterns are anchored on the providers' documented prefixes, so ordinary text, hashes and
 * ids do not match; key-value forms (`"api_key": "…"`, `PASSWORD=…`, `Authorization: Bearer …`)
 * keep the key and replace only the value.
 */
export interface SecretPattern {
  kind: string;
  /** Global regex; with a capture group named `value`, only that group is replaced. */
  re: RegExp;
  /**
   * A cheap test that every match of `re` passes (a literal it cannot match without), tried on
   * the text as the patterns before it left it; where it fails, `re` is not run. Absent: always run.
   */
  needs?: RegExp;
}

const kKeyNames = String.raw`(?:api[_-]?key|apikey|access[_-]?key(?:[_-]?id)?|secret(?:[_-]?access)?(?:[_-]?key)?|client[_-]?secret|auth[_-]?token|access[_-]?token|refresh[_-]?token|id[_-]?token|token|password|passwd|pwd|private[_-]?key)`;

/** A part of every name in kKeyNames. */
const kKeyNameParts = /key|secret|token|passw|pwd/i;

export const kSecretPatterns: readonly SecretPattern[] = [
  { kind: "private-key", needs: /PRIVATE KEY/, re: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|$)/g },
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
    re: new RegExp(String.raw`(["']?)\b[\w-]*${kKeyNames}\1\s*[:=]\s*(["'])(?<value>(?:(?!\2)[^\\\n]|\\.){4,})\2`, "gi"),
  },
  // API_KEY=… and password: … in env files, shell commands and logs (unquoted values)
  {
    kind: "credential",
    needs: kKeyNameParts,
    re: new RegExp(String.raw`\b[A-Za-z0-9_]*${kKeyNames}[A-Za-z0-9_]*\s*[=:]\s*(?<value>(?!\[REDACTED)[^\s"',;&|]{6,})`, "gi"),
  },
  { kind: "url-password", needs: /:\/\//, re: /\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:(?<value>[^\s@/]{3,})@/g },
];

const kQuickCheck = /sk-|gh[pousr]_|github_pat_|xox|AKIA|ASIA|AGPA|AIDA|AROA|ANPA|AIza|_live_|_test_|eyJ|PRIVATE KEY|bearer|basic |token|key|secret|passw|pwd|:\/\/[^\s:/@]+:/i;

/** `text` with every secret replaced by `[REDACTED:<kind>]`. Cheap when nothing matches. */
export function redactSecrets(text: string, patterns: readonly SecretPattern[] = kSecretPatterns): string {
  if (!kQuickCheck.test(text)) return text;
  let out = text;
  for (const { kind, re, needs } of patterns) {
    if (needs && !needs.test(out)) continue;
    re.lastIndex = 0;
    out = out.replace(re, (...m: unknown[]) => {
      const groups = m.at(-1) as Record<string, string | undefined> | undefined;
      const whole = m[0] as string;
      const value = typeof groups === "object" && groups ? groups.value : undefined;
      if (value === undefined) return `[REDACTED:${kind}]`;
      const at = whole.lastIndexOf(value);
      return whole.slice(0, at) + `[REDACTED:${kind}]` + whole.slice(at + value.length);
    });
  }
  return out;
}

/** Whether `text` holds anything redactSecrets would replace. */
export function containsSecret(text: string, patterns: readonly SecretPattern[] = kSecretPatterns): boolean {
  return redactSecrets(text, patterns) !== text;
}

/** A JSON-like value with every string in it redacted (for minimal arguments). */
export function redactValue<T>(value: T, patterns: readonly SecretPattern[] = kSecretPatterns): T {
  if (typeof value === "string") return redactSecrets(value, patterns) as T;
  if (Array.isArray(value)) return value.map((v) => redactValue(v, patterns)) as T;
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = redactValue(v, patterns);
    return out as T;
  }
  return value;
}
