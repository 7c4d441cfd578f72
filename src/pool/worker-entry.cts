/**
 * The file Piscina starts each worker with: CommonJS, so that Piscina's `require` of it is a plain
 * one and the ESM worker (worker.ts) is loaded by `import()`. Piscina requires its filename
 * first, and Node's require of an ES module cannot be cut short: a worker terminated while that
 * require is still loading aborts the whole process (FATAL ERROR: v8::ToLocalChecked Empty
 * MaybeLocal). The pool terminates such workers when it closes: the one Piscina starts in place
 * of a worker that died, or one a short batch never gave a chunk. A terminated `import()` just
 * never settles.
 */
type Worker = typeof import("./worker.js");

const loaded: Promise<Worker> = import("./worker.js");
loaded.catch(() => undefined); // a worker that cannot load fails its first task, not its start

export = async function run(task: Parameters<Worker["default"]>[0]): Promise<unknown> {
  return (await loaded).default(task);
};
