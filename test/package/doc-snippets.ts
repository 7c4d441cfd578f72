// The TypeScript snippets of the README and docs/, as the modules a user would copy: each ```ts
// block is one, named by its page and the heading above it; a block right after the marker line
// `<!-- continues the snippet above -->` is the same module, continued (the README's recall
// continues its quick start).
import { readdirSync, readFileSync } from "node:fs";
import * as path from "node:path";

export interface DocSnippet {
  /** A file name for the module: the page and the heading, `integrations--over-budget.ts`. */
  file: string;
  /** Where it is: `docs/integrations.md#over-budget` (and `, block 2` for a heading's second). */
  where: string;
  code: string;
}

export const kContinues = "<!-- continues the snippet above -->";

/** GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, spaces to `-`. */
export const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");

/** The pages the package ships: README.md and docs/*.md. */
export function docPages(root: string): string[] {
  return [
    "README.md",
    ...readdirSync(path.join(root, "docs"))
      .filter((f) => f.endsWith(".md"))
      .map((f) => `docs/${f}`),
  ];
}

/** Every ```ts module of one page, in order. */
export function pageSnippets(root: string, page: string): DocSnippet[] {
  const lines = readFileSync(path.join(root, page), "utf8").split("\n");
  const out: DocSnippet[] = [];
  const perHeading = new Map<string, number>();
  let heading = "";
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(\S*)/.exec(lines[i]);
    if (!fence) {
      heading = /^#+ (.*)$/.exec(lines[i])?.[1] ?? heading;
      continue;
    }
    let end = i + 1;
    while (end < lines.length && !lines[end].startsWith("```")) end++;
    if (fence[1] === "ts") {
      const code = `${lines.slice(i + 1, end).join("\n")}\n`;
      let before = i - 1;
      while (before >= 0 && lines[before].trim() === "") before--;
      if (lines[before]?.trim() === kContinues) {
        if (out.length === 0) throw new Error(`${page}:${i + 1}: ${kContinues} with no snippet above it`);
        out[out.length - 1].code += code;
      } else {
        const anchor = slug(heading);
        const n = (perHeading.get(anchor) ?? 0) + 1;
        perHeading.set(anchor, n);
        const name = `${path.basename(page, ".md").toLowerCase()}--${anchor}${n > 1 ? `-${n}` : ""}`;
        out.push({ file: `${name}.ts`, where: `${page}#${anchor}${n > 1 ? `, block ${n}` : ""}`, code });
      }
    }
    i = end;
  }
  return out;
}

/** Every ```ts module of the README and docs/. */
export const docSnippets = (root: string): DocSnippet[] => docPages(root).flatMap((page) => pageSnippets(root, page));
