import { html } from '../html.ts';
import { layout, type Navigation } from '../layout.ts';

const OAUTH_HINT = 'Return to the application you came from and try connecting again. If this keeps happening, contact its developer.';

/**
 * A dead end the user must read: used when redirecting would be unsafe
 * (unknown client, unregistered redirect URI), and for errors on the signed-in
 * pages, which pass their navigation and a hint of their own.
 */
export function errorPage(input: { title: string; message: string; code?: string; hint?: string; nav?: Navigation }) {
  return layout({
    title: input.title,
    ...(input.nav ? { nav: input.nav } : {}),
    body: html`<div class="card">
  <h1>${input.title}</h1>
  <p class="error" role="alert">${input.message}</p>
  ${input.code ? html`<p class="muted">Error code: <code>${input.code}</code></p>` : ''}
  <p class="muted">${input.hint ?? OAUTH_HINT}</p>
</div>`,
  });
}

/** What an error page says for an error answered with `status` (errorStatus). */
export function errorText(status: number, requestId: string): { title: string; message: string } {
  switch (status) {
    case 404:
      return { title: 'Not found', message: 'There is nothing here. It may have been deleted, or it belongs to another organization.' };
    case 403:
      return { title: 'Not allowed', message: 'You cannot do this in your current organization.' };
    case 429:
      return { title: 'Too many requests', message: 'Too many requests. Please wait a moment and try again.' };
    case 503:
      return {
        title: 'Service unavailable',
        message: 'Switchboard cannot reach its database right now. Please try again in a few seconds.',
      };
    case 500:
      return { title: 'Unexpected error', message: `Something went wrong on our side (request ${requestId}).` };
    default:
      return { title: 'Request refused', message: 'The request could not be processed.' };
  }
}
