import { StoreView, type OffloadHint, type OffloadStore } from "../store/index.js";
import type { TextRedactor } from "../store/messages.js";
import { kSecretPatterns, redactSecrets, type SecretPattern } from "../steps/redact.js";

/**
 * The compactor's store under `redactOffload`: every text it keeps has its secrets replaced
 * (`[REDACTED:<kind>]`, the same patterns as observations and summaries), so the originals
 * a ref gives back are the redacted texts. Messages stored whole (putMessages) are redacted
 * string by string, so their JSON stays valid; bytes put as bytes (binary outputs, media) are
 * kept as they are.
 */
export class RedactingStore extends StoreView implements TextRedactor {
  constructor(inner: OffloadStore, readonly patterns: readonly SecretPattern[] = kSecretPatterns) {
    super(inner);
  }

  redact(text: string): string {
    return redactSecrets(text, this.patterns);
  }

  put(data: Uint8Array | string, hint?: OffloadHint): string {
    return this.inner.put(typeof data === "string" ? this.redact(data) : data, hint);
  }
}
