/**
 * `ctxfold compact` writes no secret-named argument value and no echo of one, in-process and with
 * 2 workers, for runs of every format: the same guarantee as the API's (test/policy/written-secrets.test.ts).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { kFormats, parseMessages } from "../../src/adapters/index.js";
import { leaks, plantedRun, throughFormat } from "../helpers-secrets.js";

const kCli = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));
const dir = mkdtempSync(path.join(tmpdir(), "ctxfold-secrets-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("ctxfold compact never writes a secret-named argument's value", () => {
  it("in-process and with 2 workers, in every format", () => {
    const runs = kFormats.map((format, i) => ({ format, ...throughFormat(plantedRun(7 + i), format) }));
    const lines = runs.map(({ wire }) => JSON.stringify(Array.isArray(wire) ? { messages: wire } : wire));
    writeFileSync(path.join(dir, "in.jsonl"), lines.join("\n") + "\n");
    for (const workers of ["1", "2"]) {
      const out = `out-${workers}.jsonl`;
      const r = spawnSync(
        process.execPath,
        [kCli, "compact", "in.jsonl", "-o", out, "--budget", "4000", "--workers", workers, "--offload-dir", `off-${workers}`, "--quiet"],
        { cwd: dir, encoding: "utf8" },
      );
      expect(r.stderr).toBe("");
      expect(r.status).toBe(0);
      const outLines = readFileSync(path.join(dir, out), "utf8").trimEnd().split("\n");
      expect(outLines).toHaveLength(runs.length);
      let redacted = 0;
      outLines.forEach((line, k) => {
        const { format, canonical } = runs[k];
        const wire = JSON.parse(line) as { messages?: unknown };
        const output = parseMessages(format === "anthropic" ? wire : wire.messages, { format }).messages;
        expect(leaks(canonical, output), `${format} workers=${workers}`).toEqual([]);
        if (line.includes("[REDACTED:credential]")) redacted++;
      });
      // The secret calls were compacted (not only kept verbatim): ctxfold wrote their redactions.
      expect(redacted).toBeGreaterThan(0);
    }
  });
});
