/**
 * Yielding to the event loop, for work done in slices beside a caller's requests (the session's
 * idle-time preparation and epochs compacted ahead, the warm-up, the exact counter's table built
 * ahead, a store searched in slices): one way to do it, so every slice gives way alike.
 */

/** Runs `f` once the event loop is idle (setImmediate on Node; a zero timeout elsewhere). */
export const whenIdle: (f: () => void) => { unref?: () => unknown } = typeof setImmediate === "function" ? (f) => setImmediate(f) : (f) => setTimeout(f, 0);

/** Resolves once the event loop is idle (whenIdle): what a slice of background work awaits between slices. */
export const nextTurn = (): Promise<void> => new Promise<void>((resolve) => whenIdle(resolve));
