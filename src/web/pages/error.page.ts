import { html } from '../html.ts';
import { layout } from '../layout.ts';

/** A dead end the user must read: used when redirecting would be unsafe (unknown client, unregistered redirect URI). */
export function errorPage(input: { title: string; message: string; code?: string }) {
  return layout({
    title: input.title,
    body: html`<div class="card">
  <h1>${input.title}</h1>
  <p class="error" role="alert">${input.message}</p>
  ${input.code ? html`<p class="muted">Error code: <code>${input.code}</code></p>` : ''}
  <p class="muted">Return to the application you came from and try connecting again. If this keeps happening, contact its developer.</p>
</div>`,
  });
}
