import { StoreView, type OffloadHint, type OffloadStore } from "../store/index.js";
import type { TextRedactor } from "../store/messages.js";
import { kSecretPatterns, redactArgumentText, redactSecrets, type SecretPattern } from "../steps/redact.js";

/**
 * The compactor's store under `redactOffload`: every text it keeps has its secrets replaced
 * (`[REDACTED:<kind>]`, the same patterns as observations and summaries, and the values of
 * secret-named fields of a JSON text such as a call's arguments), so the originals a ref gives
 * back are the redacted texts. Messages stored whole (putMessages) are redacted
 * string by string, so their JSON stays valid; bytes put as bytes (binary outputs, media) are
 * kept as they are.
 */
export class RedactingStore extends StoreView implements TextRedactor {
  constructor(
    inner: OffloadStore,
    readonly patterns: readonly SecretPattern[] = kSecretPatterns,
  ) {
    super(inner);
  }

  redact(text: string): string {
    return redactSecrets(redactArgumentText(text, this.patterns), this.patterns);
  }

  put(data: Uint8Array | string, hint?: OffloadHint): string {
    return this.inner.put(typeof data === "string" ? this.redact(data) : data, hint);
  }
}
