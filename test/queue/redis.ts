// A throwaway redis-server on a loopback port, for the tests of distributed batches.
import { spawn, type ChildProcess } from "node:child_process";
import { createConnection, createServer } from "node:net";
import { findExecutable } from "../helpers.js";

/** Debian's redis-server (installed by .ci/run when missing), or null. */
export const kRedisServer = findExecutable(["redis-server"]);
export const kNoRedisReason = "skipped: redis-server is not installed (.ci/run installs it from Debian's packages)";

export interface TestRedis {
  port: number;
  url: string;
  /** Kills the server (SIGKILL: as a crash, or a machine gone). */
  kill(): Promise<void>;
  /** Starts it again on the same port (empty: nothing persisted). */
  restart(): Promise<void>;
}

/** A free loopback port. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Whether something on `port` answers PING with PONG. */
function pong(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const c = createConnection({ port, host: "127.0.0.1" });
    c.setTimeout(500);
    c.once("connect", () => c.write("PING\r\n"));
    c.once("data", (d) => {
      resolve(d.toString().startsWith("+PONG"));
      c.destroy();
    });
    c.once("error", () => resolve(false));
    c.once("timeout", () => {
      resolve(false);
      c.destroy();
    });
  });
}

export async function startRedis(): Promise<TestRedis> {
  if (!kRedisServer) throw new Error(kNoRedisReason);
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(kRedisServer, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" });
    for (let i = 0; i < 100; i++) {
      if (await pong(port)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`redis-server did not start on port ${port}`);
  };
  await start();
  return {
    port, url: `redis://127.0.0.1:${port}`,
    async kill() {
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return;
      await new Promise<void>((resolve) => {
        c.once("exit", () => resolve());
        c.kill("SIGKILL");
      });
    },
    restart: start,
  };
}
