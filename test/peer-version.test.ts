import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { checkPeerVersions, installedVersion, peerMismatches, peerVersionError, setPeerResolver } from "../src/peer-version.js";
import { resolverIn, writeFakePackages } from "./helpers-peers.js";
import { thrown } from "./helpers.js";

const kPackage = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { peerDependencies: Record<string, string> };
const kPeers = Object.keys(kPackage.peerDependencies);

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(path.join(tmpdir(), "ctxfold-peer-version-"));
  dirs.push(d);
  return d;
};
afterEach(() => setPeerResolver(undefined));
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("installedVersion", () => {
  it("finds each installed peer at the version in its node_modules package.json (resolved as ctxfold's modules import it)", () => {
    for (const name of kPeers) {
      const { version } = JSON.parse(readFileSync(new URL(`../node_modules/${name}/package.json`, import.meta.url), "utf8")) as { version: string };
      expect(installedVersion(name), name).toBe(version);
    }
  });

  it("reads an exported package.json, else walks up from the entry past a nameless package.json to the one named", () => {
    const exported = writeFakePackages(tempDir(), { bullmq: "4.0.0" }, { exportsPackageJson: true });
    expect(installedVersion("bullmq", resolverIn(exported))).toBe("4.0.0");
    const nested = writeFakePackages(tempDir(), { "@modelcontextprotocol/sdk": "1.0.4" }, { nestedEntry: true });
    expect(installedVersion("@modelcontextprotocol/sdk", resolverIn(nested))).toBe("1.0.4");
  });

  it("is undefined for a package that does not resolve, or resolves to no file", () => {
    const empty = tempDir();
    expect(installedVersion("bullmq", resolverIn(empty))).toBeUndefined();
    expect(installedVersion("fs", () => "node:fs")).toBeUndefined();
    expect(installedVersion("ai", () => "data:text/javascript,export{}")).toBeUndefined();
  });
});

describe("the peer check", () => {
  it("finds no mismatch among the peers this repository installs", () => {
    expect(peerMismatches(kPeers)).toEqual([]);
    expect(() => checkPeerVersions(kPeers, "test")).not.toThrow();
  });

  it("an old peer is E_PEER_VERSION in one line: the range, what is installed, the npm command", () => {
    setPeerResolver(resolverIn(writeFakePackages(tempDir(), { "@modelcontextprotocol/sdk": "1.0.4", ai: "5.0.52" })));
    const mcp = thrown(() => checkPeerVersions(["@modelcontextprotocol/sdk"], "ctxfold mcp"), "E_PEER_VERSION");
    expect(mcp.message).toBe("ctxfold mcp needs @modelcontextprotocol/sdk ^1.32.2; 1.0.4 is installed: npm install @modelcontextprotocol/sdk@^1.32.2");
    const ai = thrown(() => checkPeerVersions(["ai"], "ctxfoldMiddleware of ctxfold/ai-sdk"), "E_PEER_VERSION");
    expect(ai.message).toBe('ctxfoldMiddleware of ctxfold/ai-sdk needs ai >=6.0.0; 5.0.52 is installed: npm install ai@">=6.0.0"');
  });

  it("names every old peer of a command at once", () => {
    setPeerResolver(resolverIn(writeFakePackages(tempDir(), { bullmq: "4.0.0", ioredis: "4.28.5" })));
    const err = thrown(() => checkPeerVersions(["bullmq", "ioredis"], "ctxfold worker"), "E_PEER_VERSION");
    expect(err.message).toBe(
      "ctxfold worker needs bullmq ^5.81.5 and ioredis ^5.11.1; bullmq 4.0.0 and ioredis 4.28.5 are installed: npm install bullmq@^5.81.5 ioredis@^5.11.1",
    );
  });

  it("checks nothing it cannot tell: a peer not installed, a garbage version, a package without a range", () => {
    setPeerResolver(resolverIn(writeFakePackages(tempDir(), { bullmq: "five", "left-pad": "0.0.1" })));
    expect(peerMismatches(["bullmq", "ioredis", "left-pad"])).toEqual([]);
  });

  it("a version in range passes, a prerelease of the floor does not", () => {
    setPeerResolver(resolverIn(writeFakePackages(tempDir(), { ai: "6.0.0", "@langchain/core": "1.0.0-rc.2" })));
    expect(peerMismatches(["ai", "@langchain/core"])).toEqual([{ name: "@langchain/core", range: ">=1.0.0", installed: "1.0.0-rc.2" }]);
  });

  it("looks a peer up once, until the resolver changes", () => {
    let calls = 0;
    const inner = resolverIn(writeFakePackages(tempDir(), { ai: "6.0.1" }, { exportsPackageJson: true }));
    setPeerResolver((s) => {
      calls++;
      return inner(s);
    });
    peerMismatches(["ai"]);
    peerMismatches(["ai"]);
    expect(calls).toBe(1);
  });

  it("quotes a range the shell would read", () => {
    expect(peerVersionError("x", [{ name: "a", range: "^1.0.0", installed: "0.1.0" }]).message).toMatch(/npm install a@\^1\.0\.0$/);
    expect(peerVersionError("x", [{ name: "a", range: ">=1.0.0", installed: "0.1.0" }]).message).toMatch(/npm install a@">=1\.0\.0"$/);
  });
});
