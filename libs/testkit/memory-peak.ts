/**
 * How much this process's memory grew at most while something ran (an attack on a bound): the
 * V8 heap in use plus ArrayBuffers (Buffers: where a literal, a line or a message body would be
 * held), sampled every `everyMs` against the value when watching began. A sampler, not a wait:
 * tests still wait for conditions (eventually.ts).
 */
export interface MemoryWatch {
  /** Stops sampling; the peak growth in bytes. */
  stop(): number;
}

const held = () => {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};

export function watchMemory(everyMs = 20): MemoryWatch {
  const base = held();
  let peak = 0;
  const timer = setInterval(() => {
    peak = Math.max(peak, held() - base);
  }, everyMs);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      peak = Math.max(peak, held() - base);
      return peak;
    },
  };
}
