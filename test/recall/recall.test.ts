import * as fs from "node:fs";
import { describe, expect, it } from "vitest";
import { kAdapters, kFormats, renderMessages } from "../../src/adapters/index.js";
import { generateRun } from "../../src/gen/run.js";
import type { Message } from "../../src/model/schema.js";
import { kDefaultRecallPageBytes, recall, type RecallMessages, type RecallText } from "../../src/recall/index.js";
import { createFsStore, createMemoryStore, createPackStore, encodeText, putMessages, type OffloadStore } from "../../src/store/index.js";
import { tempDirs, thrown } from "../helpers.js";

const tmp = tempDirs("ctxfold-recall-");
const freshDir = tmp.fresh;

/** Every page of a content ref, following `next` from offset 0. */
function pages(store: OffloadStore, ref: string, maxBytes: number): RecallText[] {
  const out: RecallText[] = [];
  let offset: number | undefined = 0;
  while (offset !== undefined) {
    const page = recall(store, ref, { offset, maxBytes }) as RecallText;
    expect(page.type).toBe("text");
    out.push(page);
    offset = page.next;
  }
  return out;
}

const bytesOf = (page: RecallText) => (page.encoding === "base64" ? Buffer.from(page.text, "base64") : encodeText(page.text));

/** A generated run's messages after the system prompt and the task: what a compaction removes. */
function removed(seed: number, steps: number): Message[] {
  return generateRun({ seed, steps }).messages.slice(2);
}

describe("recall: content refs", () => {
  it("gives a small ref's text whole, in one page", () => {
    const store = createMemoryStore();
    const ref = store.put("line one\nline two\n", { kind: "shell", ext: "log" });
    expect(recall(store, ref)).toEqual({ type: "text", ref, kind: "shell", text: "line one\nline two\n", encoding: "utf-8", offset: 0, end: 18, size: 18 });
    const empty = store.put("");
    expect(recall(store, empty)).toMatchObject({ text: "", offset: 0, end: 0, size: 0 });
    expect(recall(store, empty)).not.toHaveProperty("next");
  });

  it("pages a large ref at maxBytes (16 KiB by default), never inside a UTF-8 sequence; the pages are the original bytes", () => {
    const store = createMemoryStore();
    // ASCII, 2-, 3- and 4-byte sequences, and lone surrogates (WTF-8), so page ends land inside sequences.
    const unit = "log line 42 é ☃ 😀 \uD800 end\n";
    const text = unit.repeat(6000);
    const ref = store.put(text);
    const whole = store.get(ref);
    expect(whole.length).toBeGreaterThan(4 * kDefaultRecallPageBytes);
    const first = recall(store, ref) as RecallText;
    expect(first.end).toBeLessThanOrEqual(kDefaultRecallPageBytes);
    expect(first.end).toBeGreaterThan(kDefaultRecallPageBytes - 4);
    for (const maxBytes of [kDefaultRecallPageBytes, 1000, 257]) {
      const all = pages(store, ref, maxBytes);
      expect(all.length).toBeGreaterThanOrEqual(Math.ceil(whole.length / maxBytes));
      for (const [i, p] of all.entries()) {
        expect(p.encoding).toBe("utf-8");
        expect(p.text).not.toContain("\uFFFD");
        expect(p.end - p.offset).toBeLessThanOrEqual(maxBytes);
        expect(p.offset).toBe(i === 0 ? 0 : all[i - 1].end);
        expect(p.size).toBe(whole.length);
      }
      expect(Buffer.concat(all.map(bytesOf)).equals(Buffer.from(whole))).toBe(true);
      expect(all.map((p) => p.text).join("")).toBe(text);
      expect(all.at(-1)!.next).toBeUndefined();
    }
  });

  it("an offset inside a UTF-8 sequence starts the page at the sequence's first byte, and says so", () => {
    const store = createMemoryStore();
    const ref = store.put("ab😀cd");
    // "ab" is bytes 0-1, the emoji 2-5.
    for (const offset of [3, 4, 5]) expect(recall(store, ref, { offset })).toMatchObject({ offset: 2, text: "😀cd" });
    expect(recall(store, ref, { offset: 6 })).toMatchObject({ offset: 6, text: "cd" });
  });

  it("bytes that are not text come back as base64, exactly", () => {
    const store = createMemoryStore();
    const binary = Uint8Array.from({ length: 3000 }, (_, i) => (i * 37 + 0x80) & 0xff);
    const ref = store.put(binary, { kind: "image", ext: "bin" });
    const all = pages(store, ref, 1024);
    expect(all.every((p) => p.encoding === "base64")).toBe(true);
    expect(Buffer.concat(all.map(bytesOf)).equals(Buffer.from(binary))).toBe(true);
  });

  it("reads every store layout: memory, per-file, packs, and a pack store over a per-file directory", () => {
    const dir = freshDir();
    const perFile = createFsStore({ dir });
    const ref = perFile.put("stored as a file");
    const packDir = freshDir();
    const pack = createPackStore({ dir: packDir });
    pack.put("stored in a pack");
    pack.flush();
    const memory = createMemoryStore();
    memory.put("stored in memory");
    expect((recall(perFile, ref) as RecallText).text).toBe("stored as a file");
    expect((recall(createPackStore({ dir }), ref) as RecallText).text).toBe("stored as a file");
    expect((recall(createPackStore({ dir: packDir }), pack.refs()[0]) as RecallText).text).toBe("stored in a pack");
    expect((recall(memory, memory.refs()[0]) as RecallText).text).toBe("stored in memory");
  });
});

describe("recall: history refs, in the caller's provider format", () => {
  it("renders a history's messages in each format, as the format's adapter renders them", () => {
    const store = createMemoryStore();
    const messages = removed(3, 8);
    const { ref } = putMessages(store, messages);
    for (const format of kFormats) {
      const page = recall(store, ref, { format, maxBytes: 1 << 24 }) as RecallMessages;
      expect(page).toMatchObject({ type: "messages", ref, kind: "history", format, offset: 0, end: messages.length, count: messages.length });
      expect(page).not.toHaveProperty("next");
      const wire = renderMessages(messages, format);
      expect(page.messages).toEqual(Array.isArray(wire) ? wire : (wire as { messages: unknown[] }).messages);
    }
  });

  it("pages by whole exchanges (an assistant's calls with the tool messages answering them), one larger than a page alone", () => {
    const store = createMemoryStore();
    const messages = removed(5, 30);
    const { ref } = putMessages(store, messages);
    for (const format of ["openai-chat", "anthropic", "ai-sdk"] as const) {
      const seen: unknown[] = [];
      let offset: number | undefined = 0;
      let count = 0;
      let oversized = 0;
      while (offset !== undefined) {
        const page = recall(store, ref, { format, offset, maxBytes: 2000 }) as RecallMessages;
        expect(page.offset).toBe(offset);
        // Each page is whole exchanges: it parses back with every tool result answering a call of the page.
        const back = kAdapters[format].parse(format === "anthropic" ? { messages: page.messages } : page.messages);
        const calls = new Set(back.flatMap((m) => m.parts.flatMap((p) => (p.type === "tool-call" ? [p.id] : []))));
        for (const m of back) for (const p of m.parts) if (p.type === "tool-result") expect(calls.has(p.callId)).toBe(true);
        if (page.next !== undefined) expect(messages[page.next].role).not.toBe("tool");
        // Within maxBytes, or one exchange (a message and its tool results) larger than it, alone.
        const mine = messages.slice(page.offset, page.end);
        const size = mine.reduce((n, m) => n + Buffer.byteLength(JSON.stringify(kAdapters[format].render([m]))), 0);
        if (size > 2000) {
          expect(mine.slice(1).every((m) => m.role === "tool")).toBe(true);
          oversized++;
        }
        seen.push(...messages.slice(page.offset, page.end));
        count++;
        offset = page.next;
      }
      expect(count).toBeGreaterThan(3);
      expect(oversized).toBeGreaterThan(0);
      expect(seen).toEqual(messages);
    }
  });

  it("a message ref (one entry of a history) is a page of one message", () => {
    const store = createMemoryStore();
    const messages = removed(7, 4);
    const { refs } = putMessages(store, messages);
    const page = recall(store, refs[0], { format: "anthropic" }) as RecallMessages;
    expect(page).toMatchObject({ type: "messages", kind: "message", offset: 0, end: 1, count: 1 });
    expect(page.messages).toEqual((renderMessages([messages[0]], "anthropic") as { messages: unknown[] }).messages);
  });
});

describe("recall: bad input is a typed error naming what is wrong", () => {
  const store = createMemoryStore();
  const ref = store.put("0123456789");
  const { ref: history } = putMessages(store, removed(9, 3));

  it("E_BAD_REF for what no store makes, and for another store's ref (naming this store's prefix)", () => {
    for (const bad of ["", "../../etc/passwd", "workspace/outputs/output_123.txt", "workspace/outputs/OUTPUT_0123456789abcdef.txt"]) {
      expect(thrown(() => recall(store, bad), "E_BAD_REF").path).toBe("ref");
    }
    thrown(() => recall(store, 42 as unknown as string), "E_BAD_REF");
    const other = thrown(() => recall(store, `elsewhere/${ref.split("/").pop()}`), "E_BAD_REF");
    expect(other.message).toContain('"workspace/outputs/"');
    expect(other.message).toContain("another store");
  });

  it("a bare name is a ref of the store; E_REF_NOT_FOUND for a well-formed ref not stored", () => {
    expect((recall(store, ref.split("/").pop()!) as RecallText).text).toBe("0123456789");
    expect((recall(store, ` ${ref}\n`) as RecallText).text).toBe("0123456789");
    const err = thrown(() => recall(store, "workspace/outputs/output_0123456789abcdef.txt"), "E_REF_NOT_FOUND");
    expect(err.message).toContain("output_0123456789abcdef.txt");
  });

  it("E_BAD_INPUT at the option's path for an offset past the end, a page too small, an unknown format", () => {
    expect(recall(store, ref, { offset: 9 })).toMatchObject({ text: "9" });
    for (const offset of [10, 11, -1, 1.5, Number.NaN]) expect(thrown(() => recall(store, ref, { offset }), "E_BAD_INPUT").path).toBe("offset");
    expect(thrown(() => recall(store, ref, { offset: 10 }), "E_BAD_INPUT").message).toContain("10 bytes");
    expect(recall(store, history, { offset: 2 })).toMatchObject({ offset: 2 });
    const past = thrown(() => recall(store, history, { offset: 500 }), "E_BAD_INPUT");
    expect(past.path).toBe("offset");
    expect(past.message).toContain("messages");
    expect(thrown(() => recall(store, ref, { maxBytes: 10 }), "E_BAD_INPUT").path).toBe("maxBytes");
    expect(thrown(() => recall(store, history, { format: "gemini" as never }), "E_BAD_INPUT").path).toBe("format");
    expect(thrown(() => recall(store, ref, null as never), "E_BAD_INPUT").path).toBe("options");
  });

  it("E_CORRUPT for tampered bytes: the content, a history's index, a message it names", () => {
    const dir = freshDir();
    const fsStore = createFsStore({ dir });
    const text = fsStore.put("the original output");
    const { ref: index, refs } = putMessages(fsStore, removed(11, 3));
    for (const target of [text, index, refs[1]]) {
      const file = fsStore.pathOf(target);
      const good = fs.readFileSync(file);
      const bad = Buffer.from(good);
      bad[5] ^= 0x01;
      fs.writeFileSync(file, bad);
      const err = thrown(() => recall(createFsStore({ dir }), target === refs[1] ? index : target), "E_CORRUPT");
      expect(err.message).toContain(file);
      fs.writeFileSync(file, good);
    }
  });

  it("a history ref whose bytes are no index, or a message ref that is no message: typed errors, not a crash", () => {
    const s = createMemoryStore();
    thrown(() => recall(s, s.put("not json", { kind: "history", ext: "json" })), "E_BAD_REF");
    thrown(() => recall(s, s.put('{"ctxfold":"messages"}', { kind: "history", ext: "json" })), "E_BAD_REF");
    thrown(() => recall(s, s.put("not json", { kind: "message", ext: "json" })), "E_SCHEMA");
  });
});
