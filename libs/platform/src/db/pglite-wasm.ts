/**
 * PGlite's WebAssembly module, compiled once per process, with a smaller buffer cache.
 *
 * Why: PGlite 0.3 starts PostgreSQL with fixed command-line settings baked into pglite.wasm
 * (`-c shared_buffers=128MB`, which outranks postgresql.conf, and no option to change it), and
 * PostgreSQL touches its whole shared memory at start: 128 MB of the idle all-in-one process's
 * RSS was that cache. Embedded mode serves one small installation whose tables the OS page cache
 * holds anyway, so the module is compiled from the same bytes with that one setting string
 * replaced, in place and NUL-padded to the same length (`shared_buffers=16MB`). If the package no
 * longer holds that exact string once (another PGlite version), the stock module is used and
 * `sharedBuffersPatched` says so; test/footprint.test.ts checks the setting took effect.
 *
 * The module also runs on V8's baseline WebAssembly compiler only (`--liftoff-only`, set before
 * it is compiled; only PGlite and Node's own fetch parser use WebAssembly). By default V8 re-
 * compiles hot functions with its optimising compiler in background threads; for PostgreSQL's
 * very large functions that left 60-80 MB of compiler memory in the threads' malloc arenas of an
 * idle process, and on embedded-sized work it cost more CPU than it saved (12,000 queries: 7.0 s
 * of process CPU with tier-up, 5.6-5.8 s without; measured with bench/footprint's machine load).
 */
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { setFlagsFromString } from 'node:v8';

/** A compiled `WebAssembly.Module` (the project's TypeScript lib has no WebAssembly types). */
export type WasmModule = object & { readonly __wasmModule?: never };
declare const WebAssembly: { compile(bytes: Uint8Array): Promise<WasmModule> };

export const EMBEDDED_SHARED_BUFFERS = '16MB';
const STOCK_SETTING = 'shared_buffers=128MB';

/** Replaces the NUL-terminated `shared_buffers=128MB` setting in the module's bytes (in place). */
export function patchSharedBuffers(bytes: Buffer, value: string): boolean {
  const from = Buffer.from(`\0${STOCK_SETTING}\0`);
  const at = bytes.indexOf(from);
  if (at < 0 || bytes.indexOf(from, at + 1) >= 0) return false;
  const to = Buffer.alloc(from.length);
  to.write(`\0shared_buffers=${value}`);
  if (to.length !== from.length || `shared_buffers=${value}`.length > STOCK_SETTING.length) return false;
  to.copy(bytes, at);
  return true;
}

export interface PgliteWasm {
  module: WasmModule;
  sharedBuffersPatched: boolean;
}

let compiled: Promise<PgliteWasm> | undefined;

/** The compiled module, shared by every PGlite instance of this process. */
export function pgliteWasm(): Promise<PgliteWasm> {
  compiled ??= (async () => {
    setFlagsFromString('--liftoff-only');
    const file = join(dirname(require.resolve('@electric-sql/pglite')), 'pglite.wasm');
    const bytes = await readFile(file);
    const sharedBuffersPatched = patchSharedBuffers(bytes, EMBEDDED_SHARED_BUFFERS);
    return { module: await WebAssembly.compile(bytes), sharedBuffersPatched };
  })();
  compiled.catch(() => {
    compiled = undefined;
  });
  return compiled;
}
