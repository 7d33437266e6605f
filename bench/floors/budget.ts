/**
 * The budget of issue 14's aims against the measured floors (pure arithmetic, no I/O).
 *
 * A floor is the CPU one irreducible piece of the pipeline costs per email with the mandated
 * stack doing the minimum (floors.ts measures them), split by process: the server side and the
 * client/peer side alike, since on this machine they all share the same cores. The budget per
 * aim is their sum against `cores x 1000` CPU-ms per second:
 *
 * - `max_per_sec`: the highest rate the floors allow (all cores doing only floor work, no
 *   scheduling, no idle): an upper bound on what any pipeline built from these pieces reaches;
 * - `fits`: whether the aim's rate is at or below it.
 *
 * The latency aim (p99 under `p99_target_ms` with `connections` requests always in flight: a
 * closed loop) is bounded by Little's law: the mean latency is connections / accept rate, so a
 * mean under the target needs at least connections / target accepts per second; with the tail
 * shape the bare HTTP floor itself showed (p99 / mean), the mean must be lower still, so the
 * rate higher. That accept rate is then costed with the accept-path floors, beside the delivery
 * floors at the aim's own delivery rate, on the same cores.
 */

/** CPU milliseconds per email, by process (server and client/peer sides). */
export type ProcessCosts = Record<string, number>;

export interface FloorPiece {
  /** e.g. `http`, `store_accept`, `store_delivery`, `bus`, `copy`. */
  floor: string;
  cpu_ms_per_email: ProcessCosts;
  /** Work done inside the request (before its 200): the latency aim pays it at the accept rate. */
  accept_path: boolean;
}

export interface LatencyAim {
  connections: number;
  p99_target_ms: number;
  /** p99 / mean latency the bare HTTP floor showed at those connections (>= 1). */
  tail_ratio: number;
}

export interface AimInput {
  aim: string;
  /** Emails delivered per second the aim asks for. */
  target_per_sec: number;
  pieces: FloorPiece[];
  latency?: LatencyAim;
}

export interface LatencyBudget {
  /** Little's law alone: connections / target (mean latency at the target). */
  accept_per_sec_little: number;
  /** With the measured tail: the mean must be p99_target / tail_ratio. */
  accept_per_sec_with_tail: number;
  accept_path_cpu_ms_per_email: number;
  delivery_cpu_ms_per_email: number;
  /** CPU-ms per second: Little's accept rate x accept path + target x delivery work. */
  cpu_ms_per_sec_needed: number;
  /** The same with the tail-adjusted accept rate. */
  cpu_ms_per_sec_needed_with_tail: number;
  cpu_ms_per_sec_available: number;
  /** Little's bound (a necessary condition unless the slowest 1 % are far slower than the rest). */
  fits: boolean;
  fits_with_tail: boolean;
  /** The accept rate the accept-path floors allow beside the delivery work at the target rate. */
  max_accept_per_sec_beside_delivery: number;
  /** ... and with the whole machine to themselves (no delivery at all). */
  max_accept_per_sec_alone: number;
}

export interface AimBudget {
  aim: string;
  target_per_sec: number;
  cores: number;
  cpu_ms_per_sec_available: number;
  total_cpu_ms_per_email: number;
  by_floor: Record<string, number>;
  by_process: ProcessCosts;
  cpu_ms_per_sec_at_target: number;
  max_per_sec: number;
  fits: boolean;
  /** Share of the machine the floors alone take at the target rate (1 = all of it). */
  share_of_machine_at_target: number;
  latency?: LatencyBudget;
}

const r3 = (n: number) => Math.round(n * 1000) / 1000;
const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);
const pieceTotal = (p: FloorPiece) => sum(Object.values(p.cpu_ms_per_email));

export function aimBudget(input: AimInput, cores: number): AimBudget {
  if (!(cores > 0)) throw new Error('cores must be positive');
  const available = cores * 1000;
  const total = sum(input.pieces.map(pieceTotal));
  if (!(total > 0)) throw new Error(`${input.aim}: the floors sum to ${total} CPU-ms per email`);
  const byProcess: ProcessCosts = {};
  for (const p of input.pieces)
    for (const [proc, ms] of Object.entries(p.cpu_ms_per_email))
      byProcess[proc] = (byProcess[proc] ?? 0) + ms;
  const atTarget = input.target_per_sec * total;
  const out: AimBudget = {
    aim: input.aim,
    target_per_sec: input.target_per_sec,
    cores,
    cpu_ms_per_sec_available: available,
    total_cpu_ms_per_email: r3(total),
    by_floor: Object.fromEntries(input.pieces.map((p) => [p.floor, r3(pieceTotal(p))])),
    by_process: Object.fromEntries(Object.entries(byProcess).map(([k, v]) => [k, r3(v)])),
    cpu_ms_per_sec_at_target: Math.round(atTarget),
    max_per_sec: Math.floor(available / total),
    fits: atTarget <= available,
    share_of_machine_at_target: r3(atTarget / available),
  };
  if (input.latency) out.latency = latencyBudget(input, input.latency, available);
  return out;
}

function latencyBudget(input: AimInput, l: LatencyAim, available: number): LatencyBudget {
  if (!(l.p99_target_ms > 0) || !(l.connections > 0))
    throw new Error('latency aim needs connections and a target');
  const little = l.connections / (l.p99_target_ms / 1000);
  const withTail = little * Math.max(1, l.tail_ratio);
  const acceptPath = sum(input.pieces.filter((p) => p.accept_path).map(pieceTotal));
  const delivery = sum(input.pieces.filter((p) => !p.accept_path).map(pieceTotal));
  const needed = little * acceptPath + input.target_per_sec * delivery;
  const neededWithTail = withTail * acceptPath + input.target_per_sec * delivery;
  const left = available - input.target_per_sec * delivery;
  return {
    accept_per_sec_little: Math.ceil(little),
    accept_per_sec_with_tail: Math.ceil(withTail),
    accept_path_cpu_ms_per_email: r3(acceptPath),
    delivery_cpu_ms_per_email: r3(delivery),
    cpu_ms_per_sec_needed: Math.round(needed),
    cpu_ms_per_sec_needed_with_tail: Math.round(neededWithTail),
    cpu_ms_per_sec_available: available,
    fits: needed <= available,
    fits_with_tail: neededWithTail <= available,
    max_accept_per_sec_beside_delivery:
      acceptPath > 0 ? Math.max(0, Math.floor(left / acceptPath)) : Number.POSITIVE_INFINITY,
    max_accept_per_sec_alone: acceptPath > 0 ? Math.floor(available / acceptPath) : Number.POSITIVE_INFINITY,
  };
}

/** One line per aim for people: the floors' sum, the rate they allow, and the verdict. */
export function budgetSummary(b: AimBudget): string {
  const lines = [
    `${b.aim}: floors sum to ${b.total_cpu_ms_per_email} CPU-ms per email (${Object.entries(b.by_floor)
      .map(([k, v]) => `${k} ${v}`)
      .join(
        ', ',
      )}); ${b.cores} cores allow at most ${b.max_per_sec}/s against the aim's ${b.target_per_sec}/s: ${
      b.fits
        ? `fits, the floors alone take ${Math.round(b.share_of_machine_at_target * 100)} % of the machine at the aim`
        : `does NOT fit (${b.cpu_ms_per_sec_at_target} CPU-ms/s needed, ${b.cpu_ms_per_sec_available} available)`
    }`,
  ];
  const l = b.latency;
  if (l)
    lines.push(
      `  latency: p99 target needs >= ${l.accept_per_sec_little} accepts/s by Little's law (${l.accept_per_sec_with_tail}/s with the bare floor's own p99/mean); at ${l.accept_per_sec_little}/s the accept path (${l.accept_path_cpu_ms_per_email} ms) beside delivery at ${b.target_per_sec}/s (${l.delivery_cpu_ms_per_email} ms) needs ${l.cpu_ms_per_sec_needed} of ${l.cpu_ms_per_sec_available} CPU-ms/s: ${l.fits ? 'fits' : 'does NOT fit'} (with the tail ${l.cpu_ms_per_sec_needed_with_tail}: ${l.fits_with_tail ? 'fits' : 'does NOT fit'}); ${
        l.max_accept_per_sec_beside_delivery > 0
          ? `beside that delivery work the accept path could run at most ${l.max_accept_per_sec_beside_delivery}/s`
          : 'the delivery work at that rate alone exceeds the machine'
      } (the accept path alone: ${l.max_accept_per_sec_alone}/s)`,
    );
  return lines.join('\n');
}
