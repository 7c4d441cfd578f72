/**
 * The packages only some commands use, which the package lists as optional peers so that a
 * library install (and `compact`, `eval`, `show`, `validate` without a queue) pulls none of them:
 * BullMQ and ioredis for distributed batches (`compact --queue`, `worker`), and the MCP SDK for
 * `mcp`. Such a command loads them when it runs; without them, or with one installed at a version
 * outside ctxfold's range for it (package.json's peerDependencies, peer-version.ts), it stops
 * before any work, exit 2, naming what to install.
 */
import { CtxfoldError } from "../errors.js";
import { checkPeerVersions } from "../peer-version.js";

/** The queue's packages: `compact --queue` and `worker`. */
export const kQueuePeers = ["bullmq", "ioredis"] as const;
/** The MCP server's package: `mcp`. */
export const kMcpPeers = ["@modelcontextprotocol/sdk"] as const;

/**
 * `load()`, whose modules import `peers`; when one of them is not installed, E_MISSING_PEER
 * saying that `what` needs them and the npm command that installs them. Other failures pass.
 * Before it loads anything, E_PEER_VERSION when one of them is installed at a version outside
 * its range: an old version may fail to load, or fail later, with an error of its own.
 */
export async function loadWithPeers<T>(load: () => Promise<T>, peers: readonly string[], what: string): Promise<T> {
  checkPeerVersions(peers, what);
  try {
    return await load();
  } catch (err) {
    const missing = missingPeer(err, peers);
    if (missing === undefined) throw err;
    throw new CtxfoldError(
      "E_MISSING_PEER",
      `${what} needs ${peers.join(" and ")}, optional packages of ctxfold that are not installed (${missing} is missing): npm install ${peers.join(" ")}`,
      { cause: err },
    );
  }
}

/** Which of `peers` a failed import could not find (Node names the package it looked for), if any. */
function missingPeer(err: unknown, peers: readonly string[]): string | undefined {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code !== "ERR_MODULE_NOT_FOUND" && code !== "MODULE_NOT_FOUND") return undefined;
  const message = err instanceof Error ? err.message : String(err);
  return peers.find((p) => message.includes(`'${p}'`) || message.includes(`"${p}"`) || message.includes(`'${p}/`));
}
