/**
 * The layering rules (docs/architecture.md "Where code lives") as a test over the sources:
 * 1. All SQL lives in libs/store and libs/platform: no string or template literal in
 *    services/* /src (tests excluded) holds an SQL statement (INSERT INTO, UPDATE ... SET,
 *    DELETE FROM, SELECT ... FROM, and the DDL verbs).
 * 2. Services never import each other (by package name or by a relative path into another
 *    service), and libs never import a service.
 * 3. Every outbox row is written by the one writer: `INSERT INTO outbox` appears only in
 *    libs/platform/src/outbox/outbox.ts.
 * 4. Every connection to a tenant's IMAP server is made by libs/providers imap/connection.ts
 *    (the guarded connect, parser limits, deadlines: docs/backfill.md "Limits"): product code
 *    loads imapflow only through libs/providers/src/lazy-sdks.ts (type imports aside).
 * 5. libs/providers never imports the store (sources and tests): storage is injected through the
 *    interfaces of libs/contracts (OAuthGrantStore), implemented by libs/store and passed in by
 *    the services.
 * 6. Outbound connections go through libs/platform (the guarded outbound API, src/net) and
 *    libs/providers (the protocol clients): no other product code calls net/tls `connect` or
 *    `net.createConnection`, http(s) `request`/`get`, the global `fetch`, `new ImapFlow` or
 *    nodemailer's `createTransport` (libs/client, libs/testkit and tests aside).
 * 7. Tests and benchmarks reach another package by its name, never by a relative path into it
 *    (`../../libs/x/src/...`): libs/* /test and bench/ are scanned.
 * 8. No import cycles: neither among the modules of a product package (libs/* /src and
 *    services/* /src, type-only imports included) nor among the packages.
 * Literals are found with the TypeScript parser, so comments and identifiers never count.
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

const ROOT = resolve(__dirname, '..');
const SERVICES = readdirSync(join(ROOT, 'services')).filter((d) =>
  statSync(join(ROOT, 'services', d)).isDirectory(),
);

function sourceFiles(dir: string, withTests = false): string[] {
  const out: string[] = [];
  if (!existsSync(dir)) return out; // libs/testkit keeps its modules at its top level
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (name !== 'node_modules') out.push(...sourceFiles(path, withTests));
    } else if (name.endsWith('.ts') && !name.endsWith('.d.ts') && (withTests || !name.endsWith('.test.ts'))) {
      out.push(path);
    }
  }
  return out;
}

/** The text of every string, no-substitution template and template piece in `file`. */
function literals(file: string): Array<{ text: string; line: number }> {
  const src = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const out: Array<{ text: string; line: number }> = [];
  const visit = (node: ts.Node) => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
      out.push({ text: node.text, line: src.getLineAndCharacterOfPosition(node.getStart()).line + 1 });
    } else if (ts.isTemplateExpression(node)) {
      // Joined with a placeholder so a statement split by ${...} is still seen whole.
      const text = [node.head.text, ...node.templateSpans.map((s) => s.literal.text)].join(' x ');
      out.push({ text, line: src.getLineAndCharacterOfPosition(node.getStart()).line + 1 });
      for (const s of node.templateSpans) visit(s.expression);
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(src);
  return out;
}

const SQL =
  /\b(?:INSERT\s+INTO\s+\w|UPDATE\s+\w+(?:\s+\w+)?\s+SET\s|DELETE\s+FROM\s+\w|SELECT\s[\s\S]*?\sFROM\s+\w|CREATE\s+(?:UNIQUE\s+)?(?:TABLE|INDEX)\s|ALTER\s+TABLE\s|DROP\s+TABLE\s|TRUNCATE\s+\w)/i;

function sqlIn(file: string): string[] {
  return literals(file)
    .filter((l) => SQL.test(l.text))
    .map((l) => `${relative(ROOT, file)}:${l.line}: ${l.text.trim().slice(0, 80)}`);
}

function importsOf(file: string): string[] {
  const src = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const visit = (node: ts.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      if (ts.isStringLiteral(node.moduleSpecifier)) out.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      (node.expression.kind === ts.SyntaxKind.ImportKeyword ||
        (ts.isIdentifier(node.expression) && node.expression.text === 'require')) &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      out.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(src);
  return out;
}

/** Module specifiers `file` loads as values: type-only imports left out, dynamic imports in. */
function valueImportsOf(file: string): string[] {
  const src = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const typeOnly = new Set<string>();
  for (const node of src.statements) {
    if (!ts.isImportDeclaration(node) || !ts.isStringLiteral(node.moduleSpecifier)) continue;
    const clause = node.importClause;
    const named =
      clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings : null;
    if (clause?.isTypeOnly || (named && !clause?.name && named.elements.every((e) => e.isTypeOnly)))
      typeOnly.add(node.moduleSpecifier.text);
  }
  return importsOf(file).filter((spec) => !typeOnly.has(spec));
}

/** The service a module specifier reaches from `file`, if any. */
function serviceOf(file: string, spec: string): string | null {
  const byName = /^@mailyard\/([^/]+)/.exec(spec)?.[1];
  if (byName) return SERVICES.includes(byName) ? byName : null;
  if (!spec.startsWith('.')) return null;
  const target = relative(join(ROOT, 'services'), resolve(file, '..', spec));
  if (target.startsWith('..')) return null;
  return target.split(sep)[0] ?? null;
}

const CONNECTING_MODULES: Record<string, readonly string[]> = {
  net: ['connect', 'createConnection'],
  tls: ['connect'],
  http: ['request', 'get'],
  https: ['request', 'get'],
};

/** Calls in `file` that open an outbound connection of their own (rule 6), as `file:line: call`. */
function outboundCallsIn(file: string): string[] {
  const src = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const modules = new Map<string, string>(); // local name of a default/namespace import -> module
  const named = new Map<string, string>(); // local name of a named import -> `module.name`
  for (const node of src.statements) {
    if (!ts.isImportDeclaration(node) || !ts.isStringLiteral(node.moduleSpecifier)) continue;
    const mod = node.moduleSpecifier.text.replace(/^node:/, '');
    const calls = CONNECTING_MODULES[mod];
    const clause = node.importClause;
    if (!calls || !clause || clause.isTypeOnly) continue;
    if (clause.name) modules.set(clause.name.text, mod);
    const bindings = clause.namedBindings;
    if (bindings && ts.isNamespaceImport(bindings)) modules.set(bindings.name.text, mod);
    if (bindings && ts.isNamedImports(bindings))
      for (const e of bindings.elements) {
        const imported = (e.propertyName ?? e.name).text;
        if (calls.includes(imported)) named.set(e.name.text, `${mod}.${imported}`);
      }
  }
  const found: string[] = [];
  const at = (node: ts.Node, what: string) =>
    found.push(
      `${relative(ROOT, file)}:${src.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${what}`,
    );
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      if (ts.isIdentifier(callee) && ['fetch', 'createTransport'].includes(callee.text))
        at(node, callee.text);
      if (ts.isIdentifier(callee) && named.has(callee.text)) at(node, named.get(callee.text)!);
      if (ts.isPropertyAccessExpression(callee) && ts.isIdentifier(callee.expression)) {
        const mod = modules.get(callee.expression.text);
        if (mod && CONNECTING_MODULES[mod]!.includes(callee.name.text))
          at(node, `${mod}.${callee.name.text}`);
        if (callee.name.text === 'createTransport') at(node, 'createTransport');
      }
    }
    if (ts.isNewExpression(node) && /(^|\.)ImapFlow$/.test(node.expression.getText(src)))
      at(node, 'new ImapFlow');
    ts.forEachChild(node, visit);
  };
  visit(src);
  return found;
}

/** Module specifiers of `typeof import('...')` types in `file`. */
function importTypesOf(file: string): string[] {
  const src = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const visit = (node: ts.Node) => {
    if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    )
      out.push(node.argument.literal.text);
    ts.forEachChild(node, visit);
  };
  visit(src);
  return out;
}

/** Relative imports in `file` (import types included) that leave `packageRoot` (rule 7). */
function crossPackageImports(file: string, packageRoot: string): string[] {
  return [...importsOf(file), ...importTypesOf(file)]
    .filter((spec) => spec.startsWith('.'))
    .filter((spec) => relative(packageRoot, resolve(file, '..', spec)).startsWith('..'))
    .map((spec) => `${relative(ROOT, file)} imports ${spec}`);
}

describe('layering', () => {
  it('finds SQL in a string (the check itself works)', () => {
    expect(SQL.test('SELECT id FROM email_logs WHERE x = 1')).toBe(true);
    expect(SQL.test('UPDATE email_logs l SET status = 1')).toBe(true);
    expect(SQL.test('INSERT INTO outbox (a) VALUES (1)')).toBe(true);
    expect(SQL.test('DELETE FROM suppressions WHERE tenant_id = $1')).toBe(true);
    expect(SQL.test('the update was applied')).toBe(false);
  });

  it('has no SQL in services/*/src: all SQL lives in libs/store and libs/platform', () => {
    const found = SERVICES.flatMap((s) => sourceFiles(join(ROOT, 'services', s, 'src')).flatMap(sqlIn));
    expect(found).toEqual([]);
  });

  it('has no service importing another service, and no lib importing a service', () => {
    const found: string[] = [];
    for (const s of SERVICES) {
      for (const file of sourceFiles(join(ROOT, 'services', s), true)) {
        for (const spec of importsOf(file)) {
          const other = serviceOf(file, spec);
          if (other && other !== s) found.push(`${relative(ROOT, file)} imports ${spec}`);
        }
      }
    }
    for (const lib of readdirSync(join(ROOT, 'libs'))) {
      const dir = join(ROOT, 'libs', lib, 'src');
      if (!statSync(join(ROOT, 'libs', lib)).isDirectory()) continue;
      for (const file of sourceFiles(dir)) {
        for (const spec of importsOf(file)) {
          if (serviceOf(file, spec)) found.push(`${relative(ROOT, file)} imports ${spec}`);
        }
      }
    }
    expect(found).toEqual([]);
  });

  it('writes outbox rows in one place: libs/platform/src/outbox/outbox.ts', () => {
    const files = [
      ...SERVICES.flatMap((s) => sourceFiles(join(ROOT, 'services', s, 'src'))),
      ...readdirSync(join(ROOT, 'libs')).flatMap((l) => sourceFiles(join(ROOT, 'libs', l, 'src'))),
    ];
    const writers = files.filter((f) => literals(f).some((l) => /INSERT\s+INTO\s+outbox\b/i.test(l.text)));
    expect(writers.map((f) => relative(ROOT, f))).toEqual([
      join('libs', 'platform', 'src', 'outbox', 'outbox.ts'),
    ]);
  });

  it('loads imapflow in one place (libs/providers lazy-sdks.ts, for imap/connection.ts): every IMAP connection is bounded', () => {
    const files = [
      ...SERVICES.flatMap((s) => sourceFiles(join(ROOT, 'services', s, 'src'))),
      ...readdirSync(join(ROOT, 'libs')).flatMap((l) => sourceFiles(join(ROOT, 'libs', l, 'src'))),
    ];
    const loaders = files.filter((f) => valueImportsOf(f).includes('imapflow'));
    expect(loaders.map((f) => relative(ROOT, f))).toEqual([join('libs', 'providers', 'src', 'lazy-sdks.ts')]);
  });

  it('has libs/providers never importing the store: storage is injected', () => {
    const files = sourceFiles(join(ROOT, 'libs', 'providers'), true);
    const found = files.flatMap((f) =>
      importsOf(f)
        .filter(
          (spec) =>
            spec === '@mailyard/store' ||
            spec.startsWith('@mailyard/store/') ||
            /(^|\/)store\/src(\/|$)/.test(spec),
        )
        .map((spec) => `${relative(ROOT, f)} imports ${spec}`),
    );
    const manifest = JSON.parse(readFileSync(join(ROOT, 'libs', 'providers', 'package.json'), 'utf8'));
    expect(found).toEqual([]);
    expect({ ...manifest.dependencies, ...manifest.devDependencies }).not.toHaveProperty(['@mailyard/store']);
  });

  it('finds outbound calls (the check itself works)', () => {
    const probe = join(mkdtempSync(join(tmpdir(), 'layering-')), 'probe.ts');
    writeFileSync(
      probe,
      [
        "import net from 'node:net';",
        "import * as tls from 'tls';",
        "import { request as send, get } from 'node:https';",
        "import nodemailer from 'nodemailer';",
        "import { ImapFlow } from 'imapflow';",
        "import { isIP } from 'node:net';",
        'net.connect(25); net.createConnection(25); tls.connect(465); send(u); get(u); fetch(u);',
        'nodemailer.createTransport({}); new ImapFlow({}); isIP(h); other.request(u); net.isIP(h);',
      ].join('\n'),
    );
    expect(outboundCallsIn(probe).map((f) => f.replace(/^.*: /, ''))).toEqual([
      'net.connect',
      'net.createConnection',
      'tls.connect',
      'https.request',
      'https.get',
      'fetch',
      'createTransport',
      'new ImapFlow',
    ]);
  });

  it('opens outbound connections only in libs/platform and libs/providers (libs/client, testkit and tests aside)', () => {
    const files = [
      ...SERVICES.flatMap((s) => sourceFiles(join(ROOT, 'services', s, 'src'))),
      ...readdirSync(join(ROOT, 'libs'))
        .filter((l) => !['platform', 'providers', 'client', 'testkit'].includes(l))
        .flatMap((l) => sourceFiles(join(ROOT, 'libs', l, 'src'))),
    ];
    expect(files.flatMap(outboundCallsIn)).toEqual([]);
  });

  it('has no relative import from libs/*/test or bench/ into another package', () => {
    const found: string[] = [];
    for (const lib of readdirSync(join(ROOT, 'libs'))) {
      const root = join(ROOT, 'libs', lib);
      if (!statSync(root).isDirectory()) continue;
      for (const file of sourceFiles(join(root, 'test'), true))
        found.push(...crossPackageImports(file, root));
    }
    for (const file of sourceFiles(join(ROOT, 'bench'), true))
      found.push(...crossPackageImports(file, join(ROOT, 'bench')));
    expect(found).toEqual([]);
  });
});

/** The module a relative specifier of `file` names (`./x` -> x.ts or x/index.ts), or null. */
function resolveRelative(file: string, spec: string): string | null {
  const base = resolve(file, '..', spec.replace(/\.js$/, ''));
  for (const candidate of [`${base}.ts`, join(base, 'index.ts'), base])
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  return null;
}

/** Every cycle of `graph` (each reported once, from its smallest node), as its nodes in order. */
function cyclesOf(graph: Map<string, readonly string[]>): string[][] {
  const cycles = new Map<string, string[]>();
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string) => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') {
        const cycle = stack.slice(stack.indexOf(next));
        const start = cycle.indexOf([...cycle].sort()[0]!);
        const rotated = [...cycle.slice(start), ...cycle.slice(0, start)];
        cycles.set(rotated.join(' -> '), rotated);
      } else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return [...cycles.values()];
}

describe('import cycles', () => {
  const PACKAGES = [
    ...readdirSync(join(ROOT, 'libs')).map((d) => join('libs', d)),
    ...SERVICES.map((s) => join('services', s)),
  ].filter((d) => existsSync(join(ROOT, d, 'package.json')));
  const productFiles = (pkg: string) =>
    pkg === join('libs', 'testkit') ? [] : sourceFiles(join(ROOT, pkg, 'src'));

  it('finds a cycle (the check itself works)', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ]);
    expect(cyclesOf(graph)).toEqual([['a', 'b', 'c']]);
  });

  it('has no import cycle among the modules of any product package (type-only imports included)', () => {
    const graph = new Map<string, string[]>();
    for (const pkg of PACKAGES)
      for (const file of productFiles(pkg))
        graph.set(
          relative(ROOT, file),
          importsOf(file)
            .filter((spec) => spec.startsWith('.'))
            .map((spec) => resolveRelative(file, spec))
            .filter((f): f is string => f !== null)
            .map((f) => relative(ROOT, f)),
        );
    expect(graph.size).toBeGreaterThan(300);
    expect(cyclesOf(graph).map((c) => c.join(' -> '))).toEqual([]);
  });

  it('has no import cycle among the packages', () => {
    const names = new Map(
      PACKAGES.map((p) => [
        JSON.parse(readFileSync(join(ROOT, p, 'package.json'), 'utf8')).name as string,
        p,
      ]),
    );
    const graph = new Map<string, string[]>();
    for (const [name, pkg] of names) {
      const deps = new Set<string>();
      for (const file of productFiles(pkg))
        for (const spec of importsOf(file)) {
          const target = /^@mailyard\/[^/]+/.exec(spec)?.[0];
          if (target && target !== name && names.has(target)) deps.add(target);
        }
      graph.set(name, [...deps]);
    }
    expect(cyclesOf(graph).map((c) => c.join(' -> '))).toEqual([]);
  });
});
