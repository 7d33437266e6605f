/**
 * The dashboard's entry (served at GET /ui, docs/dashboard.md): the sign-in form until a key is
 * accepted, then the navigation and the page of the current path.
 */
import { render } from 'preact';
import { useState } from 'preact/hooks';
import './style.css';
import { installLinkHandler, navigate } from './router';
import { clientFor, forgetKey, storeKey, storedKey } from './session';
import { Shell } from './shell';
import { SignIn } from './sign-in';

function App() {
  const [key, setKey] = useState(storedKey());
  if (!key)
    return (
      <SignIn
        onSignedIn={(k) => {
          storeKey(k);
          setKey(k);
        }}
      />
    );
  return (
    <Shell
      api={clientFor(key)}
      onSignOut={() => {
        forgetKey();
        setKey(null);
        navigate('/');
      }}
    />
  );
}

installLinkHandler();
render(<App />, document.getElementById('app')!);
