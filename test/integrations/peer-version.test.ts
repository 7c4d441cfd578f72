import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { ctxfoldMiddleware as aiSdkMiddleware, ctxfoldPrepareStep, ctxfoldRecallTool as aiSdkRecallTool } from "../../src/integrations/ai-sdk.js";
import {
  compactLangChainMessages,
  ctxfoldMiddleware as langChainMiddleware,
  ctxfoldRecallTool as langChainRecallTool,
  ctxfoldRunnable,
  langChainCompactor,
} from "../../src/integrations/langchain.js";
import { CtxfoldProcessor } from "../../src/integrations/mastra.js";
import { setPeerResolver } from "../../src/peer-version.js";
import { createMemoryStore } from "../../src/store/index.js";
import { rejection, thrown } from "../helpers.js";
import { resolverIn, writeFakePackages } from "../helpers-peers.js";

let dir: string;
afterEach(() => setPeerResolver(undefined));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Every integration factory beside a framework of the line before the one ctxfold supports. */
function withOldFrameworks(): void {
  dir ??= writeFakePackages(mkdtempSync(path.join(tmpdir(), "ctxfold-old-peers-")), {
    ai: "5.0.52",
    "@langchain/core": "0.3.80",
    langchain: "0.3.36",
    "@mastra/core": "0.24.0",
  });
  setPeerResolver(resolverIn(dir));
}

describe("the integrations beside an old framework", () => {
  it("the AI SDK's middleware, prepareStep and recall tool throw E_PEER_VERSION naming ai's range and the install", () => {
    withOldFrameworks();
    const expected = 'ctxfoldMiddleware of ctxfold/ai-sdk needs ai >=6.0.0; 5.0.52 is installed: npm install ai@">=6.0.0"';
    expect(thrown(() => aiSdkMiddleware({ budget: 8000 }), "E_PEER_VERSION").message).toBe(expected);
    expect(thrown(() => ctxfoldPrepareStep({ budget: 8000 }), "E_PEER_VERSION").message).toMatch(
      /^ctxfoldPrepareStep of ctxfold\/ai-sdk needs ai >=6\.0\.0; 5\.0\.52/,
    );
    thrown(() => aiSdkRecallTool({ store: createMemoryStore() }), "E_PEER_VERSION");
    // Every later creation too, not only the first.
    expect(thrown(() => aiSdkMiddleware(), "E_PEER_VERSION").message).toBe(expected);
  });

  it("Mastra's processor names @mastra/core", () => {
    withOldFrameworks();
    expect(thrown(() => new CtxfoldProcessor({ budget: 8000 }), "E_PEER_VERSION").message).toBe(
      'CtxfoldProcessor of ctxfold/mastra needs @mastra/core >=1.0.0; 0.24.0 is installed: npm install @mastra/core@">=1.0.0"',
    );
  });

  it("LangChain's runnable, compactor, messages function, recall tool and agent middleware name the old packages", async () => {
    withOldFrameworks();
    expect((await rejection(ctxfoldRunnable({ budget: 8000 }))).code).toBe("E_PEER_VERSION");
    expect(thrown(() => langChainCompactor({ budget: 8000 }), "E_PEER_VERSION").message).toMatch(/needs @langchain\/core >=1\.0\.0; 0\.3\.80 is installed/);
    expect((await rejection(compactLangChainMessages([], { budget: 8000 }))).code).toBe("E_PEER_VERSION");
    expect((await rejection(langChainRecallTool({ store: createMemoryStore() }))).code).toBe("E_PEER_VERSION");
    expect(thrown(() => langChainMiddleware({ budget: 8000 }), "E_PEER_VERSION").message).toBe(
      'ctxfoldMiddleware of ctxfold/langchain needs langchain >=1.0.0 and @langchain/core >=1.0.0; langchain 0.3.36 and @langchain/core 0.3.80 are installed: npm install langchain@">=1.0.0" @langchain/core@">=1.0.0"',
    );
  });
});

describe("the integrations where the framework does not resolve from ctxfold (a bundle, another copy)", () => {
  it("are made as usual: their types are structural, nothing is checked", async () => {
    setPeerResolver(() => {
      throw Object.assign(new Error("Cannot find package"), { code: "ERR_MODULE_NOT_FOUND" });
    });
    expect(aiSdkMiddleware({ budget: 8000 }).specificationVersion).toBe("v3");
    expect(typeof ctxfoldPrepareStep({ budget: 8000 })).toBe("function");
    expect(new CtxfoldProcessor({ budget: 8000 }).id).toBe("ctxfold");
    expect(typeof langChainCompactor({ budget: 8000 })).toBe("function");
    expect(langChainMiddleware({ budget: 8000 }).name).toBe("CtxfoldMiddleware");
    expect(await compactLangChainMessages([], { budget: 8000 })).toEqual([]);
  });
});
