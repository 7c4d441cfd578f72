/**
 * The fact ledger (policy/ledger.ts): what removed steps established, extracted without a model,
 * ranked, bounded, deduplicated against the kept prompt, and append-only across a session's
 * epochs; and stage 3's group lines naming their steps' targets.
 */
import { describe, expect, it } from "vitest";
import { CtxfoldError } from "../../../src/errors.js";
import { markOf } from "../../../src/model/marks.js";
import type { Message } from "../../../src/model/schema.js";
import { createCompactor, kDefaultTieredSettings, resolveTieredSettings } from "../../../src/policy/index.js";
import {
  extendLedger,
  isLedgerPart,
  kFirstShare,
  kLedgerHeading,
  ledgerLines,
  ledgerPart,
  ledgerText,
  type LedgerLine,
  type Removed,
} from "../../../src/policy/relevance/ledger.js";
import { messageFacts } from "../../../src/policy/relevance/ledger-facts.js";
import { StepCache } from "../../../src/policy/step-cache.js";
import { StageKit, shrinkLedger, type Work } from "../../../src/policy/work.js";
import { classify } from "../../../src/policy/classify.js";
import { StepCompactor } from "../../../src/steps/compactor.js";
import { StepReducer } from "../../../src/steps/reducer.js";
import { createMemoryStore } from "../../../src/store/index.js";
import { tokenMeasure } from "../../../src/tokens/measure.js";
import { TokenCounter } from "../../../src/tokens/token-counter.js";
import { renderMessages } from "../../../src/adapters/index.js";

const counter = new TokenCounter({ encoding: "o200k_base" });

function kit(settings: Partial<typeof kDefaultTieredSettings> = {}): StageKit {
  const store = createMemoryStore();
  return new StageKit(
    {
      settings: { ...kDefaultTieredSettings, ...settings },
      store,
      counter,
      steps: new StepCache(),
      summarizer: undefined,
      emit: () => {},
      memo: new Map(),
      stepCompactors: new Map(),
      storeReducer: new StepReducer({ store }),
    },
    tokenMeasure(counter),
  );
}

const user = (id: string, text: string): Message => ({ id, role: "user", parts: [{ type: "text", text }], meta: {} });
const assistant = (id: string, text: string): Message => ({ id, role: "assistant", parts: [{ type: "text", text }], meta: {} });
const call = (id: string, thought: string, name: string, args: object): Message => ({
  id,
  role: "assistant",
  parts: [...(thought ? [{ type: "text" as const, text: thought }] : []), { type: "tool-call", id: `call_${id}`, name, args: JSON.stringify(args) }],
  meta: {},
});
const result = (id: string, text: string, isError = false): Message => ({
  id: `r${id}`,
  role: "tool",
  parts: [{ type: "tool-result", callId: `call_${id}`, name: "tool", content: [{ type: "text", text }], ...(isError ? { isError } : {}) }],
  meta: {},
});

/** Removed messages and their reduced steps, as stage 3 hands them over. */
function removedOf(messages: Message[]): Removed {
  return { messages, steps: new StepReducer({ offload: false }).reduceMessages(messages) };
}

/** A debugging session's early steps: a read, a failed run, an edit, a decision. */
function earlySteps(): Message[] {
  return [
    call("1", "Let me look at how parse_config reads the YAML file.", "read_file", { path: "src/app/config.py" }),
    result("1", "def parse_config(path):\n    return yaml.safe_load(open(path))\n\nclass ConfigLoader:\n    pass\n"),
    call("2", "Run the failing test to see the traceback.", "bash", { command: "python -m pytest tests/test_config.py -x" }),
    result(
      "2",
      "Traceback (most recent call last):\n  File \"tests/test_config.py\", line 3\nModuleNotFoundError: No module named 'yaml_loader'\n<returncode>1</returncode>",
    ),
    call("3", "The bug is in ConfigLoader.load_settings: I'll change load_settings to read the path with pathlib.Path.", "write_file", {
      path: "src/app/settings.py",
      content: "from pathlib import Path\n\ndef load_settings(p):\n    return Path(p).read_text()\n",
    }),
    result("3", "File written."),
  ];
}

const allTerms = (lines: readonly LedgerLine[]) => lines.map((l) => l.text).join("\n");
/** The room of a fresh ledger whose first block is `tokens` (kFirstShare of it). */
const roomForBlock = (tokens: number) => Math.ceil(tokens / kFirstShare);

describe("extraction", () => {
  it("gets every kind of fact: files (edited ones said so), names, error lines, decisions", () => {
    const lines = extendLedger(kit(), [], removedOf(earlySteps()), "", 400, true);
    const text = allTerms(lines);
    expect(text).toMatch(/^- edited: .*src\/app\/settings\.py/m);
    expect(text).toMatch(/^- files: .*src\/app\/config\.py/m);
    expect(text).toMatch(/^- names: .*parse_config/m);
    expect(text).toMatch(/ConfigLoader\.load_settings|load_settings/);
    expect(text).toMatch(/^- error: ModuleNotFoundError: No module named 'yaml_loader'$/m);
    expect(text).toMatch(/^- decision: The bug is in ConfigLoader\.load_settings: I'll change load_settings/m);
    // Every line names the keys of the facts it states.
    for (const l of lines) expect(l.keys.length).toBeGreaterThan(0);
  });

  it("reads a call's JSON arguments by their strings: escaped newlines glue no names together", () => {
    const facts = messageFacts(call("9", "", "bash", { command: "cd /repo\ngrep -n make_hashable django/utils/hashable.py" }));
    const terms = [...facts.terms.keys()];
    expect(terms).toContain("make_hashable");
    expect(terms).toContain("django/utils/hashable.py");
    expect(terms.some((t) => t.includes("\\n") || t.startsWith("n/"))).toBe(false);
  });

  it("works on steps without tool calls: a chat's removed turns give their names", () => {
    const chat = [
      user("u1", "Please rename fetch_orders to load_orders in billing/api.py."),
      assistant("a1", "Sure. I'll rename fetch_orders to load_orders and update OrderClient.get."),
    ];
    const lines = extendLedger(kit(), [], { messages: chat, steps: [] }, "", 300, true);
    const text = allTerms(lines);
    expect(text).toContain("billing/api.py");
    expect(text).toContain("OrderClient.get");
    expect(text).not.toMatch(/^- error:/m);
  });

  it("takes names from non-English text (decision cues are English: none there)", () => {
    const text = "Ошибка в функции загрузить_конфиг: файл src/設定/config_loader.py не читается. 我将修改 `ConfigLoader.read_all` 函数。";
    const lines = extendLedger(kit(), [], { messages: [assistant("a", text)], steps: [] }, "", 300, true);
    const all = allTerms(lines);
    expect(all).toContain("загрузить_конфиг");
    expect(all).toContain("src/設定/config_loader.py");
    expect(all).toContain("ConfigLoader.read_all");
    expect(all).not.toMatch(/^- decision:/m);
  });

  // That this stays fast is the bench gate's ("facts 4 MB output" in bench/enormous.ts).
  it("reads an enormous output in its head and tail windows only, and a binary one not at all", () => {
    const middle = "x".repeat(2_000_000) + " hidden_middle_name " + "y".repeat(2_000_000);
    const huge = `first_visible_name at the top\n${middle}\nlast_visible_name at the end`;
    const binary = "\x00\x01\x02PNG binary_looking_name\x00\x00" + "\x03".repeat(5000);
    const facts = [messageFacts(result("7", huge)), messageFacts(result("8", binary))];
    expect([...facts[0].terms.keys()]).toEqual(expect.arrayContaining(["first_visible_name", "last_visible_name"]));
    expect(facts[0].terms.has("hidden_middle_name")).toBe(false);
    expect(facts[1].terms.size).toBe(0);
  });

  it("never shows a secret: texts are redacted before names are taken", () => {
    const m = assistant("s", "Set OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx1234 then call run_job.");
    const text = allTerms(extendLedger(kit(), [], { messages: [m], steps: [] }, "", 300, true));
    expect(text).toContain("run_job");
    expect(text).not.toContain("sk-proj-abcdefghijklmnopqrstuvwx1234");
  });

  it("never shows a piece of a secret a window's cut would split: the head and tail windows end where no secret can be split", () => {
    const key = `sk-proj-${"Zq9".repeat(16)}`;
    const line = (i: number) => `line ${i} export OPENAI_API_KEY=${key} value_${i}`;
    const text = Array.from({ length: 400 }, (_, i) => line(i)).join("\n");
    // Every offset of a cut through the key: both windows' edges fall inside one somewhere in these.
    for (let shift = 0; shift < line(0).length; shift += 7) {
      const facts = messageFacts(result(`k${shift}`, `${"p".repeat(shift)} ${text}`));
      const leaked = [...facts.terms.keys()].filter((t) => t.includes("Zq9Zq9") || t.includes("sk-proj"));
      expect(leaked, `shift ${shift}`).toEqual([]);
    }
  });

  it("never shows a secret-named argument's value, whatever it looks like", () => {
    const msgs = [
      call("1", "Deploy the billing service.", "deploy", {
        service: "billing_service",
        password: "Hunter2Hunter2Zebra",
        auth: { githubToken: "Gt5Yh8Kp2Wq6Ze3R" },
      }),
      result("1", "deployed"),
    ];
    const text = allTerms(extendLedger(kit(), [], removedOf(msgs), "", 300, true));
    expect(text).toContain("billing_service");
    expect(text).not.toContain("Hunter2Hunter2Zebra");
    expect(text).not.toContain("Gt5Yh8Kp2Wq6Ze3R");
  });
});

describe("ranking, bound and dedupe", () => {
  it("stays within its room, a fresh ledger within its first share of it", () => {
    const many = Array.from({ length: 60 }, (_, k) => [
      call(`m${k}`, `Check module_${k}.handler_${k} in pkg_${k}/mod_${k}.py`, "bash", { command: `grep -n handler_${k} pkg_${k}/mod_${k}.py` }),
      result(`m${k}`, `pkg_${k}/mod_${k}.py:1: def handler_${k}():`),
    ]).flat();
    for (const room of [40, 120, 400]) {
      const lines = extendLedger(kit(), [], removedOf(many), "", room, true);
      expect(tokenMeasure(counter).text(ledgerText(lines))).toBeLessThanOrEqual(Math.floor(room * kFirstShare) + tokenMeasure(counter).text(kLedgerHeading));
    }
    expect(extendLedger(kit(), [], removedOf(many), "", 8, true)).toEqual([]);
  });

  it("prefers what the agent wrote and what is recent over what a tool printed once", () => {
    const msgs = [
      call("1", "", "bash", { command: "ls" }),
      result("1", "noise_from_output_only.txt other_listing_name"),
      call("2", "Now edit resolve_alias in core/aliases.py.", "bash", { command: "sed -n 1,40p core/aliases.py" }),
      result("2", "def resolve_alias(): pass"),
    ];
    const lines = extendLedger(kit(), [], removedOf(msgs), "", roomForBlock(20), true);
    const text = allTerms(lines);
    expect(text).toContain("resolve_alias");
    expect(text).not.toContain("noise_from_output_only.txt");
  });

  it("ranks a name by its odds per token: two short names take the room one long name seen alike would", () => {
    const msgs = [
      call("1", "", "grep", { pattern: "load_cfg", flags: "parseRow" }),
      result("1", "ok"),
      call("2", "", "grep", { pattern: "handlers_registry_for_background_jobs_and_workers_v2" }),
      result("2", "ok"),
    ];
    // A block of 22 tokens: the heading and the long name alone, or both short ones.
    const lines = extendLedger(kit(), [], removedOf(msgs), "", roomForBlock(22), true);
    const text = allTerms(lines);
    expect(text).toContain("load_cfg");
    expect(text).toContain("parseRow");
    expect(text).not.toContain("handlers_registry_for_background_jobs_and_workers_v2");
    // With room for all three, the long name comes too.
    expect(allTerms(extendLedger(kit(), [], removedOf(msgs), "", 200, true))).toContain("handlers_registry_for_background_jobs_and_workers_v2");
  });

  it("leaves out what the kept prompt already shows, and a name a longer one holds", () => {
    const msgs = [
      call("1", "Look at django.conf and then django.conf.settings.DEBUG in settings_module.py.", "bash", { command: "cat settings_module.py" }),
      result("1", "DEBUG = True"),
    ];
    const lines = extendLedger(kit(), [], removedOf(msgs), "The task mentions settings_module.py.", 300, true);
    const text = allTerms(lines);
    expect(text).not.toContain("settings_module.py");
    expect(text).toContain("django.conf.settings.DEBUG");
    expect(text.split(/\s+/)).not.toContain("django.conf");
  });

  it("is deterministic: the same removed messages (fresh objects too) give the same lines", () => {
    const a = extendLedger(kit(), [], removedOf(earlySteps()), "", 200, true);
    const b = extendLedger(kit(), [], removedOf(structuredClone(earlySteps())), "", 200, true);
    expect(b).toEqual(a);
  });
});

describe("append-only across epochs", () => {
  const later = (): Message[] => [
    call("4", "Now check render_template in web/views.py.", "bash", { command: "grep -n render_template web/views.py" }),
    result("4", "web/views.py:12: return render_template('index.html')"),
  ];

  it("a later ledger starts with the earlier one's lines, in order, and appends new facts", () => {
    const first = extendLedger(kit(), [], removedOf(earlySteps()), "", 400, true);
    const second = extendLedger(kit(), first, removedOf([...earlySteps(), ...later()]), "", 400, true);
    expect(second.slice(0, first.length)).toEqual(first);
    expect(ledgerText(second).startsWith(ledgerText(first))).toBe(true);
    expect(allTerms(second.slice(first.length))).toContain("render_template");
    // A fact the earlier lines hold is not repeated.
    expect(allTerms(second.slice(first.length))).not.toContain("parse_config");
  });

  it("starts over when the earlier lines leave less than a fifth of the room", () => {
    const first = extendLedger(kit(), [], removedOf(earlySteps()), "", 400, true);
    const room = tokenMeasure(counter).text(ledgerText(first)) + 5;
    const second = extendLedger(kit(), first, removedOf([...earlySteps(), ...later()]), "", room, true);
    expect(second.slice(0, first.length)).not.toEqual(first);
  });

  it("in a session: the next epoch's ledger extends the previous epoch's, and the rendered prefix reaches through it", async () => {
    const compactor = createCompactor({ store: createMemoryStore() });
    const session = compactor.session();
    const convo: Message[] = [
      { id: "sys", role: "system", parts: [{ type: "text", text: "You fix bugs." }], meta: {} },
      user("task", "Fix the failing config tests."),
    ];
    const filler = "lorem ipsum dolor sit amet ".repeat(60);
    for (let k = 0; k < 80; k++) {
      convo.push(call(`s${k}`, `Step ${k}: inspect function_${k} in pkg/module_${k}.py.`, "bash", { command: `sed -n 1,80p pkg/module_${k}.py` }));
      convo.push(result(`s${k}`, `def function_${k}():\n    ${filler}`));
    }
    const ledgers: { text: string; wire: string }[] = [];
    for (let n = 6; n <= convo.length; n += 2) {
      const r = await session.compactCanonical(convo.slice(0, n), { budget: 4000 });
      if (r.stages.length === 0) continue;
      const lines = ledgerLines(r.canonical);
      if (lines.length === 0) continue;
      const wire = JSON.stringify(renderMessages(r.canonical, "openai-chat"));
      ledgers.push({ text: ledgerText(lines), wire });
    }
    expect(ledgers.length).toBeGreaterThan(2);
    let appended = 0;
    for (let k = 1; k < ledgers.length; k++) {
      if (!ledgers[k].text.startsWith(ledgers[k - 1].text)) continue; // a fresh start (room used up)
      appended++;
      const at = ledgers[k - 1].wire.indexOf(JSON.stringify(ledgers[k - 1].text).slice(1, -1));
      expect(at).toBeGreaterThan(0);
      // The wire output up to the end of the previous ledger is the same bytes.
      const upTo = at + JSON.stringify(ledgers[k - 1].text).length - 2;
      expect(ledgers[k].wire.slice(0, upTo)).toBe(ledgers[k - 1].wire.slice(0, upTo));
    }
    expect(appended).toBeGreaterThan(0);
  });

  it("ledgerRatio 0 writes none", async () => {
    const compactor = createCompactor({ ledgerRatio: 0 });
    const convo: Message[] = [
      user("task", "Fix it."),
      ...earlySteps(),
      ...Array.from({ length: 10 }, (_, k) => [call(`f${k}`, `look ${k}`, "bash", { command: `cat f${k}.py` }), result(`f${k}`, "x ".repeat(400))]).flat(),
    ];
    const r = await compactor.compactCanonical(convo, { budget: 1500 });
    expect(r.stages.some((s) => s.stage === 3)).toBe(true);
    expect(r.canonical.some((m) => m.parts.some(isLedgerPart))).toBe(false);
  });
});

describe("in the pipeline", () => {
  it("stage 3 puts the ledger before the step summary's lines, marked, and nothing it names is lost from the store", async () => {
    const store = createMemoryStore();
    const compactor = createCompactor({ store });
    const convo: Message[] = [
      user("task", "Fix the config loader."),
      ...earlySteps(),
      ...Array.from({ length: 10 }, (_, k) => [call(`f${k}`, "look again", "bash", { command: "ls" }), result(`f${k}`, "x ".repeat(400))]).flat(),
    ];
    const r = await compactor.compactCanonical(convo, { budget: 1500 });
    const task = r.canonical.find((m) => m.parts.some(isLedgerPart))!;
    const at = task.parts.findIndex(isLedgerPart);
    expect(markOf(task.parts[at + 1])?.kind).toBe("step-summary");
    const text = (task.parts[at] as { text: string }).text;
    expect(text.startsWith(kLedgerHeading)).toBe(true);
    expect(text).toContain("parse_config");
    expect(r.tokensAfter).toBeLessThanOrEqual(1500);
  });

  it("stage 4 leaves the ledger whole beside the merged summary (not summarised again) and appends the merged messages' facts", async () => {
    const para = (k: number) => Array.from({ length: 20 }, (_, j) => `Point ${k}.${j}: node-${j} is slow.`).join(" ");
    const convo: Message[] = [user("task", "Fix the config loader.")];
    for (let k = 0; k < 12; k++) {
      convo.push(
        call(`c${k}`, `Check handler_${k} in pkg/mod_${k}.py`, "bash", { command: `cat pkg/mod_${k}.py` }),
        result(`c${k}`, "y ".repeat(300), k === 3),
      );
      convo.push(user(`u${k}`, `${para(k)} Ticket TCK_${k}.`), assistant(`a${k}`, para(k + 100)));
    }
    convo.push(call("last", "final check", "bash", { command: "ls" }), result("last", "ok"));
    const r = await createCompactor({ store: createMemoryStore() }).compactCanonical(convo, { budget: 1500 });
    expect(r.status).toBe("ok");
    expect(r.stages.map((s) => s.stage)).toContain(4);
    const parts = r.canonical.flatMap((m) => m.parts);
    const ledgers = parts.filter(isLedgerPart);
    const merge = parts.find((p) => markOf(p)?.kind === "merge") as { text: string } | undefined;
    expect(ledgers).toHaveLength(1);
    expect(merge).toBeDefined();
    const ledger = (ledgers[0] as { text: string }).text;
    expect(merge!.text).not.toContain(kLedgerHeading);
    expect(ledger).toContain("pkg/mod_11.py");
    expect(ledger).toMatch(/TCK_\d+/);
    // The failure stays visible through the merge.
    expect(parts.some((p) => p.type === "text" && p.text.includes("call_c3"))).toBe(true);
  });

  it("stage 4's last resort keeps only the error lines, then takes a ledger without any away", () => {
    const k = kit();
    const lines: LedgerLine[] = [
      { text: "- names: alpha_beta gamma_delta", keys: ["alpha_beta", "gamma_delta"] },
      { text: "- error: ValueError: bad input", keys: ["error:ValueError: bad input"] },
    ];
    const msgs: Message[] = [user("task", "t"), { id: "s", role: "user", parts: [ledgerPart(lines), { type: "text", text: "summary" }], meta: {} }];
    const w: Work = { msgs, classes: classify(msgs), total: k.measure.all(msgs), target: 0, budget: 100, input: msgs, refs: [], compacted: 0, steps: [] };
    expect(shrinkLedger(k, w)).toBe(true);
    expect(ledgerLines(w.msgs)).toEqual([lines[1]]);
    expect((w.msgs[1].parts[0] as { text: string }).text).toBe(`${kLedgerHeading}\n- error: ValueError: bad input`);
    expect(shrinkLedger(k, w)).toBe(false);
    const w2: Work = {
      ...w,
      msgs: [user("task", "t"), { id: "s", role: "user", parts: [ledgerPart([lines[0]]), { type: "text", text: "summary" }], meta: {} }],
    };
    expect(shrinkLedger(k, w2)).toBe(true);
    expect(w2.msgs[1].parts.some(isLedgerPart)).toBe(false);
  });
});

describe("settings", () => {
  it("ledgerRatio is a fraction of the budget from 0 to 0.5, named when bad", () => {
    expect(resolveTieredSettings({ ledgerRatio: 0 }).ledgerRatio).toBe(0);
    for (const bad of [-0.1, 0.6, "0.1"]) {
      const err = (() => {
        try {
          resolveTieredSettings({ ledgerRatio: bad as number });
        } catch (e) {
          return e;
        }
      })();
      expect(CtxfoldError.isInstance(err)).toBe(true);
      expect((err as CtxfoldError).path).toBe("config.ledgerRatio");
    }
  });

  it("stepTargets is a boolean, named when bad", () => {
    expect(() => resolveTieredSettings({ stepTargets: "yes" as unknown as boolean })).toThrow(/boolean/);
  });
});

describe("step targets in group lines", () => {
  const steps = new StepReducer({ offload: false }).reduceMessages(
    Array.from({ length: 4 }, (_, k) => [
      call(`g${k}`, "", "bash", { command: `nl -ba django/forms/field_${k}.py | sed -n 1,20p` }),
      result(`g${k}`, "ok"),
    ]).flat(),
  );

  it("names each step's command head and file, only when asked", () => {
    const plain = new StepCompactor({ keepRecent: 0 }).compact(steps).compactSteps.map(String);
    expect(plain).toEqual(["[step_001..004] 4 commands executed"]);
    const named = new StepCompactor({ keepRecent: 0, groupTargets: true }).compact(steps).compactSteps.map(String);
    expect(named).toEqual([
      "[step_001..004] 4 commands executed: nl django/forms/field_0.py; nl django/forms/field_1.py; nl django/forms/field_2.py; nl django/forms/field_3.py",
    ]);
  });
});
