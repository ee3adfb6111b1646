import { html } from '../html.ts';
import { layout, type Navigation } from '../layout.ts';
import { hiddenCsrf } from './fields.ts';

/** The confirmation step before deleting anything: a GET shows it, only its POST deletes. */
export function confirmDeletePage(input: {
  nav: Navigation;
  title: string;
  message: string;
  action: string;
  cancelHref: string;
  button: string;
}) {
  return layout({
    title: input.title,
    nav: input.nav,
    body: html`<div class="card">
  <h1>${input.title}</h1>
  <p>${input.message}</p>
  <form method="post" action="${input.action}">
    ${hiddenCsrf(input.nav.csrf)}
    <div class="actions">
      <button type="submit" class="danger">${input.button}</button>
      <a href="${input.cancelHref}">Cancel</a>
    </div>
  </form>
</div>`,
  });
}
