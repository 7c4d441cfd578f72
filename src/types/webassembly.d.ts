// The part of the WebAssembly JS API ctxfold uses. TypeScript declares it only in lib.dom,
// and @types/node 20 not at all; pulling in the DOM lib would type browser globals too.
declare namespace WebAssembly {
  class Module {
    constructor(bytes: ArrayBufferView | ArrayBuffer);
  }
  class Instance {
    constructor(module: Module, imports?: Record<string, Record<string, unknown>>);
    readonly exports: Record<string, unknown>;
  }
  class Memory {
    constructor(descriptor: { initial: number; maximum?: number; shared?: boolean });
    readonly buffer: ArrayBuffer;
    grow(delta: number): number;
  }
  class RuntimeError extends Error {}
  class CompileError extends Error {}
  class LinkError extends Error {}
  function validate(bytes: ArrayBufferView | ArrayBuffer): boolean;
}
