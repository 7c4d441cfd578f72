import { describe, expect, it } from "vitest";
import { oneLine } from "../../src/steps/rules.js";
import { createRng } from "../helpers.js";

/** The definition: the whole text flattened, then cut. */
function naive(text: string, max: number): string {
  const flat = text
    .replace(/\s*\r?\n\s*/g, " ⏎ ")
    .replace(/\s+/g, " ")
    .trim();
  return flat.length > max ? flat.slice(0, max - 1) + "…" : flat;
}

describe("oneLine", () => {
  it("flattens only the start a long text's line needs, with the result of flattening it all", () => {
    const rng = createRng(11);
    const pieces = ["word", "x", "\n", "\r\n", "  ", "\t", " \n \n ", "😀", "\u00a0", "cat <<'EOF' > f.py", "    ".repeat(40), "\n".repeat(30)];
    for (let k = 0; k < 3000; k++) {
      const parts: string[] = [];
      const n = rng.int(400);
      for (let i = 0; i < n; i++) parts.push(pieces[rng.int(pieces.length)]);
      const text = parts.join(rng.next() < 0.3 ? " " : "");
      const max = [10, 60, 80, 200, 400][rng.int(5)];
      expect(oneLine(text, max), JSON.stringify(text.slice(0, 80))).toBe(naive(text, max));
    }
  });

  it("a text whose start is all whitespace still shows what follows it", () => {
    const text = `${" ".repeat(5000)}\n${"\t".repeat(2000)}ls -la /srv`;
    expect(oneLine(text, 80)).toBe("⏎ ls -la /srv");
  });
});
