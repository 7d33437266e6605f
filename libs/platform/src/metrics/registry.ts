import client from 'prom-client';

/** One registry per process; every service registers into it and /metrics serves it. */
export const metricsRegistry = new client.Registry();
let defaultsOn = false;

export function enableDefaultMetrics(): void {
  if (defaultsOn) return;
  defaultsOn = true;
  client.collectDefaultMetrics({ register: metricsRegistry, prefix: 'mailyard_' });
}

function getOrCreate<T>(name: string, make: () => T): T {
  return (metricsRegistry.getSingleMetric(name) as T | undefined) ?? make();
}

export function counter(name: string, help: string, labelNames: string[] = []) {
  return getOrCreate(
    name,
    () => new client.Counter({ name, help, labelNames, registers: [metricsRegistry] }),
  );
}

export function gauge(name: string, help: string, labelNames: string[] = []) {
  return getOrCreate(name, () => new client.Gauge({ name, help, labelNames, registers: [metricsRegistry] }));
}

export function histogram(name: string, help: string, labelNames: string[] = [], buckets?: number[]) {
  return getOrCreate(
    name,
    () => new client.Histogram({ name, help, labelNames, buckets, registers: [metricsRegistry] }),
  );
}
