/**
 * A distributed batch's queue address: its URL checked (before bullmq or ioredis is loaded) and
 * shown without a password, and the options ioredis and BullMQ connect with.
 */
import type { RedisOptions } from "ioredis";
import { CtxfoldError } from "../errors.js";

/** The BullMQ queue every producer and worker of ctxfold uses (jobs carry all else). */
export const kQueueName = "ctxfold-compact";

export interface QueueAddress {
  /** The URL as given. */
  readonly url: string;
  /** The URL with any password masked, for messages. */
  readonly shown: string;
  /** Connection options for ioredis and BullMQ. */
  readonly options: RedisOptions;
}

/** `redis://[user:password@]host[:port][/db]` or `rediss://` (TLS), checked; E_BAD_INPUT says what is wrong. */
export function queueAddress(url: string): QueueAddress {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new CtxfoldError("E_BAD_INPUT", `--queue: expected redis://HOST:PORT, got ${JSON.stringify(url)}`);
  }
  if (u.protocol !== "redis:" && u.protocol !== "rediss:") throw new CtxfoldError("E_BAD_INPUT", `--queue: expected redis://HOST:PORT or rediss://HOST:PORT, got ${JSON.stringify(url)}`);
  if (u.hostname === "") throw new CtxfoldError("E_BAD_INPUT", `--queue: no host in ${JSON.stringify(url)} (expected redis://HOST:PORT)`);
  const db = u.pathname.replace(/^\//, "");
  if (db !== "" && !/^\d+$/.test(db)) throw new CtxfoldError("E_BAD_INPUT", `--queue: the path of ${JSON.stringify(url)} must be a database number (redis://HOST:PORT/0)`);
  const shownUrl = new URL(u.href);
  if (shownUrl.password) shownUrl.password = "***";
  return {
    url, shown: shownUrl.href.replace(/\/$/, ""),
    options: {
      host: u.hostname.replace(/^\[|\]$/g, ""), port: u.port ? Number(u.port) : 6379,
      ...(u.username ? { username: decodeURIComponent(u.username) } : {}), ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
      ...(db ? { db: Number(db) } : {}), ...(u.protocol === "rediss:" ? { tls: {} } : {}),
      maxRetriesPerRequest: null,
    },
  };
}

