import { type AimInput, aimBudget, budgetSummary } from './budget';

const pieces: AimInput['pieces'] = [
  { floor: 'http', accept_path: true, cpu_ms_per_email: { http_server: 0.1, bench_client: 0.1 } },
  { floor: 'store_accept', accept_path: true, cpu_ms_per_email: { postgresql: 0.05, pg_client: 0.05 } },
  { floor: 'store_delivery', accept_path: false, cpu_ms_per_email: { postgresql: 0.2, pg_client: 0.1 } },
  { floor: 'copy', accept_path: false, cpu_ms_per_email: { send_copy: 0.6, smtp_sink: 0.1 } },
];

/** The budget of `target_per_sec` with the latency aim of issue 14 (50 connections, 50 ms) and `tail_ratio`. */
const withLatency = (target_per_sec: number, tail_ratio: number) =>
  aimBudget(
    { aim: 'x', target_per_sec, pieces, latency: { connections: 50, p99_target_ms: 50, tail_ratio } },
    2,
  );

describe('aimBudget', () => {
  it('sums the floors by floor and by process and divides the cores by the sum', () => {
    const b = aimBudget({ aim: 'x', target_per_sec: 1000, pieces }, 2);
    expect(b.total_cpu_ms_per_email).toBe(1.3);
    expect(b.by_floor).toEqual({ http: 0.2, store_accept: 0.1, store_delivery: 0.3, copy: 0.7 });
    expect(b.by_process.postgresql).toBe(0.25); // the same process in two floors adds up
    expect(b.by_process.pg_client).toBe(0.15);
    expect(b.max_per_sec).toBe(1538); // floor(2000 / 1.3)
    expect(b.cpu_ms_per_sec_at_target).toBe(1300);
    expect(b.share_of_machine_at_target).toBe(0.65);
    expect(b.fits).toBe(true);
  });

  it('says an aim above what the floors allow does not fit', () => {
    const b = aimBudget({ aim: 'x', target_per_sec: 2000, pieces }, 2);
    expect(b.fits).toBe(false);
    expect(b.cpu_ms_per_sec_at_target).toBe(2600);
    expect(budgetSummary(b)).toMatch(/does NOT fit \(2600 CPU-ms\/s needed, 2000 available\)/);
    // The same floors fit on four cores.
    expect(aimBudget({ aim: 'x', target_per_sec: 2000, pieces }, 4).fits).toBe(true);
  });

  it("costs the latency aim's accept rate (Little's law, then the tail) beside the delivery work", () => {
    const b = withLatency(1000, 3);
    const l = b.latency!;
    expect(l.accept_per_sec_little).toBe(1000); // 50 in flight / 0.050 s
    expect(l.accept_per_sec_with_tail).toBe(3000); // the mean must be 50 / 3 ms
    expect(l.accept_path_cpu_ms_per_email).toBe(0.3);
    expect(l.delivery_cpu_ms_per_email).toBe(1);
    expect(l.cpu_ms_per_sec_needed).toBe(1300); // 1000 x 0.3 + 1000 x 1.0
    expect(l.cpu_ms_per_sec_needed_with_tail).toBe(1900); // 3000 x 0.3 + 1000 x 1.0
    expect(l.fits).toBe(true);
    expect(l.fits_with_tail).toBe(true);
    expect(l.max_accept_per_sec_beside_delivery).toBe(3333); // (2000 - 1000) / 0.3
    expect(l.max_accept_per_sec_alone).toBe(6666);
    // A tail ratio below 1 is no better than the mean: treated as 1.
    const flat = withLatency(1000, 0.5);
    expect(flat.latency!.accept_per_sec_with_tail).toBe(1000);
  });

  it('reports a latency aim the delivery work leaves no room for', () => {
    const b = withLatency(2500, 2);
    expect(b.latency!.fits).toBe(false);
    expect(b.latency!.max_accept_per_sec_beside_delivery).toBe(0);
    expect(budgetSummary(b)).toMatch(/latency: .*does NOT fit/);
  });

  it('refuses nonsense inputs', () => {
    expect(() => aimBudget({ aim: 'x', target_per_sec: 1, pieces }, 0)).toThrow(/cores/);
    expect(() => aimBudget({ aim: 'x', target_per_sec: 1, pieces: [] }, 2)).toThrow(/sum to 0/);
  });
});
