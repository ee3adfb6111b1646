// The rendered API reference at /docs (DESIGN §5 "Versioning"): the same
// OpenAPI document as /openapi.json, as a server-rendered page that needs no
// script, so it works under the UI's strict Content-Security-Policy.
import { html, type SafeHtml } from '../web/html.ts';
import { layout } from '../web/layout.ts';

interface Parameter { name: string; in: string; required?: boolean; description?: string; schema?: unknown }
interface Operation {
  summary?: string;
  description?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: unknown }> };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: unknown }> }>;
}
export interface OpenApiDocument {
  info: { title: string; version: string; description?: string };
  paths: Record<string, Record<string, Operation>>;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

function schemaBlock(label: string, schema: unknown): SafeHtml | '' {
  if (schema === undefined) return '';
  return html`<details><summary>${label}</summary><pre>${JSON.stringify(schema, null, 2)}</pre></details>`;
}

function operationSection(method: string, path: string, op: Operation): SafeHtml {
  const security = (op.security ?? []).map((alternative) => Object.keys(alternative).join(' + ')).join(' or ');
  const bodies = Object.entries(op.requestBody?.content ?? {});
  return html`<section class="card" id="${`${method}-${path}`}">
  <h2><code>${method.toUpperCase()} ${path}</code></h2>
  ${op.summary ? html`<p>${op.summary}</p>` : ''}
  ${security ? html`<p class="muted">Authentication: ${security}</p>` : ''}
  ${(op.parameters ?? []).length > 0
    ? html`<ul>${(op.parameters ?? []).map((p) => html`<li><code>${p.name}</code> (${p.in}${p.required ? ', required' : ''})${p.description ? html`: ${p.description}` : ''}</li>`)}</ul>`
    : ''}
  ${bodies.map(([type, media]) => schemaBlock(`Request body (${type})`, media.schema))}
  ${Object.entries(op.responses ?? {}).map(([status, response]) => {
    const media = Object.entries(response.content ?? {})[0];
    return media
      ? schemaBlock(`${status} ${media[0]}${response.description ? ` — ${response.description}` : ''}`, media[1].schema)
      : html`<p class="muted">${status}${response.description ? ` — ${response.description}` : ''}</p>`;
  })}
</section>`;
}

export function referencePage(doc: OpenApiDocument): SafeHtml {
  const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((m) => ({ method: m, path, op: item[m]! })));
  return layout({
    title: `${doc.info.title} ${doc.info.version}`,
    body: html`<h1>${doc.info.title} <small class="muted">${doc.info.version}</small></h1>
<p class="lead">${doc.info.description ?? ''} Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1).</p>
<ul>${operations.map(({ method, path }) => html`<li><a href="${`#${method}-${path}`}"><code>${method.toUpperCase()} ${path}</code></a></li>`)}</ul>
${operations.map(({ method, path, op }) => operationSection(method, path, op))}`,
  });
}
