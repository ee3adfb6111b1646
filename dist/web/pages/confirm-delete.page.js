import { html } from '../html.js';
import { layout } from '../layout.js';
import { hiddenCsrf } from './fields.js';
/** The confirmation step before deleting anything: a GET shows it, only its POST deletes. */
export function confirmDeletePage(input) {
    return layout({
        title: input.title,
        nav: input.nav,
        body: html `<div class="card">
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
//# sourceMappingURL=confirm-delete.page.js.map