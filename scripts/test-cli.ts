/**
 * The ctxfold command with a test's hooks, for the tests that spawn it (test/cli/compact.test.ts):
 *
 *   CTXFOLD_TEST_HOOKS='{"compact":{"chunkBytes":60000,"testHooks":{"chunkDelayMs":150}}}' \
 *     node dist/scripts/test-cli.js compact IN -o OUT --budget N
 *
 * CTXFOLD_TEST_HOOKS is the JSON of the CliTestHooks to set (small chunks, a slow writer, a worker
 * that dies). Test-only: the package ships dist/src, never this entry, so the shipped command
 * reads no test hook from its environment and runs as this entry does without hooks.
 */
import type { CliTestHooks } from "../src/cli/common.js";
import { main } from "../src/cli/main.js";

const hooks = JSON.parse(process.env.CTXFOLD_TEST_HOOKS ?? "{}") as CliTestHooks;
main(process.argv.slice(2), hooks);
