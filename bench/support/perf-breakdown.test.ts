import { breakdown, parsePerfScript, threadKind } from './perf-breakdown';

const SCRIPT = ` 100/100
\t    7f00 JS:*sendCopy /x/dist/bin/send.js:1:10
\t    7f01 Builtins_JSEntry

100/100
\t    ffff pvm_irq_enable
\t    ffff entry_SYSCALL_64_after_hwframe
\t    aaaa __GI___writev
\t    7f02 JS:*clearBuffer node:internal/streams/writable:744:21
\t    7f00 JS:*sendCopy /x/dist/bin/send.js:1:10

101/101
\t    bbbb ossl_rsaz_amm52x20_x2_256
\t    cccc node::crypto::SignTraits::DeriveBits

102/102
\t    dddd v8::internal::compiler::PipelineImpl::OptimizeGraph
`;

describe('perf breakdown', () => {
  const place = (symbol: string) =>
    symbol.includes('send.js')
      ? { area: 'services/send/src/consumer.ts', fn: 'sendCopy services/send/src/consumer.ts:337', own: true }
      : symbol.startsWith('JS:')
        ? { area: 'node:internal/streams', fn: symbol, own: false }
        : { area: '(native)', fn: symbol, own: false };

  it('reads perf script samples, innermost frame first', () => {
    const samples = parsePerfScript(SCRIPT);
    expect(samples.map((s) => s.tid)).toEqual(['100/100', '100/100', '101/101', '102/102']);
    expect(samples.map((s) => s.frames.length)).toEqual([2, 5, 2, 1]);
    expect(samples[1]!.frames[0]).toBe('pvm_irq_enable');
  });

  it('splits threads, charges event-loop samples to their repository frame and names the system calls', () => {
    const b = breakdown(parsePerfScript(SCRIPT), place);
    expect(b.threads).toEqual({
      'event loop': 0.5,
      'rsa (pool)': 0.25,
      'jit compiler': 0.25,
      'gc helper': 0,
      'other threads': 0,
    });
    expect(b.eventLoopAreas).toEqual({ 'services/send/src/consumer.ts': 0.5 });
    expect(b.syscalls).toEqual({
      __GI___writev: { share: 0.25, callers: { 'sendCopy services/send/src/consumer.ts:337': 0.25 } },
    });
    expect(threadKind(['v8::internal::ScavengerCollector::CollectGarbage'])).toBe('gc helper');
  });
});
