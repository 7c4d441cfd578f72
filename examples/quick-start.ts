/**
 * The README's quick start and recall, runnable: a generated 24-step coding run in OpenAI chat
 * format, compacted to 8,000 tokens, then a removed original and the removed history read back
 * from the store. The lines between the markers are the README's snippets (a test holds them
 * equal); the example imports the sources where the README imports the package.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { renderMessages } from "../src/adapters/index.js";
import { generateRun } from "../src/gen/run.js";
import { createCompactor, createFsStore, getMessages } from "../src/index.js";

export async function main(log: (line: string) => void = console.log): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), "ctxfold-quick-start-"));
  try {
    const messages = renderMessages(generateRun({ seed: 3, steps: 24 }).messages, "openai-chat");
    // readme:quick-start
    const store = createFsStore({ dir: path.join(dir, ".ctxfold") });
    const compactor = createCompactor({ store });
    const r = await compactor.compact(messages, { budget: 8000 });
    log(`${r.tokensBefore} → ${r.tokensAfter} tokens, ${r.refs.length} refs`);
    // readme:end
    // readme:recall
    const original = store.getText(r.refs[0]); // byte for byte what was removed
    log(`${r.refs[0]}: ${original.length} chars`);
    const history = r.refs.find((ref) => ref.includes("/history_"));
    if (history) log(`${getMessages(store, history).length} messages removed whole`);
    // readme:end
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
