/**
 * A throwaway redis-server on a free loopback port (nothing persisted), for the queue's bench and
 * tests: started, killed outright (a crash, a machine gone) and started again on the same port.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createConnection, createServer } from "node:net";

export interface LocalRedis {
  port: number;
  url: string;
  kill(): Promise<void>;
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

/** redis-server (`binary`, a path or a name on PATH) on a free port, answering. */
export async function startRedis(binary = "redis-server"): Promise<LocalRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(binary, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" });
    child.once("error", () => undefined); // reported below as not answering
    for (let i = 0; i < 100; i++) {
      if (await pong(port)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`${binary} did not answer on port ${port}`);
  };
  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
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

export interface WorkerProcess {
  child: ChildProcess;
  /** What it printed on stderr so far. */
  log(): string;
  /** Its exit code (null after a signal). */
  exited: Promise<number | null>;
  /** Sends `signal` (unless it has exited) and waits for the exit. */
  kill(signal: NodeJS.Signals): Promise<number | null>;
}

/**
 * `node SCRIPT worker --queue URL ARGS` (SCRIPT: the ctxfold CLI, or the test entry with `env`'s
 * hooks), resolved once it says it takes shards; rejected with its output if it exits first.
 */
export async function startWorkerProcess(script: string, url: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [script, "worker", "--queue", url, ...args], { env, stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  child.stderr!.on("data", (d: Buffer) => (log += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  for (let i = 0; i < 400 && !log.includes("taking shards") && child.exitCode === null; i++) await new Promise((r) => setTimeout(r, 50));
  if (!log.includes("taking shards")) throw new Error(`ctxfold worker exited ${child.exitCode} before taking shards: ${log}`);
  return {
    child,
    log: () => log,
    exited,
    kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
