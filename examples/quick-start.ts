/**
 * The README's quick start and recall, runnable: a made-up 24-step coding run (coding-run.ts)
 * written as run.json in OpenAI chat format, compacted to 8,000 tokens, then the removed history
 * and a removed original read back from the store. The lines between the markers are the README's
 * snippets (a test holds them equal; test/package/app.test.ts runs the README's file itself
 * against the packed tarball, and this example from the installed package); it runs in a
 * directory of its own, as the README's file runs in the app's.
 *
 *   node node_modules/ctxfold/dist/examples/quick-start.js
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { createCompactor, createFsStore, getMessages, renderMessages } from "ctxfold";
import { codingRun } from "./coding-run.js";

/** Writes the example's run.json (the made-up run, in OpenAI chat format) into `dir`. */
export function writeExampleRun(dir: string): void {
  writeFileSync(path.join(dir, "run.json"), JSON.stringify(codingRun(24)));
}

/** The README's code, its console the one given. */
export async function main(console: Pick<Console, "log"> = globalThis.console): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), "ctxfold-quick-start-"));
  const cwd = process.cwd();
  try {
    writeExampleRun(dir);
    process.chdir(dir);
    // readme:quick-start
    // One conversation in OpenAI Chat format: [{ role, content, tool_calls?, tool_call_id? }, …]
    const messages = JSON.parse(readFileSync("run.json", "utf8"));
    const store = createFsStore({ dir: ".ctxfold" });
    const compactor = createCompactor({ store });
    const r = await compactor.compact(messages, { budget: 8000, format: "openai-chat" });
    console.log(`${r.tokensBefore} → ${r.tokensAfter} tokens, ${r.refs.length} refs`);
    // readme:end
    // readme:recall
    // A history ref: the messages a stage removed whole, back in the caller's format.
    const history = r.refs.find((ref) => ref.includes("/history_"));
    if (history) console.log(`${renderMessages(getMessages(store, history), "openai-chat").length} messages removed whole`);
    // Any other ref: an original a stage shortened (an output, arguments, a text), byte for byte.
    const text = r.refs.find((ref) => !ref.includes("/history_"));
    if (text) console.log(`${text}: ${store.getText(text).length} chars`);
    // readme:end
  } finally {
    process.chdir(cwd);
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
