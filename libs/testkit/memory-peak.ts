/**
 * How much this process's memory grew at most while something ran (an attack on a bound): the
 * V8 heap in use plus ArrayBuffers (Buffers: where a literal, a line or a message body would be
 * held), sampled every `everyMs` against the lowest value seen since watching began (memory of
 * the process's earlier work, freed meanwhile, does not hide growth). A sampler, not a wait:
 * tests still wait for conditions (eventually.ts).
 *
 * What is measured is memory HELD, not garbage: a sample over `gcAbove` bytes of growth forces
 * a full collection and counts what survives it. Without that, the garbage an attack's bounded
 * handling leaves between collections counted as growth, and how much V8 lets pile up depends on
 * the heap the whole test process has grown to (a jest worker that ran earlier files with large
 * buffers collects later): the same bounded code measured 20 MB alone and 200 MB after others.
 * Data a bound fails to drop survives the collection and is counted.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export interface MemoryWatch {
  /** Stops sampling; the peak growth in bytes. */
  stop(): number;
}

setFlagsFromString('--expose_gc');
const gc = runInNewContext('gc') as () => void;

const held = () => {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};

export function watchMemory(everyMs = 20, gcAbove = 16 * 1024 * 1024): MemoryWatch {
  gc();
  // The lowest level seen: memory of the process's earlier work (a previous test file's
  // environment, torn down lazily) may be freed while watching; growth counts from the floor.
  let low = held();
  let peak = 0;
  const sample = () => {
    let now = held();
    if (now - low > gcAbove) {
      gc();
      now = held();
    }
    low = Math.min(low, now);
    peak = Math.max(peak, now - low);
  };
  const timer = setInterval(sample, everyMs);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      sample();
      return peak;
    },
  };
}
