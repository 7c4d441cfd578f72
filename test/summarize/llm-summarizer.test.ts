/**
 * The LLM summariser against a local HTTP server speaking the chat-completions protocol: good
 * answers pass, over-target answers are retried a bounded number of times and then handed to
 * the extractive fallback (on the original text), every transport failure falls back at once
 * with an event, and the API key never leaves the Authorization header.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { CtxfoldError } from "../../src/errors.js";
import { summarizeExtractive } from "../../src/summarize/extractive.js";
import { llmSummarizer, type LlmSummarizerEvent } from "../../src/summarize/llm-summarizer.js";
import type { Summarizer } from "../../src/steps/summarizer.js";
import { TokenCounter } from "../../src/tokens/token-counter.js";
import { thrown } from "../helpers.js";

const kKey = "ctxfold-test-key-9f8e7d6c5b4a"; // matches no secret pattern: only the scrub by value hides it
const counter = new TokenCounter();

interface Recorded {
  url: string;
  method: string;
  headers: IncomingHttpHeaders;
  body: { model: string; messages: { role: string; content: string }[]; max_tokens: number; temperature: number };
}

type Handler = (req: Recorded, res: ServerResponse, n: number) => void;

const servers: { close(): Promise<void> }[] = [];

async function startServer(handler: Handler): Promise<{ baseUrl: string; requests: Recorded[]; close(): Promise<void> }> {
  const requests: Recorded[] = [];
  const server = createServer((req, res) => {
    let data = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (data += c));
    req.on("end", () => {
      const rec: Recorded = { url: req.url ?? "", method: req.method ?? "", headers: req.headers, body: JSON.parse(data) as Recorded["body"] };
      requests.push(rec);
      handler(rec, res, requests.length);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const s = {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  servers.push(s);
  return s;
}

function answer(res: ServerResponse, content: unknown, finish = "stop"): void {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({ id: "x", object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: finish }] }));
}

function log(n: number, special: Record<number, string> = {}): string {
  return Array.from({ length: n }, (_, i) => special[i] ?? `INFO worker pool processed batch ${i} in ${(i * 37) % 1000} ms`).join("\n");
}

const kText = log(500, { 249: "ValueError: bad" });
const kLongAnswer = Array.from({ length: 400 }, (_, i) => `word${i}`).join(" ");

function collect(): { events: LlmSummarizerEvent[]; onEvent: (e: LlmSummarizerEvent) => void } {
  const events: LlmSummarizerEvent[] = [];
  return { events, onEvent: (e) => events.push(e) };
}

afterEach(async () => {
  vi.unstubAllEnvs();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe("llmSummarizer: the protocol", () => {
  it("returns a good answer, from a request in the chat-completions shape", async () => {
    const srv = await startServer((_, res) => answer(res, "  Batch log: 500 lines, one ValueError: bad at line 250.  "));
    const { events, onEvent } = collect();
    const s: Summarizer = llmSummarizer({ baseUrl: srv.baseUrl, model: "test-model", apiKey: kKey, onEvent });
    const out = await s(kText, 60, "tool-output:bash");
    expect(out).toBe("Batch log: 500 lines, one ValueError: bad at line 250.");
    expect(events).toEqual([]);
    expect(srv.requests).toHaveLength(1);
    const r = srv.requests[0];
    expect(r.method).toBe("POST");
    expect(r.url).toBe("/v1/chat/completions");
    expect(r.headers.authorization).toBe(`Bearer ${kKey}`);
    expect(r.headers["content-type"]).toBe("application/json");
    expect(r.body.model).toBe("test-model");
    expect(r.body.temperature).toBe(0);
    expect(r.body.max_tokens).toBe(72);
    expect(r.body.messages.map((m) => m.role)).toEqual(["system", "user"]);
    expect(r.body.messages[0].content).toContain("at most 60 tokens");
    expect(r.body.messages[0].content).toContain("tool-output:bash");
    expect(r.body.messages[1].content).toBe(kText);
  });

  it("accepts a trailing slash in baseUrl and content given as parts", async () => {
    const srv = await startServer((_, res) =>
      answer(res, [
        { type: "text", text: "part one, " },
        { type: "text", text: "part two" },
      ]),
    );
    const s = llmSummarizer({ baseUrl: srv.baseUrl + "/", apiKey: kKey });
    expect(await s(kText, 60, "x")).toBe("part one, part two");
    expect(srv.requests[0].url).toBe("/v1/chat/completions");
  });

  it("makes no request when none can help", async () => {
    const srv = await startServer((_, res) => answer(res, "never"));
    const { events, onEvent } = collect();
    const s = llmSummarizer({ baseUrl: srv.baseUrl, apiKey: kKey, onEvent, maxInputTokens: 1000 });
    expect(await s("", 50, "x")).toBe("");
    expect(await s(kText, 0, "x")).toBe("");
    expect(await s("short text", 50, "x")).toBe("short text"); // already within the target
    const huge = await s(kText, 60, "x"); // ~4,700 tokens > maxInputTokens
    expect(huge).toBe(summarizeExtractive(kText, 60, "x", counter));
    expect(srv.requests).toHaveLength(0);
    expect(events).toEqual([{ type: "summarizer_fallback", label: "x", reason: expect.stringMatching(/^input_too_large: \d+ > 1000 tokens$/), attempt: 0 }]);
  });

  it("redacts secrets in the text it sends and in the answer", async () => {
    const srv = await startServer((_, res) => answer(res, "used token=abcdef123456789 to call"));
    const s = llmSummarizer({ baseUrl: srv.baseUrl, apiKey: kKey });
    const out = await s(log(300, { 10: "export OPENAI_API_KEY=sk-proj-0123456789abcdefghijABCD" }), 60, "x");
    expect(srv.requests[0].body.messages[1].content).not.toContain("0123456789abcdefghij");
    expect(srv.requests[0].body.messages[1].content).toContain("[REDACTED:");
    expect(out).not.toContain("abcdef123456789");
  });
});

describe("llmSummarizer: over-target answers", () => {
  it("retries with a firmer instruction naming the previous length and the target, then falls back on the original text", async () => {
    const srv = await startServer((_, res) => answer(res, kLongAnswer));
    const { events, onEvent } = collect();
    const calls: unknown[][] = [];
    const fallback = (text: string, target: number, label: string): string => {
      calls.push([text, target, label]);
      return summarizeExtractive(text, target, label, counter);
    };
    const s = llmSummarizer({ baseUrl: srv.baseUrl, apiKey: kKey, onEvent, fallback });
    const out = await s(kText, 60, "tool-output:bash");
    expect(out).toBe(summarizeExtractive(kText, 60, "tool-output:bash", counter));
    expect(calls).toEqual([[kText, 60, "tool-output:bash"]]); // the original, never a summary
    expect(srv.requests).toHaveLength(3); // 1 + maxRetries (2)
    const long = counter.estimate(kLongAnswer);
    for (const r of srv.requests.slice(1)) {
      expect(r.body.messages[0].content).toContain(`Your previous summary was ${long} tokens long, over the limit of 60 tokens`);
      expect(r.body.messages[0].content).toContain("aim for 48 tokens");
      expect(r.body.messages[1].content).toBe(kText); // the original again, not the long answer
    }
    expect(srv.requests[0].body.messages[0].content).not.toContain("previous summary");
    const reason = `output_exceeds_target: ${long} > 60 tokens`;
    expect(events).toEqual([
      { type: "summarizer_retry", label: "tool-output:bash", reason, attempt: 1 },
      { type: "summarizer_retry", label: "tool-output:bash", reason, attempt: 2 },
      { type: "summarizer_fallback", label: "tool-output:bash", reason, attempt: 3 },
    ]);
  });

  it("returns the retry's answer when it fits", async () => {
    const srv = await startServer((_, res, n) => answer(res, n === 1 ? kLongAnswer : "ValueError: bad at line 250 of 500."));
    const { events, onEvent } = collect();
    const s = llmSummarizer({ baseUrl: srv.baseUrl, apiKey: kKey, onEvent });
    expect(await s(kText, 60, "x")).toBe("ValueError: bad at line 250 of 500.");
    expect(events.map((e) => [e.type, e.attempt])).toEqual([["summarizer_retry", 1]]);
  });

  it("maxRetries 0: straight to the fallback; an answer cut by max_tokens counts as over the target", async () => {
    const srv = await startServer((_, res) => answer(res, "a short but truncated", "length"));
    const { events, onEvent } = collect();
    const s = llmSummarizer({ baseUrl: srv.baseUrl, apiKey: kKey, onEvent, maxRetries: 0 });
    expect(await s(kText, 60, "x")).toBe(summarizeExtractive(kText, 60, "x", counter));
    expect(srv.requests).toHaveLength(1);
    expect(events).toEqual([{ type: "summarizer_fallback", label: "x", reason: "output_truncated: the answer hit max_tokens", attempt: 1 }]);
  });
});

describe("llmSummarizer: failures fall back at once, with an event", () => {
  const cases: [string, Handler, RegExp][] = [
    ["HTTP 500", (_, res) => (res.writeHead(500, { "content-type": "text/plain" }), res.end("upstream exploded")), /^http_500: upstream exploded$/],
    ["HTTP 429", (_, res) => (res.writeHead(429), res.end('{"error":{"message":"rate limited"}}')), /^http_429: .*rate limited/],
    [
      "a body that is not JSON",
      (_, res) => (res.writeHead(200, { "content-type": "application/json" }), res.end("<html>oops</html>")),
      /^invalid_json: <html>oops<\/html>$/,
    ],
    [
      "no choices",
      (_, res) => (res.writeHead(200), res.end('{"error":{"message":"model overloaded"}}')),
      /^invalid_response: no choices\[0\]\.message\.content: model overloaded$/,
    ],
    ["a null content", (_, res) => answer(res, null), /^invalid_response: no choices\[0\]\.message\.content$/],
    ["an empty answer", (_, res) => answer(res, "   "), /^empty_answer$/],
  ];
  for (const [name, handler, reason] of cases) {
    it(name, async () => {
      const srv = await startServer(handler);
      const { events, onEvent } = collect();
      const s = llmSummarizer({ baseUrl: srv.baseUrl, apiKey: kKey, onEvent });
      expect(await s(kText, 60, "lbl")).toBe(summarizeExtractive(kText, 60, "lbl", counter));
      expect(srv.requests).toHaveLength(1); // no retry
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ type: "summarizer_fallback", label: "lbl", attempt: 1 });
      expect(events[0].reason).toMatch(reason);
    });
  }

  it("a hanging server (timeoutMs 200)", async () => {
    const srv = await startServer(() => undefined); // never answers
    const { events, onEvent } = collect();
    const s = llmSummarizer({ baseUrl: srv.baseUrl, apiKey: kKey, onEvent, timeoutMs: 200 });
    const t0 = performance.now();
    const out = await s(kText, 60, "lbl");
    const ms = performance.now() - t0;
    expect(out).toBe(summarizeExtractive(kText, 60, "lbl", counter));
    expect(ms).toBeGreaterThanOrEqual(150);
    expect(ms).toBeLessThan(3000);
    expect(events).toEqual([{ type: "summarizer_fallback", label: "lbl", reason: "timeout: no answer within 200 ms", attempt: 1 }]);
  });

  it("a server that sends headers and then stalls the body", async () => {
    const srv = await startServer((_, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"choices": [');
    });
    const { events, onEvent } = collect();
    const s = llmSummarizer({ baseUrl: srv.baseUrl, apiKey: kKey, onEvent, timeoutMs: 200 });
    expect(await s(kText, 60, "lbl")).toBe(summarizeExtractive(kText, 60, "lbl", counter));
    expect(events[0].reason).toBe("timeout: no answer within 200 ms");
  });

  it("timeoutMs bounds the whole call, retries included", async () => {
    const srv = await startServer((_, res) => setTimeout(() => answer(res, kLongAnswer), 120));
    const { events, onEvent } = collect();
    const s = llmSummarizer({ baseUrl: srv.baseUrl, apiKey: kKey, onEvent, timeoutMs: 300, maxRetries: 10 });
    const t0 = performance.now();
    await s(kText, 60, "lbl");
    expect(performance.now() - t0).toBeLessThan(3000);
    expect(srv.requests.length).toBeLessThanOrEqual(3);
    expect(events.at(-1)).toMatchObject({ type: "summarizer_fallback", reason: "timeout: no answer within 300 ms" });
  });

  it("a network error (nothing listening)", async () => {
    const srv = await startServer(() => undefined);
    await srv.close();
    const { events, onEvent } = collect();
    const s = llmSummarizer({ baseUrl: srv.baseUrl, apiKey: kKey, onEvent });
    expect(await s(kText, 60, "lbl")).toBe(summarizeExtractive(kText, 60, "lbl", counter));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: "summarizer_fallback", attempt: 1 });
    expect(events[0].reason).toMatch(/^network_error: /);
  });

  it("never throws: a failing fallback, a throwing observer, bad arguments", async () => {
    const srv = await startServer((_, res) => (res.writeHead(503), res.end()));
    const { events, onEvent } = collect();
    const s = llmSummarizer({
      baseUrl: srv.baseUrl,
      apiKey: kKey,
      onEvent,
      fallback: () => {
        throw new Error("fallback down");
      },
    });
    expect(await s(kText, 60, "lbl")).toBe(summarizeExtractive(kText, 60, "lbl", counter));
    expect(events[0].reason).toMatch(/^http_503: ; the fallback failed \(fallback down\): used the extractive summariser$/);

    const overTarget = llmSummarizer({ baseUrl: srv.baseUrl, apiKey: kKey, fallback: () => kLongAnswer });
    expect(await overTarget(kText, 60, "lbl")).toBe(summarizeExtractive(kText, 60, "lbl", counter));

    const throwingObserver = llmSummarizer({
      baseUrl: srv.baseUrl,
      apiKey: kKey,
      onEvent: () => {
        throw new Error("observer down");
      },
    });
    expect(await throwingObserver(kText, 60, "lbl")).toBe(summarizeExtractive(kText, 60, "lbl", counter));

    const bad = llmSummarizer({ baseUrl: srv.baseUrl, apiKey: kKey });
    await expect(bad(42 as unknown as string, 60, "lbl")).resolves.toBe("");
    await expect(bad(kText, Number.NaN, "lbl")).resolves.toBe("");
  });
});

describe("llmSummarizer: configuration", () => {
  it("reads CTXFOLD_LLM_BASE_URL, CTXFOLD_LLM_MODEL and CTXFOLD_LLM_API_KEY", async () => {
    const srv = await startServer((_, res) => answer(res, "ok"));
    vi.stubEnv("CTXFOLD_LLM_BASE_URL", srv.baseUrl);
    vi.stubEnv("CTXFOLD_LLM_MODEL", "env-model");
    vi.stubEnv("CTXFOLD_LLM_API_KEY", kKey);
    vi.stubEnv("OPENAI_BASE_URL", "http://127.0.0.1:9/never");
    vi.stubEnv("OPENAI_API_KEY", "other-key");
    expect(await llmSummarizer()(kText, 60, "x")).toBe("ok");
    expect(srv.requests[0].body.model).toBe("env-model");
    expect(srv.requests[0].headers.authorization).toBe(`Bearer ${kKey}`);
  });

  it("falls back to OPENAI_BASE_URL and OPENAI_API_KEY, and the default model", async () => {
    const srv = await startServer((_, res) => answer(res, "ok"));
    vi.stubEnv("CTXFOLD_LLM_BASE_URL", "");
    vi.stubEnv("CTXFOLD_LLM_MODEL", "");
    vi.stubEnv("CTXFOLD_LLM_API_KEY", "");
    vi.stubEnv("OPENAI_BASE_URL", srv.baseUrl);
    vi.stubEnv("OPENAI_API_KEY", kKey);
    expect(await llmSummarizer()(kText, 60, "x")).toBe("ok");
    expect(srv.requests[0].body.model).toBe("gpt-4o-mini");
    expect(srv.requests[0].headers.authorization).toBe(`Bearer ${kKey}`);
  });

  it("options win over the environment", async () => {
    const srv = await startServer((_, res) => answer(res, "ok"));
    vi.stubEnv("CTXFOLD_LLM_BASE_URL", "http://127.0.0.1:9/never");
    vi.stubEnv("CTXFOLD_LLM_MODEL", "env-model");
    vi.stubEnv("CTXFOLD_LLM_API_KEY", "env-key");
    expect(await llmSummarizer({ baseUrl: srv.baseUrl, model: "opt-model", apiKey: kKey })(kText, 60, "x")).toBe("ok");
    expect(srv.requests[0].body.model).toBe("opt-model");
    expect(srv.requests[0].headers.authorization).toBe(`Bearer ${kKey}`);
  });

  it("a missing key is E_BAD_INPUT at construction, naming apiKey and the variables", () => {
    vi.stubEnv("CTXFOLD_LLM_API_KEY", "");
    vi.stubEnv("OPENAI_API_KEY", "");
    const err = thrown(() => llmSummarizer(), "E_BAD_INPUT");
    expect(err.path).toBe("apiKey");
    expect(err.message).toContain("apiKey");
    expect(err.message).toContain("CTXFOLD_LLM_API_KEY");
    expect(err.message).toContain("OPENAI_API_KEY");
  });

  it("rejects bad options at construction", () => {
    expect(thrown(() => llmSummarizer({ apiKey: kKey, baseUrl: "not a url" }), "E_BAD_INPUT").path).toBe("baseUrl");
    expect(thrown(() => llmSummarizer({ apiKey: kKey, baseUrl: "ftp://example.com" }), "E_BAD_INPUT").path).toBe("baseUrl");
    expect(thrown(() => llmSummarizer({ apiKey: kKey, timeoutMs: 0 }), "E_BAD_INPUT").path).toBe("timeoutMs");
    expect(thrown(() => llmSummarizer({ apiKey: kKey, maxRetries: 1.5 }), "E_BAD_INPUT").path).toBe("maxRetries");
    expect(thrown(() => llmSummarizer({ apiKey: kKey, maxRetries: -1 }), "E_BAD_INPUT").path).toBe("maxRetries");
    expect(CtxfoldError.isInstance(thrown(() => llmSummarizer({ apiKey: kKey, fetch: 3 as unknown as typeof fetch }), "E_BAD_INPUT"))).toBe(true);
  });
});

describe("llmSummarizer: the API key", () => {
  it("travels in the Authorization header and nowhere else, even when the server echoes it", async () => {
    const srv = await startServer((req, res) => {
      res.writeHead(401, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `invalid key in header: ${req.headers.authorization}` } }));
    });
    const { events, onEvent } = collect();
    const s = llmSummarizer({ baseUrl: srv.baseUrl, apiKey: kKey, onEvent });
    const out = await s(kText, 60, "lbl");
    expect(srv.requests[0].headers.authorization).toBe(`Bearer ${kKey}`);
    expect(JSON.stringify(srv.requests[0].body)).not.toContain(kKey);
    expect(events).toHaveLength(1);
    expect(events[0].reason).toMatch(/^http_401: /);
    expect(JSON.stringify(events)).not.toContain(kKey);
    expect(out).not.toContain(kKey);
  });

  it("is not in the message of a construction error, nor on the summariser", () => {
    const err = thrown(() => llmSummarizer({ apiKey: kKey, baseUrl: `::${kKey}::` }), "E_BAD_INPUT");
    expect(err.message).not.toContain(kKey);
    const s = llmSummarizer({ apiKey: kKey });
    expect(JSON.stringify(Object.entries(s))).not.toContain(kKey);
    expect(s.toString()).not.toContain(kKey);
  });

  it("an answer echoing the key does not pass it on", async () => {
    const srv = await startServer((req, res) => answer(res, `auth was ${String(req.headers.authorization).slice(7)}`));
    const s = llmSummarizer({ baseUrl: srv.baseUrl, apiKey: kKey });
    const out = await s(kText, 60, "lbl");
    expect(out).toBe("auth was [REDACTED]");
  });

  it("over-target retries and fallbacks carry no key either", async () => {
    const srv = await startServer((req, res) => answer(res, `${kLongAnswer} ${String(req.headers.authorization)}`));
    const { events, onEvent } = collect();
    const s = llmSummarizer({ baseUrl: srv.baseUrl, apiKey: kKey, onEvent });
    await s(kText, 60, "lbl");
    expect(events.length).toBe(3);
    expect(JSON.stringify(events)).not.toContain(kKey);
  });
});
