/**
 * What the people and the model say in a generated run (src/gen/run.ts): the system prompt with
 * its tool definitions, the task, steering messages, the assistant's step texts and reasoning,
 * and the final answer.
 */
import type { ReasoningPart } from "../model/schema.js";
import { between, cap, chance, kNouns, kVerbs, logUniform, pick, type Ctx, type ToolKey } from "./run-project.js";
import { syntheticText, type Rng } from "./text.js";

export function systemPrompt(ctx: Ctx): string {
  const { r, project: p, harness: h } = ctx;
  const params: Record<ToolKey, [string, Record<string, string>]> = {
    read: ["Read a file and return its contents.", { path: "Path of the file to read." }],
    write: ["Create or overwrite a file with the given content.", { path: "Path of the file to write.", content: "The full new content of the file." }],
    bash: ["Run a shell command in the repository and return its output and exit code.", { command: "The command to run." }],
    search: [
      "Search file contents with a regular expression; returns path:line: match lines.",
      { pattern: "Regular expression to search for.", path: "Directory or file to search in." },
    ],
    fetch: ["Fetch a web page and return it as markdown.", { url: "The URL to fetch." }],
    list: ["List the entries of a directory.", { path: "Directory to list." }],
  };
  const defs = (Object.keys(params) as ToolKey[]).map((key) => {
    const [description, props] = params[key];
    const properties = Object.fromEntries(Object.entries(props).map(([k, d]) => [k, { type: "string", description: d }]));
    return JSON.stringify({ name: h.names[key], description, parameters: { type: "object", properties, required: Object.keys(props) } }, null, 2);
  });
  const rules = [
    "Read the relevant code before changing it.",
    "Run the tests after every change.",
    "Keep changes minimal and focused on the task.",
    "Never invent file contents; read them.",
    "When you are done, summarise what you changed.",
  ];
  return `You are an autonomous software engineering agent working in the repository at ${p.root} (a ${p.lang === "python" ? "Python" : "TypeScript"} project).\n${syntheticText("prose", between(r, 200, 1200), r).trim()}\n\n# Tools\n\nYou have access to the following tools:\n\n${defs.join("\n\n")}\n\n# Rules\n\n${rules
    .filter(() => chance(r, 0.8))
    .map((x, i) => `${i + 1}. ${x}`)
    .join("\n")}`;
}

export function taskText(ctx: Ctx): string {
  const { r, project: p } = ctx;
  const sym = pick(r, p.symbols);
  const file = pick(r, p.sources);
  const title = pick(r, [
    `\`${sym}\` returns the wrong result when the ${pick(r, kNouns)} is empty`,
    `Crash in \`${sym}\` after upgrading to ${between(r, 1, 4)}.${between(r, 0, 12)}`,
    `Add support for ${pick(r, kNouns)} in ${file}`,
    `${cap(pick(r, kVerbs))} is slow on large inputs`,
  ]);
  if (chance(r, 0.06)) return `${title}\n\n${syntheticText(pick(r, ["cjk", "intl"] as const), between(r, 200, 1500), r)}`;
  const repro = `\`\`\`${p.lang}\n${syntheticText("code", between(r, 150, 1200), r).trim()}\n\`\`\``;
  return pick(r, [
    `<issue>\n${title}\n\n${syntheticText("prose", between(r, 200, 2500), r).trim()}\n\n${repro}\n</issue>\n\nPlease resolve the issue above with a minimal change to the non-test files.`,
    `${title}. ${syntheticText("prose", between(r, 100, 800), r).trim()}\n\nTo reproduce:\n\n${repro}`,
    `Can you fix this? ${title}.`,
  ]);
}

export function steeringText(ctx: Ctx): string {
  const { r, project: p } = ctx;
  if (chance(r, 0.1)) return syntheticText(pick(r, ["cjk", "intl", "emoji"] as const), between(r, 40, 300), r).trim();
  const line = pick(r, [
    `Actually, don't modify the tests; only change \`${pick(r, p.sources)}\`.`,
    `Please keep the public API of \`${pick(r, p.symbols)}\` unchanged.`,
    `Stop. Use the existing \`${pick(r, p.symbols)}\` helper instead of writing a new one.`,
    "Can you also add a test for the empty case?",
    `Make sure it still works on ${p.lang === "python" ? "Python 3.8" : "Node 18"}.`,
    `You're going in circles. Look at \`${pick(r, p.sources)}\` first.`,
  ]);
  return chance(r, 0.3) ? `${line} ${syntheticText("prose", between(r, 40, 400), r).trim()}` : line;
}

export function stepText(ctx: Ctx, key: ToolKey, args: Record<string, string>, n: number, steered: boolean, lastFailure: string | undefined): string {
  const { r, project: p } = ctx;
  const lead = steered
    ? `${pick(r, ["Understood.", "Got it, I'll adjust.", "Okay, changing course."])} `
    : lastFailure !== undefined
      ? `That failed (${lastFailure.trim().slice(0, 120)}). `
      : "";
  const say =
    n > 1
      ? "I'll look at a few things in parallel."
      : {
          read: `Let me read \`${args.path}\` to see how \`${pick(r, p.symbols)}\` works.`,
          write: `Now I'll update \`${args.path}\` with the fix.`,
          bash: pick(r, [`Let me run \`${args.command}\`.`, "Let me check the current state.", "Now let's verify the change."]),
          search: `Searching for \`${args.pattern}\` to find where it is used.`,
          fetch: "Let me check the documentation for this.",
          list: `Let me see what is in \`${args.path}\`.`,
        }[key];
  const more = chance(r, 0.35) ? ` ${syntheticText("prose", between(r, 40, 500), r).trim()}` : "";
  return lead + say + more;
}

export function reasoningPart(ctx: Ctx, redacted: boolean): ReasoningPart {
  const { r, project: p } = ctx;
  if (redacted) return { type: "reasoning", redacted: base64(r, between(r, 300, 2000)) };
  const open = pick(r, [
    `The user wants \`${pick(r, p.symbols)}\` fixed.`,
    `So the problem is in \`${pick(r, p.sources)}\`.`,
    "Let me think about what the output means.",
    "Hmm, that is not what I expected.",
  ]);
  return { type: "reasoning", text: `${open} ${syntheticText("prose", logUniform(r, 100, 2500), r).trim()}`, signature: base64(r, between(r, 200, 600)) };
}

/** Base64 of `bytes` random bytes, padded: the shape of provider signatures and encrypted data. */
function base64(r: Rng, bytes: number): string {
  const b = new Uint8Array(bytes);
  for (let i = 0; i < bytes; i++) b[i] = r.int(256);
  return Buffer.from(b).toString("base64");
}

export function finalText(ctx: Ctx): string {
  const { r, project: p } = ctx;
  const changed = ctx.written.length
    ? `\n\n## Changes\n\n${ctx.written.map((f) => `- \`${f}\`: ${syntheticText("prose", between(r, 30, 200), r).trim()}`).join("\n")}`
    : "";
  const head = ctx.written.length ? `I've fixed the issue in \`${pick(r, ctx.written)}\`.` : `I investigated \`${pick(r, p.symbols)}\` but made no changes.`;
  return `${head}${changed}\n\n${syntheticText("prose", between(r, 100, 1200), r).trim()}`;
}
