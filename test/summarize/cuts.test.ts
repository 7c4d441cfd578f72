import { describe, expect, it } from "vitest";
import { redactSecrets } from "../../src/steps/redact.js";
import { cutBackward, cutForward } from "../../src/summarize/extractive-units.js";

const pem = [
  "-----BEGIN RSA PRIVATE KEY-----",
  ...Array.from({ length: 25 }, (_, i) => `MIIEpAIBAAKCAQEA${String(i).padStart(2, "0")}x7Qk9PzV3mW8nL2rT5yH1cB4dF6gJ0sE9uI7oK3aZqXwYv`),
  "-----END RSA PRIVATE KEY-----",
].join("\n");

/** A secret in the shapes redaction knows, and the value whose pieces must never show. */
const kShapes: [string, string][] = [
  ["password: hunter2Hunter2", "hunter2Hunter2"],
  ["export API_KEY = Abcdefghijkl1234", "Abcdefghijkl1234"],
  ['{"client_secret": "S3cr3t v4lue:xyz"}', "S3cr3t v4lue:xyz"],
  ["deploy --api-key Abcdef0123456789 --region eu", "Abcdef0123456789"],
  ["Authorization: Bearer Abcdefghijklmnop1234", "Abcdefghijklmnop1234"],
  ["postgres://admin:Pa55w0rdXYZ@db.example.com/app", "Pa55w0rdXYZ"],
  [`sk-proj-${"Zq9".repeat(16)}`, `sk-proj-${"Zq9".repeat(16)}`],
  [pem, pem.split("\n").slice(1, -1).join("\n")],
];

const filler = "lorem ipsum dolor sit amet ".repeat(12);

/** The value's pieces of 6 characters that hold no space or newline. */
const pieces = (value: string): string[] => Array.from({ length: value.length - 5 }, (_, i) => value.slice(i, i + 6)).filter((p) => !/\s/.test(p));

describe("a window's cut", () => {
  it.each(kShapes)("never leaves a piece of a secret that its window's redaction would not know: %s", (shape, value) => {
    const text = `${filler}${shape} ${filler}`;
    const secretAt = filler.length;
    for (let at = secretAt - 8; at <= secretAt + shape.length + 8; at++) {
      const head = redactSecrets(text.slice(0, cutForward(text, at)));
      const tail = redactSecrets(text.slice(cutBackward(text, at)));
      const shown = pieces(value).filter((p) => head.includes(p) || tail.includes(p));
      expect(shown, `cut at ${at - secretAt} into the secret`).toEqual([]);
    }
  });

  it("moves no further than the secret it would split: a cut in plain text stays where it is", () => {
    const text = `${filler}password: hunter2Hunter2 ${filler}`;
    const space = filler.indexOf(" ", 30);
    expect(cutForward(text, space + 1)).toBe(space + 1); // after a space
    expect(cutBackward(text, space)).toBe(space); // at a space
    const inValue = filler.length + "password: hunt".length;
    expect(cutForward(text, inValue)).toBe(filler.length);
    expect(cutBackward(text, inValue)).toBe(filler.length + "password: hunter2Hunter2".length);
  });
});
