/**
 * Reaching the Redis a distributed batch runs on: a probe that fails fast and names the URL when
 * nothing answers, and a watch that gives up on a connection lost for longer than a grace period
 * (ioredis would otherwise retry forever while the producer waits on shards no worker can report).
 */
import { Redis } from "ioredis";
import { CtxfoldError } from "../errors.js";
import type { QueueAddress } from "./address.js";

const reasonOf = (err: unknown): string => {
  const e = err as (Error & { code?: string }) | undefined;
  return e?.code ? `${e.code} (${e.message})` : e instanceof Error ? e.message : String(err);
};

/** Resolves when Redis at `address` answers a PING within `timeoutMs`; E_QUEUE naming the URL otherwise. */
export async function reachQueue(address: QueueAddress, timeoutMs = 5000): Promise<void> {
  const probe = new Redis({
    ...address.options,
    lazyConnect: true,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  let last: unknown;
  probe.on("error", (err) => (last = err));
  try {
    await probe.connect();
    await probe.ping();
  } catch (err) {
    throw new CtxfoldError("E_QUEUE", `cannot reach the queue at ${address.shown}: ${reasonOf(last ?? err)}`, { cause: err });
  } finally {
    probe.disconnect();
  }
}

/**
 * Watches connections (ioredis clients) until the returned function is called; `onLost` is called
 * once when any has been down for `graceMs` straight, with E_QUEUE naming the URL and the last error.
 */
export function watchConnections(address: QueueAddress, clients: Redis[], graceMs: number, onLost: (err: CtxfoldError) => void): () => void {
  const downSince = new Map<Redis, number>();
  let last: unknown;
  const off: (() => void)[] = [];
  for (const c of clients) {
    const down = () => downSince.has(c) || downSince.set(c, performance.now());
    const up = () => downSince.delete(c);
    const error = (err: unknown) => (last = err);
    c.on("close", down).on("end", down).on("ready", up).on("error", error);
    off.push(() => c.off("close", down).off("end", down).off("ready", up).off("error", error));
  }
  let lost = false;
  const timer = setInterval(
    () => {
      for (const since of downSince.values()) {
        if (lost || performance.now() - since < graceMs) continue;
        lost = true;
        onLost(new CtxfoldError("E_QUEUE", `lost the queue at ${address.shown} for ${graceMs / 1000} s${last ? `: ${reasonOf(last)}` : ""}`));
      }
    },
    Math.min(500, graceMs / 4),
  );
  // Kept referenced: while shards are awaited nothing else may hold the event loop open (ioredis's
  // reconnect timers do not), and a process that ran out of handles would exit 0 mid-batch.
  return () => {
    clearInterval(timer);
    for (const f of off) f();
  };
}
