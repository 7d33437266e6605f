/** Display helpers: dates in the browser's locale, counts with separators. */
export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

export function count(n: number): string {
  return n.toLocaleString();
}

/** The message of anything thrown: the API's error text for client errors. */
export function errorText(err: unknown): string {
  if (err && typeof err === 'object' && 'envelope' in err) {
    const e = err as { status: number; envelope: { error: string; details?: string } };
    return `${e.envelope.error}${e.envelope.details ? ` (${e.envelope.details})` : ''} [HTTP ${e.status}]`;
  }
  return err instanceof Error ? err.message : String(err);
}
