/**
 * Where the code of a V8 CPU-profile frame came from. The benchmarks run the services as the
 * esbuild bundles of `pnpm build` (dist/bin/<service>.js), so every frame's url is the bundle;
 * its source map (the file named by the bundle's trailing `//# sourceMappingURL=`, or an inline
 * `data:` one) turns a frame's generated position back into the original file (services/send/src/
 * dkim.ts, node_modules/.pnpm/…/nodemailer/lib/…) and line. A frame of a file without a map (node
 * internals, the TypeScript sources under tsx) keeps its own position.
 *
 * Positions are 0-based, as in the profile's callFrame and node:module's SourceMap.
 */
import { readFileSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { dirname, isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface SourcePosition {
  /** An absolute file path, or the frame's url when it is not a file (node:internal/…, empty). */
  file: string;
  line: number;
}

const fileOf = (url: string): string | null => {
  if (url.startsWith('file://')) return fileURLToPath(url);
  return isAbsolute(url) ? url : null;
};

/** The source map a script names at its end, parsed; null when it names none or it cannot be read. */
function loadMap(file: string): { map: SourceMap; dir: string } | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  const ref = /\/\/[#@] sourceMappingURL=(\S+)\s*$/.exec(text.slice(-4096))?.[1];
  if (!ref) return null;
  try {
    const inline = /^data:application\/json;(?:charset=[^;,]+;)?base64,(.*)$/.exec(ref);
    if (inline)
      return {
        map: new SourceMap(JSON.parse(Buffer.from(inline[1]!, 'base64').toString())),
        dir: dirname(file),
      };
    const mapFile = resolve(dirname(file), ref);
    const payload = JSON.parse(readFileSync(mapFile, 'utf8')) as SourceMapPayload;
    return { map: new SourceMap(payload), dir: resolve(dirname(mapFile), payload.sourceRoot || '') };
  } catch {
    return null;
  }
}

/**
 * A resolver of frame positions to original ones, reading each script's map once (a bundle's map
 * is a few MB; a profile has tens of thousands of frames in a handful of scripts).
 */
export function sourceResolver(): (url: string, line: number, column: number) => SourcePosition {
  const maps = new Map<string, { map: SourceMap; dir: string } | null>();
  return (url, line, column) => {
    const file = fileOf(url);
    if (!file) return { file: url, line };
    if (!maps.has(file)) maps.set(file, loadMap(file));
    const found = maps.get(file);
    const entry = found?.map.findEntry(line, column) as { originalSource?: string; originalLine?: number };
    if (!found || !entry?.originalSource) return { file, line };
    const source = entry.originalSource;
    const original = source.startsWith('file://') ? fileURLToPath(source) : resolve(found.dir, source);
    return { file: original, line: entry.originalLine ?? 0 };
  };
}
