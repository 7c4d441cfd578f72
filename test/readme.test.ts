// The README's user sections hold: the first screen is for users, and every snippet there is the
// code a test runs (mirrored by examples/quick-start.ts) or names exports that exist.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { main as quickStart } from "../examples/quick-start.js";

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
const userPart = readme.slice(0, readme.indexOf("## For contributors"));
const example = readFileSync(new URL("../examples/quick-start.ts", import.meta.url), "utf8");

/** The ```ts blocks of the user sections, by the heading above each. */
function snippets(): Map<string, string> {
  const out = new Map<string, string>();
  for (const section of userPart.split(/^## /m).slice(1)) {
    const code = /```ts\n([\s\S]*?)```/.exec(section);
    if (code) out.set(section.slice(0, section.indexOf("\n")), code[1]);
  }
  return out;
}

/** The lines of examples/quick-start.ts between `// readme:NAME` and `// readme:end`, unindented. */
function marked(name: string): string {
  const m = new RegExp(`// readme:${name}\\n([\\s\\S]*?)\\n\\s*// readme:end`).exec(example);
  return m![1]
    .split("\n")
    .map((l) => l.replace(/^ {4}/, ""))
    .join("\n");
}

describe("README for users", () => {
  it("starts where a user starts: install and a createCompactor quick start in the first 80 lines, no project-history numbers", () => {
    const first = readme.split("\n").slice(0, 80).join("\n");
    expect(first).toContain("npm install ctxfold");
    expect(first).toMatch(/createCompactor\(/);
    expect(first).not.toMatch(/\bseed \d|\bissue \d/i);
    expect(readme.indexOf("## For contributors")).toBeGreaterThan(0);
  });

  it("the quick start and recall snippets are the example's code, and its output is the one quoted", async () => {
    const s = snippets();
    // The quick start is a whole module: its imports, then the example's code.
    const [imports, body] = s.get("Quick start")!.split("\n\n");
    expect(imports).toMatch(/^import \{ readFileSync \} from "node:fs";\nimport \{ [\w, ]+ \} from "ctxfold";$/);
    expect(body.trimEnd()).toBe(marked("quick-start"));
    expect(s.get("Getting removed content back")!.trimEnd()).toBe(marked("recall"));
    const lines: string[] = [];
    await quickStart({ log: (l: string) => lines.push(l) });
    expect(userPart).toContain(`\`${lines[0]}\``);
    expect(lines[1]).toMatch(/^\d+ messages removed whole$/);
    expect(lines[2]).toMatch(/^workspace\/outputs\/\w+\.\w+: \d+ chars$/);
  });

  it("every export the integration snippets name exists in the subpath they name", async () => {
    const block = snippets().get("Integrations")!;
    // The names the block imports under another (`ctxfoldMiddleware as ctxfoldAgentMiddleware`).
    const aliases = new Map([...block.matchAll(/\b(\w+) as (\w+)\b/g)].map(([, name, alias]) => [alias, name]));
    // Each integration is a line `// AI SDK: ctxfold/ai-sdk` and its code on the next.
    const lines = block.split("\n");
    const pairs = lines.flatMap((line, k) => {
      const sub = /^\/\/ [^:]+: (ctxfold\/[\w-]+)$/.exec(line)?.[1];
      if (!sub) return [];
      const name = /\b(ctxfold\w+|Ctxfold\w+|compact\w+Request)\b/.exec(lines[k + 1])![1];
      return [[aliases.get(name) ?? name, sub] as const];
    });
    expect(pairs.map(([n]) => n).sort()).toEqual(["CtxfoldProcessor", "compactOpenAIRequest", "ctxfoldMiddleware", "ctxfoldMiddleware", "ctxfoldRunnable"]);
    for (const [name, sub] of pairs) {
      const mod = (await import(/* @vite-ignore */ sub)) as Record<string, unknown>;
      expect(typeof mod[name], `${sub} ${name}`).toBe("function");
    }
  });
});
