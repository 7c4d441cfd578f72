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

/**
 * A queue URL as messages show it, parsed or not: the credentials before the last `@` masked,
 * `user:***@` when a user and a password are given, `***@` for a lone part (a password written
 * where the user goes). Every message that echoes a --queue value goes through it.
 */
export function shownQueueUrl(url: string): string {
  const at = url.lastIndexOf("@");
  if (at < 0) return url;
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(url)?.[0] ?? "";
  const userinfo = url.slice(scheme.length, at);
  const colon = userinfo.indexOf(":");
  return `${scheme}${colon > 0 ? `${userinfo.slice(0, colon)}:***` : "***"}${url.slice(at)}`;
}

/** `redis://[user:password@]host[:port][/db]` or `rediss://` (TLS), checked; E_BAD_INPUT says what is wrong. */
export function queueAddress(url: string): QueueAddress {
  const shown = JSON.stringify(shownQueueUrl(url));
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new CtxfoldError("E_BAD_INPUT", `--queue: expected redis://HOST:PORT, got ${shown}`);
  }
  if (u.protocol !== "redis:" && u.protocol !== "rediss:")
    throw new CtxfoldError("E_BAD_INPUT", `--queue: expected redis://HOST:PORT or rediss://HOST:PORT, got ${shown}`);
  if (u.hostname === "") throw new CtxfoldError("E_BAD_INPUT", `--queue: no host in ${shown} (expected redis://HOST:PORT)`);
  const db = u.pathname.replace(/^\//, "");
  if (db !== "" && !/^\d+$/.test(db)) throw new CtxfoldError("E_BAD_INPUT", `--queue: the path of ${shown} must be a database number (redis://HOST:PORT/0)`);
  return {
    url,
    shown: shownQueueUrl(u.href.replace(/\/$/, "")),
    options: {
      host: u.hostname.replace(/^\[|\]$/g, ""),
      port: u.port ? Number(u.port) : 6379,
      ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
      ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
      ...(db ? { db: Number(db) } : {}),
      ...(u.protocol === "rediss:" ? { tls: {} } : {}),
      maxRetriesPerRequest: null,
    },
  };
}
