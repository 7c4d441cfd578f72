/**
 * Supersession: which tool outputs later steps made stale, so that stage 2 lets them all go.
 * Decided from the calls' arguments and the step reducer's actions alone (no output is read
 * except to compare two outputs for equality), the same steps always giving the same answer:
 *
 * - **Same call again**: a later call of the same tool with the same canonical arguments (a
 *   shell command: the same command line, whitespace runs aside) that was answered. Shell
 *   commands, reads, listings, searches, page visits and query-like tools (`get_…`, `list_…`,
 *   `search_…`, …) are superseded by any later answer; other tools (which may change state:
 *   a booking, a transfer) only by a later answer with the same output. Edits never are.
 * - **File read again**: an output that shows only files (`cat`, `nl`, `head`, `sed -n a,bp`,
 *   `grep` on named files, an editor's view) is superseded once every file it shows is shown
 *   again, by a later successful read of the same file whose lines cover those lines: a full
 *   read covers any read; a line range, a range inside it; another view (`grep …`, `tail`),
 *   only the same view or a full read. `sed -n 10,20p f` then `sed -n 100,120p f` supersede
 *   nothing.
 * - **File edited**: with `edits`, a later successful edit of a file (an editor's write, `sed -i`,
 *   a redirection, `rm`, a Python heredoc opening it for writing) supersedes earlier reads of it.
 * - **Directory listed again**: a listing of a directory (`ls`, `tree`, `find dir`) is superseded
 *   by a later one of the same directory (a recursive one also supersedes a plain one).
 *
 * An edit's own output (an editor's diff or snippet) is never superseded by a read. A failed
 * output is superseded only by the same call again, and stage 2 keeps its error head and call
 * id in the replacement. Results in the preserved tail or answering a critical message's calls
 * are never marked; the superseding step may be anywhere later, the tail included. Each
 * superseded result names the earliest later step that superseded it, so its line stays the
 * same while the conversation grows.
 */
import { hashText, hashToHex } from "../../core/hash.js";
import type { Message, ToolCallPart, ToolResultPart } from "../../model/schema.js";
import { resultPayload } from "../../steps/reducer.js";
import { redactSecrets } from "../../steps/redact.js";
import { oneLine, shellCommand } from "../../steps/rules.js";
import type { ReducedStep } from "../../steps/types.js";
import { commandAccess, normalizeCommand, normalizePath, rangeCovers, type Access, type LineRange } from "./shell-access.js";
import type { MessageClass } from "../types.js";

/** One tool result later steps made stale. */
export interface Supersession {
  /** Where the result sits (message index) and the call it answers. */
  message: number;
  callId: string;
  /** The step (index into the steps) whose result it is, and the later step that superseded it. */
  step: number;
  by: number;
  /** What superseded it, for the replacement line: "src/a.py read again in step_012". */
  reason: string;
}

export interface SupersedeOptions {
  /** Whether a later edit of a file supersedes earlier reads of it. @default true */
  edits?: boolean;
}

/** What one step did, as supersession compares steps. */
interface StepFacts {
  /** The tool and its canonical arguments: equal keys are the same call. */
  key: string;
  shell: boolean;
  accesses: Access[];
  /** Some of its output is not a read or a listing. */
  opaque: boolean;
  /** Its own output is an edit's. */
  edit: boolean;
  /** A later identical call supersedes it whatever that call answered. */
  rerunnable: boolean;
  result?: ToolResultPart;
}

/** Tools named as queries: asking again gives the current answer. */
const kQueryTool = /^(?:get|list|search|find|fetch|read|show|describe|lookup|query|check|view|calculate|think)(?:[_A-Z:.-]|$)/i;

/** JSON with object keys sorted (arguments that differ only in key order are the same call). */
function canonicalJson(v: unknown): string {
  return (
    JSON.stringify(v, (_k, x: unknown) =>
      x && typeof x === "object" && !Array.isArray(x)
        ? Object.fromEntries(
            Object.keys(x)
              .sort()
              .map((k) => [k, (x as Record<string, unknown>)[k]]),
          )
        : x,
    ) ?? ""
  );
}

function parseArgs(raw: string): { args: Record<string, unknown>; valid: boolean } {
  try {
    const v: unknown = JSON.parse(raw);
    if (v !== null && typeof v === "object" && !Array.isArray(v)) return { args: v as Record<string, unknown>, valid: true };
  } catch {
    // not JSON: compared as the raw string
  }
  return { args: {}, valid: raw.length === 0 };
}

/** The lines an editor or read tool's arguments ask for: `view_range`, `offset` + `limit`, `start_line` / `end_line`. */
function argRange(args: Record<string, unknown>, pathKey: string): LineRange {
  const rest = Object.keys(args).filter((k) => k !== pathKey && k !== "command");
  if (rest.length === 0) return "full";
  const vr = args.view_range;
  if (rest.length === 1 && Array.isArray(vr) && vr.length === 2 && vr.every((x) => Number.isInteger(x))) {
    const [from, to] = vr as number[];
    return { from, to: to < 0 ? Infinity : to };
  }
  return { view: canonicalJson(Object.fromEntries(rest.map((k) => [k, args[k]]))) };
}

/** The key of `args` whose value is `value` (the reducer's path), if any. */
const keyOf = (args: Record<string, unknown>, value: unknown) => Object.keys(args).find((k) => args[k] === value);

/** Facts of calls already seen, by call part and action (a session's epochs see the same parts again). */
const kCallFacts = new WeakMap<ToolCallPart, Map<string, Omit<StepFacts, "result"> | null>>();

/** A step's facts, from its call part (found through callMessage) and its result part. */
function stepFacts(st: ReducedStep, msgs: readonly Message[]): StepFacts | undefined {
  if (st.callId === undefined || st.callMessage === undefined) return undefined;
  const call = msgs[st.callMessage]?.parts.find((p): p is ToolCallPart => p.type === "tool-call" && p.id === st.callId);
  if (!call) return undefined;
  const result =
    st.resultMessage === undefined
      ? undefined
      : msgs[st.resultMessage]?.parts.find((p): p is ToolResultPart => p.type === "tool-result" && p.callId === st.callId);
  let byAction = kCallFacts.get(call);
  if (!byAction) kCallFacts.set(call, (byAction = new Map()));
  const memoKey = `${st.action}\u0000${String(st.minimalArgs.path)}`;
  let facts = byAction.get(memoKey);
  if (facts === undefined) byAction.set(memoKey, (facts = callFacts(st, call)));
  return facts === null ? undefined : { ...facts, result };
}

/** What a call does, from its arguments and the reducer's action and path; null when it is compared with none. */
function callFacts(st: ReducedStep, call: ToolCallPart): Omit<StepFacts, "result"> | null {
  const { args, valid } = parseArgs(call.args);
  // Arguments stage 1 offloaded are not the agent's any more: such a call is compared with none.
  if ("_ctxfold" in args) return null;
  const facts: Omit<StepFacts, "result"> = {
    key: `${call.name}\u0000${valid ? canonicalJson(args) : call.args}`,
    shell: false,
    accesses: [],
    opaque: true,
    edit: false,
    rerunnable: st.action !== "call" || kQueryTool.test(call.name),
  };
  const path = st.minimalArgs.path;
  const pathKey = typeof path === "string" ? keyOf(args, path) : undefined;
  if (st.action === "shell") {
    const command = shellCommand({
      tool: call.name,
      args,
      rawArgs: call.args,
      argsValid: valid,
      output: "",
      outputBytes: 0,
      binary: false,
      isError: false,
      missingResult: false,
    });
    Object.assign(facts, { key: `${call.name}\u0000${normalizeCommand(command)}`, shell: true }, commandAccess(command));
  } else if (st.action === "write") {
    facts.edit = true;
    facts.rerunnable = false;
    if (pathKey) facts.accesses.push({ kind: "edit", path: normalizePath(path as string) });
  } else if (st.action === "read" && pathKey) {
    facts.accesses.push({ kind: "read", path: normalizePath(path as string), range: argRange(args, pathKey) });
    facts.opaque = false;
  } else if (st.action === "list" && pathKey && Object.keys(args).length === 1) {
    facts.accesses.push({ kind: "list", dir: normalizePath(path as string), recursive: false });
    facts.opaque = false;
  }
  return facts;
}

/** Where each file was read, edited and each directory listed, by step (in step order). */
interface AccessIndex {
  byKey: Map<string, number[]>;
  reads: Map<string, { at: number; range: LineRange }[]>;
  edits: Map<string, number[]>;
  lists: Map<string, { at: number; recursive: boolean }[]>;
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function indexAccesses(steps: readonly ReducedStep[], facts: readonly (StepFacts | undefined)[]): AccessIndex {
  const ix: AccessIndex = { byKey: new Map(), reads: new Map(), edits: new Map(), lists: new Map() };
  facts.forEach((f, at) => {
    // Only answered steps show anything; only successful ones show files or change them.
    if (!f?.result) return;
    push(ix.byKey, f.key, at);
    if (!steps[at].success) return;
    for (const a of f.accesses) {
      if (a.kind === "read") push(ix.reads, a.path, { at, range: a.range });
      else if (a.kind === "edit") push(ix.edits, a.path, at);
      else push(ix.lists, a.dir, { at, recursive: a.recursive });
    }
  });
  return ix;
}

/** An access whose output the step shows: a read or a listing. */
type Shown = Exclude<Access, { kind: "edit" }>;

/** The earliest later step that shows (or changes) what access `a` of step `i` showed, with the reason. */
function coveredBy(a: Shown, i: number, ix: AccessIndex, steps: readonly ReducedStep[], edits: boolean): { by: number; reason: string } | undefined {
  const where = (at: number) => steps[at].id;
  if (a.kind === "list") {
    const later = ix.lists.get(a.dir)?.find((l) => l.at > i && (l.recursive || !a.recursive));
    return later && { by: later.at, reason: `${oneLine(a.dir, 80)} listed again in ${where(later.at)}` };
  }
  const read = ix.reads.get(a.path)?.find((r) => r.at > i && rangeCovers(r.range, a.range));
  const edit = edits ? ix.edits.get(a.path)?.find((at) => at > i) : undefined;
  if (read === undefined && edit === undefined) return undefined;
  if (edit !== undefined && (read === undefined || edit < read.at)) return { by: edit, reason: `${oneLine(a.path, 80)} edited in ${where(edit)}` };
  return { by: read!.at, reason: `${oneLine(a.path, 80)} read again in ${where(read!.at)}` };
}

/** The same call answered later, when that supersedes step `i`; `hashOf` gives a step's output hash (memoised). */
function sameCallBy(
  i: number,
  f: StepFacts,
  hashOf: (at: number) => string,
  ix: AccessIndex,
  steps: readonly ReducedStep[],
): { by: number; reason: string } | undefined {
  if (f.edit) return undefined;
  for (const at of ix.byKey.get(f.key) ?? []) {
    if (at <= i) continue;
    if (!f.rerunnable && hashOf(at) !== hashOf(i)) continue;
    const what = f.shell ? "same command run again" : f.rerunnable ? "same call made again" : "same call, same output";
    return { by: at, reason: `${what} in ${steps[at].id}` };
  }
  return undefined;
}

/**
 * The tool results of `steps` (reduced from `msgs`) that later steps superseded, in step order
 * (see the module comment). Results at or after message `tail`, and those answering calls of
 * critical messages, are never included.
 */
export function findSuperseded(
  steps: readonly ReducedStep[],
  msgs: readonly Message[],
  classes: readonly MessageClass[],
  tail: number,
  options: SupersedeOptions = {},
): Supersession[] {
  const edits = options.edits ?? true;
  const facts = steps.map((st) => stepFacts(st, msgs));
  const ix = indexAccesses(steps, facts);
  const hashes: string[] = [];
  const hashOf = (at: number) => (hashes[at] ??= hashToHex(hashText(resultPayload(facts[at]!.result!.content).data)));
  const out: Supersession[] = [];
  steps.forEach((st, i) => {
    const f = facts[i];
    const r = st.resultMessage;
    if (!f?.result || r === undefined || r >= tail || classes[r] === "critical" || classes[st.callMessage!] === "critical") return;
    let found = sameCallBy(i, f, hashOf, ix, steps);
    // Files and listings shown again: only a successful output that shows nothing else.
    const shown = f.accesses.filter((a): a is Shown => a.kind !== "edit");
    if (!f.opaque && !f.edit && st.success && shown.length > 0) {
      let all: { by: number; reason: string } | undefined = { by: -1, reason: "" };
      for (const a of shown) {
        const c = coveredBy(a, i, ix, steps, edits);
        if (c === undefined) {
          all = undefined;
          break;
        }
        if (c.by > all.by) all = c;
      }
      // On a tie the reason that names the file or directory wins: the line keeps the path in view.
      if (all && (found === undefined || all.by <= found.by)) found = all;
    }
    if (found) out.push({ message: r, callId: st.callId!, step: i, by: found.by, reason: redactSecrets(found.reason) });
  });
  return out;
}
