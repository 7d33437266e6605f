/**
 * Which pre-compressed form of a file to send for an Accept-Encoding header: brotli, then gzip,
 * else the plain file. A coding listed with q=0 is refused (RFC 9110 12.5.3); `*` counts.
 */
export type Coding = 'br' | 'gzip' | 'identity';

export function pickCoding(acceptEncoding: string | undefined): Coding {
  if (!acceptEncoding) return 'identity';
  const q = new Map<string, number>();
  for (const part of acceptEncoding.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    const qp = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const value = qp ? Number(qp.slice(2)) : 1;
    q.set(name, Number.isFinite(value) ? value : 0);
  }
  const accepts = (c: string) => (q.get(c) ?? q.get('*') ?? 0) > 0;
  if (accepts('br')) return 'br';
  if (accepts('gzip')) return 'gzip';
  return 'identity';
}
