import { codeChallengeOf, isCodeVerifier, newPkce } from './pkce';

describe('PKCE (S256)', () => {
  it('matches the RFC 7636 appendix B example', () => {
    expect(codeChallengeOf('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe(
      'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    );
  });

  it('draws a fresh 43-character verifier each time, with its challenge', () => {
    const a = newPkce();
    const b = newPkce();
    expect(a.verifier).not.toBe(b.verifier);
    expect(a.verifier).toHaveLength(43);
    expect(isCodeVerifier(a.verifier)).toBe(true);
    expect(a.challenge).toBe(codeChallengeOf(a.verifier));
    expect(a.method).toBe('S256');
  });

  it('refuses verifiers outside the RFC alphabet or length', () => {
    expect(isCodeVerifier('short')).toBe(false);
    expect(isCodeVerifier('a'.repeat(129))).toBe(false);
    expect(isCodeVerifier(`${'a'.repeat(42)}/`)).toBe(false);
    expect(() => codeChallengeOf('x')).toThrow('code_verifier');
  });
});
