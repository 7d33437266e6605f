/**
 * Sign in: one field labelled `API key`. The key is tried with one cheap read (the first log
 * entry); a 401 says on the page that the key was refused. A key of a narrower scope (403 on
 * reads) is let in: each page then shows what it may not read.
 */
import { useState } from 'preact/hooks';
import { errorText } from './format';
import { clientFor } from './session';

export function SignIn({ onSignedIn }: { onSignedIn: (key: string) => void }) {
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const submit = async (e: Event) => {
    e.preventDefault();
    const k = key.trim();
    if (!k) return setError('Enter an API key.');
    setBusy(true);
    setError('');
    try {
      await clientFor(k).logs.list({ pageSize: 1 });
      onSignedIn(k);
    } catch (err) {
      const status = (err as { status?: number }).status;
      if (status === 403) onSignedIn(k);
      else if (status === 401)
        setError(
          'This API key was refused. Check it (it starts with the prefix your key list shows) and try again.',
        );
      else setError(`Could not sign in: ${errorText(err)}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="signin">
      <h1>Mailyard</h1>
      <form onSubmit={submit}>
        <label for="api-key">API key</label>
        <input
          id="api-key"
          name="api-key"
          type="password"
          autoComplete="off"
          value={key}
          onInput={(e) => setKey((e.target as HTMLInputElement).value)}
        />
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
      </form>
      <p class="muted">
        The key stays in this tab only (sessionStorage) and is sent as a Bearer token to this gateway. No key
        yet? The gateway prints one on its first start, or an operator issues one with the admin API.
      </p>
    </main>
  );
}
