/**
 * The building blocks every page uses: loading data (useLoad: errors kept and shown, never
 * swallowed), the error box (role=alert), empty states that say what to do next, a pager over
 * the API's pageToken, copy buttons, buttons that run an action and show its outcome, and the
 * data table every list uses (column headers with scope="col"; an sr-only "Actions" header when
 * the rows end in a cell of buttons, so screen readers name that column).
 */
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { errorText } from './format';

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` now and whenever `deps` change; the newest run wins. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  const run = useRef(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: deps are the caller's
  useEffect(() => {
    const mine = ++run.current;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => mine === run.current && setState({ data, loading: false }),
      (error) => mine === run.current && setState({ error, loading: false }),
    );
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

export function ErrorBox({ error }: { error: unknown }) {
  if (error === undefined || error === null) return null;
  return (
    <p class="error" role="alert">
      {errorText(error)}
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <div class="empty">{children}</div>;
}

export function Loading() {
  return (
    <p class="muted" aria-live="polite">
      Loading…
    </p>
  );
}

/** Renders a load's error, a loading line, or `children(data)`. */
export function Show<T>({ load, children }: { load: Loaded<T>; children: (data: T) => ComponentChildren }) {
  if (load.error !== undefined) return <ErrorBox error={load.error} />;
  if (load.data === undefined) return <Loading />;
  return <>{children(load.data)}</>;
}

/** Cursor paging: a stack of tokens lets "Previous" go back. */
export function usePager(resetOn: unknown[]) {
  const [tokens, setTokens] = useState<(string | undefined)[]>([undefined]);
  useEffect(() => setTokens([undefined]), resetOn);
  const token = tokens[tokens.length - 1];
  return {
    token,
    page: tokens.length,
    next: (t: string) => setTokens((s) => [...s, t]),
    previous: () => setTokens((s) => (s.length > 1 ? s.slice(0, -1) : s)),
  };
}

export function Pager({
  pager,
  nextToken,
  total,
}: {
  pager: ReturnType<typeof usePager>;
  nextToken: string | null | undefined;
  total?: number;
}) {
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled={pager.page === 1} onClick={pager.previous}>
        Previous
      </button>
      <span>
        Page {pager.page}
        {total !== undefined ? ` · ${total.toLocaleString()} in all` : ''}
      </span>
      <button type="button" disabled={!nextToken} onClick={() => nextToken && pager.next(nextToken)}>
        Next
      </button>
    </nav>
  );
}

export function CopyButton({ text, label }: { text: string; label: string }) {
  const [done, setDone] = useState<string>('');
  return (
    <button
      type="button"
      class="small"
      aria-label={`Copy ${label}`}
      onClick={() =>
        navigator.clipboard.writeText(text).then(
          () => setDone('Copied'),
          (err) => setDone(`Copy failed: ${errorText(err)} — select the text instead`),
        )
      }
    >
      {done || 'Copy'}
    </button>
  );
}

/** A button running `action`; shows "…" while it runs and its error (or `ok` text) after. */
export function ActionButton({
  label,
  action,
  onDone,
  class: cls,
  ariaLabel,
}: {
  label: string;
  action: () => Promise<unknown>;
  onDone?: () => void;
  class?: string;
  ariaLabel?: string;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  return (
    <span class="action">
      <button
        type="button"
        class={cls}
        aria-label={ariaLabel}
        disabled={busy}
        onClick={async () => {
          setBusy(true);
          setError(undefined);
          try {
            await action();
            onDone?.();
          } catch (err) {
            setError(err);
          } finally {
            setBusy(false);
          }
        }}
      >
        {busy ? `${label}…` : label}
      </button>
      <ErrorBox error={error} />
    </span>
  );
}

export function Badge({ value }: { value: string }) {
  return <span class={`badge b-${value.toLowerCase().replace(/[^a-z]+/g, '-')}`}>{value}</span>;
}

/** A list table: `columns` are the header texts, `actions` adds the (visually hidden) "Actions"
 * column header; `children` are the body rows (`<tr>`). */
export function DataTable({
  columns,
  actions,
  caption,
  children,
}: {
  columns: string[];
  actions?: boolean;
  caption?: string;
  children: ComponentChildren;
}) {
  return (
    <table>
      {caption ? <caption>{caption}</caption> : null}
      <thead>
        <tr>
          {columns.map((c) => (
            <th key={c} scope="col">
              {c}
            </th>
          ))}
          {actions ? (
            <th scope="col">
              <span class="sr-only">Actions</span>
            </th>
          ) : null}
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  );
}

/** Labelled values as a description list: `totals` (figure tiles) or `kv` (label: value lines). */
export function Pairs({ rows, kind }: { rows: Array<[string, string]>; kind: 'totals' | 'kv' }) {
  return (
    <dl class={kind}>
      {rows.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}
