/**
 * Secrets known by name: which keys name a secret, how a value under one is redacted (strings
 * whole, numbers and booleans kept), secret-named command flags, and a step's texts never echoing
 * its secret arguments (the call's output included).
 */
import { describe, expect, it } from "vitest";
import { RedactingStore } from "../../src/policy/redacting-store.js";
import { argumentSecrets, isSecretKey, redactArgumentText, redactNamedFields, redactSecrets, redactValue } from "../../src/steps/redact.js";
import { StepReducer } from "../../src/steps/reducer.js";
import { createMemoryStore } from "../../src/store/index.js";

const kSecret = "Hunter2Hunter2Zebra";

describe("isSecretKey", () => {
  it.each([
    "password",
    "PASSWORD",
    "db_password",
    "dbPassword",
    "passwd",
    "pwd",
    "db_pass",
    "passphrase",
    "secret",
    "client_secret",
    "secrets",
    "token",
    "githubToken",
    "access_token",
    "X-Auth-Token",
    "id_token",
    "api_key",
    "apiKey",
    "APIKey",
    "x-api-key",
    "OPENAI_API_KEY",
    "apikey",
    "secret_access_key",
    "private_key",
    "ssh_key",
    "auth",
    "Authorization",
    "credential",
    "credentials",
    "cookie",
    "Set-Cookie",
    "sessionid",
  ])("%s names a secret", (k) => expect(isSecretKey(k)).toBe(true));

  it.each([
    "max_tokens",
    "tokens_used",
    "token_count",
    "tokens",
    "password_file",
    "token_url",
    "auth_type",
    "author",
    "oauth_provider",
    "secret_name",
    "key",
    "keys",
    "sort_key",
    "primary_key",
    "monkey",
    "session_id",
    "path",
    "command",
    "",
    "-",
  ])("%s does not", (k) => expect(isSecretKey(k)).toBe(false));
});

describe("secret-named values", () => {
  it("a string under a secret-named key is redacted whole, with its shape's kind when it has one; numbers, booleans and null stay", () => {
    const args = {
      password: kSecret,
      api_key: "sk-proj-abcdefghijklmnopqrstuvwxyz012345",
      token: 123456,
      auth: true,
      secret: null,
      session_token: "",
      max_tokens: 4096,
      tokens_used: 12,
      path: "src/app.py",
      headers: { Authorization: "Zt9qLmX4vB7nQ2wK", Accept: "application/json" },
      credentials: { user: "admin", pin: 1234, passwords: ["a1b2c3d4", "e5f6g7h8"] },
    };
    expect(redactValue(args)).toEqual({
      password: "[REDACTED:credential]",
      api_key: "[REDACTED:openai-key]",
      token: 123456,
      auth: true,
      secret: null,
      session_token: "",
      max_tokens: 4096,
      tokens_used: 12,
      path: "src/app.py",
      headers: { Authorization: "[REDACTED:credential]", Accept: "application/json" },
      credentials: { user: "[REDACTED:credential]", pin: 1234, passwords: ["[REDACTED:credential]", "[REDACTED:credential]"] },
    });
  });

  it("redactNamedFields touches only the named fields, returns what they held, and the same object when there are none", () => {
    const plain = { path: "notes.md", content: "my password is in the vault" };
    expect(redactNamedFields(plain).value).toBe(plain);
    const { value, secrets } = redactNamedFields({ content: "x", db_password: "short1", nested: [{ token: kSecret }] });
    expect(value).toEqual({ content: "x", db_password: "[REDACTED:credential]", nested: [{ token: "[REDACTED:credential]" }] });
    expect(secrets).toEqual([kSecret, "short1"]);
  });

  it("a call's argument text: JSON gets its named fields redacted, other text stays for the shape patterns", () => {
    expect(JSON.parse(redactArgumentText(JSON.stringify({ cookie: "abc123xyz", q: "x" })))).toEqual({ cookie: "[REDACTED:credential]", q: "x" });
    expect(redactArgumentText('{"q": "x"}')).toBe('{"q": "x"}');
    expect(redactArgumentText("not json {")).toBe("not json {");
  });

  it("a redacting store redacts a stored call's named fields too (redactOffload)", () => {
    const store = new RedactingStore(createMemoryStore());
    expect(store.redact(JSON.stringify({ auth: "Zt9qLmX4vB7nQ2wK" }))).not.toContain("Zt9qLmX4vB7nQ2wK");
  });
});

describe("arguments read for secret-named keys", () => {
  it("reads a key spelled with \\u escapes, and leaves arguments naming no such key as they are", () => {
    const escaped = '{"host": "prod", "\\u0070assword": "Hunter2Hunter2Zebra"}';
    expect(redactArgumentText(escaped)).not.toContain("Hunter2Hunter2Zebra");
    const call = { type: "tool-call" as const, id: "c1", name: "deploy", args: escaped };
    expect(argumentSecrets([{ role: "assistant", parts: [call] }] as never)).toEqual(["Hunter2Hunter2Zebra"]);
    const plain = '{"host": "prod", "count": 3}';
    expect(redactArgumentText(plain)).toBe(plain);
    expect(argumentSecrets([{ role: "assistant", parts: [{ ...call, id: "c2", args: plain }] }] as never)).toEqual([]);
  });
});

describe("secret-named command flags", () => {
  it("redacts the value after a flag named for a secret, and nothing else", () => {
    expect(redactSecrets("release-tool push --password Rk3Wm8Zp5Xq2Lv7N --verbose")).toBe("release-tool push --password [REDACTED:credential] --verbose");
    expect(redactSecrets("release-tool push --token Rk3Wm8 --verbose")).toBe("release-tool push --token [REDACTED:credential] --verbose");
    expect(redactSecrets("mysql --db-password 'two words here' -h db")).toBe("mysql --db-password [REDACTED:credential] -h db");
    expect(redactSecrets("cli login --api-key Q7mV2xN9pL4kR8sT")).toBe("cli login --api-key [REDACTED:credential]");
    for (const t of ["llm --max-tokens 4096", "app --token-file ~/.config/tok", "gh --token -", "x --secret-name prod-db"]) expect(redactSecrets(t)).toBe(t);
  });
});

describe("a step's texts never echo its secret arguments", () => {
  const reducer = (opts: ConstructorParameters<typeof StepReducer>[0] = {}) => new StepReducer({ store: createMemoryStore(), ...opts });

  it("summary, minimal arguments, observation and error: the call's own output echoing the value included", () => {
    const s = reducer().reduce("deploy", JSON.stringify({ target: "prod", password: kSecret }), `deployed prod as admin:${kSecret}`);
    expect(s.summary).toBe("Called deploy(prod, [REDACTED:credential])");
    expect(s.minimalArgs).toEqual({ target: "prod", password: "[REDACTED:credential]" });
    expect(s.observation).toBe("deploy: deployed prod as admin:[REDACTED:credential]");
    const failed = reducer().reduce("login", { user: "bob", token: kSecret }, `Error: token ${kSecret} rejected`, { isError: true });
    expect(JSON.stringify(failed)).not.toContain(kSecret);
    expect(failed.error).toContain("[REDACTED:");
  });

  it("an offloaded output keeps the echo unless redactOffload", () => {
    const output = `login ok for ${kSecret}\n${"log line\n".repeat(200)}`;
    const kept = reducer();
    expect(kept.store.getText(kept.reduce("login", { password: kSecret }, output).outcomeRef!)).toBe(output);
    const redacted = reducer({ redactOffload: true });
    expect(redacted.store.getText(redacted.reduce("login", { password: kSecret }, output).outcomeRef!)).not.toContain(kSecret);
  });

  it("redact: false is the caller's explicit opt-out", () => {
    expect(reducer({ redact: false }).reduce("deploy", { password: kSecret }, "ok").summary).toContain(kSecret);
  });
});
