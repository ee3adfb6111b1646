import { html } from '../html.js';
import { layout } from '../layout.js';
const OAUTH_HINT = 'Return to the application you came from and try connecting again. If this keeps happening, contact its developer.';
/**
 * A dead end the user must read: used when redirecting would be unsafe
 * (unknown client, unregistered redirect URI), and for errors on the signed-in
 * pages, which pass their navigation and a hint of their own.
 */
export function errorPage(input) {
    return layout({
        title: input.title,
        ...(input.nav ? { nav: input.nav } : {}),
        body: html `<div class="card">
  <h1>${input.title}</h1>
  <p class="error" role="alert">${input.message}</p>
  ${input.code ? html `<p class="muted">Error code: <code>${input.code}</code></p>` : ''}
  <p class="muted">${input.hint ?? OAUTH_HINT}</p>
</div>`,
    });
}
//# sourceMappingURL=error.page.js.map