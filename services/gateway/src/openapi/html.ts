/**
 * /docs: a self-contained HTML reference rendered from the OpenAPI document (no scripts, no CDN:
 * nothing outside this page is fetched), with each operation's parameters, body schema and examples.
 */
type Json = Record<string, unknown>;

const esc = (s: unknown) =>
  String(s).replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );
const pre = (v: unknown) => `<pre>${esc(typeof v === 'string' ? v : JSON.stringify(v, null, 2))}</pre>`;

export function renderDocsHtml(doc: Json): string {
  const info = doc.info as { title: string; version: string; description: string };
  const paths = doc.paths as Record<string, Record<string, Json>>;
  const byTag = new Map<string, string[]>();
  for (const [path, ops] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const tag = (op.tags as string[])[0] ?? 'Other';
      const params = (op.parameters as Json[] | undefined) ?? [];
      const body = (op.requestBody as { content: Record<string, Json> } | undefined)?.content[
        'application/json'
      ];
      const responses = op.responses as Record<
        string,
        { description: string; content?: Record<string, Json> }
      >;
      const html = [
        `<section id="${esc(op.operationId)}"><h3><span class="m ${method}">${method.toUpperCase()}</span> <code>${esc(path)}</code></h3>`,
        `<p>${esc(op.summary)}</p>`,
        params.length
          ? `<table><tr><th>Parameter</th><th>In</th><th>Required</th><th>Schema</th></tr>${params
              .map(
                (p) =>
                  `<tr><td><code>${esc(p.name)}</code></td><td>${esc(p.in)}</td><td>${p.required ? 'yes' : 'no'}</td><td><code>${esc(JSON.stringify(p.schema))}</code>${p.description ? `<br>${esc(p.description)}` : ''}</td></tr>`,
              )
              .join('')}</table>`
          : '',
        body
          ? `<h4>Request body</h4><details><summary>JSON Schema</summary>${pre(body.schema)}</details>${pre(body.example)}`
          : '',
        '<h4>Responses</h4><ul>',
        ...Object.entries(responses).map(([status, r]) => {
          const ex = Object.values(r.content ?? {})[0]?.example;
          return `<li><b>${esc(status)}</b> ${esc(r.description)}${ex !== undefined ? pre(ex) : ''}</li>`;
        }),
        '</ul></section>',
      ].join('\n');
      byTag.set(tag, [...(byTag.get(tag) ?? []), html]);
    }
  }
  const nav = [...byTag.keys()].map((t) => `<a href="#tag-${esc(t)}">${esc(t)}</a>`).join(' · ');
  const body = [...byTag.entries()]
    .map(([t, ops]) => `<h2 id="tag-${esc(t)}">${esc(t)}</h2>${ops.join('\n')}`)
    .join('\n');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(info.title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:960px;margin:2em auto;padding:0 1em;color:#222}
pre{background:#f6f8fa;padding:.6em;overflow:auto;font-size:13px}code{font-size:13px}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:.2em .5em;text-align:left;vertical-align:top}
.m{display:inline-block;min-width:4.5em;text-align:center;color:#fff;border-radius:3px;font-size:13px}
.get{background:#2b7}.post{background:#27c}.put{background:#c82}.delete{background:#c33}section{border-top:1px solid #eee;margin-top:1.5em}</style>
</head><body><h1>${esc(info.title)} <small>${esc(info.version)}</small></h1><p>${esc(info.description)}</p>
<p>Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1)</p><nav>${nav}</nav>${body}</body></html>`;
}
