import { CtxfoldError } from "../errors.js";
import { Message } from "../model/schema.js";
import type { OffloadStore } from "./offload.js";

/** What an index of stored messages looks like (the `history_…json` a summary names). */
interface MessageIndex {
  ctxfold: "messages";
  refs: string[];
}

const kStored = new WeakMap<OffloadStore, WeakMap<Message, string>>();

/**
 * Stores messages removed by a compaction so that they can be given back: each message as its
 * own JSON (kind "message"), memoised per store and message object — messages are never
 * mutated, so a conversation that grew and is compacted again stores only its new messages —
 * and one small index (kind "history") listing them in order. (Stores only grow, so a ref
 * remembered for a store stays valid in it.) Returns the index ref and every
 * message ref (all resolve in `store`); `getMessages(store, ref)` reads them back.
 */
export function putMessages(store: OffloadStore, messages: readonly Message[]): { ref: string; refs: string[] } {
  let known = kStored.get(store);
  if (!known) kStored.set(store, (known = new WeakMap()));
  const refs = messages.map((m) => {
    let ref = known.get(m);
    if (ref === undefined) {
      ref = store.put(JSON.stringify(m), { kind: "message", ext: "json" });
      known.set(m, ref);
    }
    return ref;
  });
  const index: MessageIndex = { ctxfold: "messages", refs };
  return { ref: store.put(JSON.stringify(index), { kind: "history", ext: "json" }), refs };
}

/** The messages an index made by putMessages names, in order, validated. */
export function getMessages(store: OffloadStore, ref: string): Message[] {
  const index = JSON.parse(store.getText(ref)) as Partial<MessageIndex>;
  if (index?.ctxfold !== "messages" || !Array.isArray(index.refs)) {
    throw new CtxfoldError("E_BAD_REF", `${ref} is not an index of stored messages`, { path: ref });
  }
  return index.refs.map((r, i) => {
    const parsed = Message.safeParse(JSON.parse(store.getText(r)));
    if (!parsed.success) throw new CtxfoldError("E_SCHEMA", `stored message ${i} (${r}) is not a valid message`, { path: `${ref}.refs[${i}]` });
    return parsed.data;
  });
}
