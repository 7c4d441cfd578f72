// The README and docs/ hold together: every link reaches a file and a heading that exist, every
// ctxfold import in a TypeScript snippet names an export of the entry point it imports, every
// `ctxfold` command line in a shell snippet uses the command's own flags, and the README's five
// CLI commands run as written.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { kCommandUsage } from "../src/cli/usage.js";
import { slug } from "./package/doc-snippets.js";
import { kDeprecatedTieredNames } from "../src/policy/config.js";
import { kDeprecatedSessionNames } from "../src/block/config.js";
import { kDeprecatedStepNames } from "../src/steps/config.js";
import { generatedRunLines } from "./helpers.js";

const root = fileURLToPath(new URL("../", import.meta.url));
const kCli = path.join(root, "dist/src/cli/main.js");
const pages = [
  "README.md",
  ...readdirSync(path.join(root, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];
const text = new Map(pages.map((p) => [p, readFileSync(path.join(root, p), "utf8")]));

/** The fenced blocks of `lang` in a page. */
function blocks(page: string, lang: string): string[] {
  return [...text.get(page)!.matchAll(new RegExp("^```" + lang + "\\n([\\s\\S]*?)^```", "gm"))].map((m) => m[1]);
}

/** The page without its fenced blocks (a `#` comment in a shell block is not a heading). */
const prose = (page: string) => text.get(page)!.replace(/^```[\s\S]*?^```/gm, "");

describe("README and docs/", () => {
  it("every relative link reaches a file that exists, and a heading of it where it names one", () => {
    const broken: string[] = [];
    for (const page of pages) {
      for (const [, target] of prose(page).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target)) continue; // https:, mailto:
        const [file, anchor] = target.split("#");
        const resolved = file === "" ? page : path.posix.join(path.posix.dirname(page), file);
        if (!existsSync(path.join(root, resolved))) broken.push(`${page}: ${target} (no ${resolved})`);
        else if (anchor !== undefined) {
          const headings = [...prose(resolved).matchAll(/^#+ (.*)$/gm)].map((m) => slug(m[1]));
          if (!headings.includes(anchor)) broken.push(`${page}: ${target} (no heading #${anchor} in ${resolved})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it("every source-repository path the pages name exists (a file or folder; a .js name may be its .ts source)", () => {
    // Files of other projects the pages cite by their own repository's path (openai-node, anthropic-sdk-typescript).
    const others = new Set(["src/resources/responses/responses.ts", "src/resources/beta/messages/messages.ts"]);
    const missing: string[] = [];
    for (const page of pages) {
      for (const [, named, glob] of text.get(page)!.matchAll(/(?<![\w./-])((?:src|test|bench|scripts|assembly|examples)\/[\w./-]*\w)(\*?)/g)) {
        if (others.has(named)) continue;
        // `bench/baseline*.json`: some file of the folder starts so.
        const found = glob
          ? readdirSync(path.join(root, path.dirname(named))).some((f) => f.startsWith(path.basename(named)))
          : [named, named.replace(/\.js$/, ".ts")].some((p) => existsSync(path.join(root, p)));
        if (!found) missing.push(`${page}: ${named}${glob}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("every ctxfold import of a TypeScript snippet names an export of its entry point", async () => {
    const missing: string[] = [];
    let checked = 0;
    for (const page of pages) {
      for (const code of blocks(page, "ts")) {
        for (const [, names, entry] of code.matchAll(/^import \{([^}]*)\} from "(ctxfold(?:\/[\w-]+)?)";$/gm)) {
          const mod = (await import(/* @vite-ignore */ entry)) as Record<string, unknown>;
          for (const name of names
            .split(",")
            .map((n) => n.trim().split(/\s+as\s+/)[0])
            .filter((n) => n && !n.startsWith("type "))) {
            checked++;
            if (!(name in mod)) missing.push(`${page}: ${name} from ${entry}`);
          }
        }
      }
    }
    expect(missing).toEqual([]);
    expect(checked).toBeGreaterThan(20);
  });

  it("every deprecated setting name is documented under Deprecated names, and no snippet uses one", () => {
    const section = prose("docs/concepts.md")
      .split(/^## /m)
      .find((s) => s.startsWith("Deprecated names\n"))!;
    const renames = { ...kDeprecatedTieredNames, ...kDeprecatedStepNames, ...kDeprecatedSessionNames };
    expect(Object.keys(renames).length).toBe(3);
    for (const [old, name] of Object.entries(renames)) {
      expect(
        section.split("\n").some((row) => row.startsWith("|") && row.includes(`\`${old}\``)),
        old,
      ).toBe(true);
      expect(section).toContain(`\`${name}\``);
      for (const page of pages) for (const code of blocks(page, "ts")) expect(code, `${page} uses ${old}`).not.toMatch(new RegExp(`\\b${old}\\b`));
    }
  });

  it("the integrations' peer table states ctxfold's peer ranges, the versions the tests run against and those versions' Node", () => {
    const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as { peerDependencies: Record<string, string> };
    const rows = text
      .get("docs/integrations.md")!
      .split("\n")
      .filter((l) => /^\| [^|]+ \| [^|]+ \| `/.test(l));
    const named = new Set<string>();
    for (const row of rows) {
      const [, , peers, tested, node] = row.split(" | ").map((c) => c.replace(/^\| |\s*\|$/g, ""));
      const names = [...peers.matchAll(/`([^`]+)` \(([^)]+)\)/g)];
      expect(names.length, row).toBeGreaterThan(0);
      const versions = tested.split(", ");
      names.forEach(([, name, range], k) => {
        named.add(name);
        expect(range, `${name}: ctxfold's peer range`).toBe(pkg.peerDependencies[name]);
        const installed = JSON.parse(readFileSync(path.join(root, "node_modules", name, "package.json"), "utf8")) as {
          version: string;
          engines?: { node?: string };
        };
        expect(versions[k], `${name}: the version tested`).toBe(installed.version);
        expect(node, `${name}: its Node`).toBe(installed.engines?.node);
      });
    }
    expect([...named].sort()).toEqual(Object.keys(pkg.peerDependencies).sort());
  });

  it("every ctxfold command line of a shell snippet is a command with its own flags", () => {
    const wrong: string[] = [];
    let checked = 0;
    for (const page of pages) {
      for (const code of blocks(page, "sh")) {
        // A command continued over lines with a trailing backslash is one line here.
        for (const line of code.replace(/\\\n\s*/g, " ").split("\n")) {
          const m = /^ctxfold (\w+)(.*)$/.exec(line.replace(/\s+#.*$/, ""));
          if (!m) continue;
          checked++;
          const usage = kCommandUsage[m[1]];
          if (!usage) {
            wrong.push(`${page}: no command ${m[1]} (${line})`);
            continue;
          }
          for (const [flag] of m[2].matchAll(/--[\w-]+/g))
            if (!usage.includes(`[${flag}`) && !usage.includes(` ${flag} `)) wrong.push(`${page}: ${m[1]} has no ${flag}`);
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(checked).toBeGreaterThanOrEqual(10);
  });

  describe("the README's five CLI commands, run as written", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "ctxfold-readme-cli-"));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it("each ends as its documented exit codes say", () => {
      writeFileSync(path.join(dir, "runs.jsonl"), generatedRunLines(14, 21).join("\n") + "\n");
      const section = text
        .get("README.md")!
        .split(/^## /m)
        .find((s) => s.startsWith("The CLI in five commands"))!;
      const lines = blocks("README.md", "sh")
        .find((b) => section.includes(b))!
        .split("\n")
        .filter(Boolean)
        .map((l) => l.replace(/\s+#.*$/, ""));
      expect(lines.map((l) => l.split(" ")[1])).toEqual(["compact", "explain", "show", "eval", "validate"]);
      const ok: Record<string, number[]> = { compact: [0, 3], explain: [0], show: [0], eval: [0], validate: [0, 4, 5] };
      for (const line of lines) {
        let args = line.split(/\s+/).slice(1);
        if (args[0] === "show") {
          const out = readFileSync(path.join(dir, "out.jsonl"), "utf8");
          const ref = /workspace\/outputs\/[\w./-]+/.exec(out)![0];
          args = args.map((a) => (a === "REF" ? ref : a));
        }
        const r = spawnSync(process.execPath, [kCli, ...args], { cwd: dir, encoding: "utf8" });
        expect(ok[args[0]], `${line}: exit ${r.status}\n${r.stderr}`).toContain(r.status);
        expect(r.stdout.length + r.stderr.length, line).toBeGreaterThan(0);
      }
    }, 120_000);
  });
});
