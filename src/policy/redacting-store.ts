import type { OffloadHint, OffloadStore } from "../store/index.js";
import type { TextRedactor } from "../store/messages.js";
import { kSecretPatterns, redactSecrets, type SecretPattern } from "../steps/redact.js";

/**
 * The compactor's store under `redactOffload`: every text it keeps has its secrets replaced
 * (`[REDACTED:<kind>]`, the same patterns as observations and summaries), so the originals
 * a ref gives back are the redacted texts. Messages stored whole (putMessages) are redacted
 * string by string, so their JSON stays valid; bytes put as bytes (binary outputs, media) are
 * kept as they are.
 */
export class RedactingStore implements OffloadStore, TextRedactor {
  constructor(readonly inner: OffloadStore, readonly patterns: readonly SecretPattern[] = kSecretPatterns) {}

  get prefix(): string {
    return this.inner.prefix;
  }

  redact(text: string): string {
    return redactSecrets(text, this.patterns);
  }

  put(data: Uint8Array | string, hint?: OffloadHint): string {
    return this.inner.put(typeof data === "string" ? this.redact(data) : data, hint);
  }

  get(ref: string): Uint8Array {
    return this.inner.get(ref);
  }

  getText(ref: string): string {
    return this.inner.getText(ref);
  }

  has(ref: string): boolean {
    return this.inner.has(ref);
  }
}
