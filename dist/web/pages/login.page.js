import { html } from '../html.js';
import { layout } from '../layout.js';
export function loginPage(input) {
    return layout({
        title: 'Sign in',
        body: html `<div class="card">
  <h1>Sign in to Switchboard</h1>
  ${input.error ? html `<p class="error" role="alert">${input.error}</p>` : ''}
  <form method="post" action="/login">
    <input type="hidden" name="csrf" value="${input.csrf}">
    <input type="hidden" name="return_to" value="${input.returnTo}">
    <label for="email">Email</label>
    <input id="email" name="email" type="email" autocomplete="username" required value="${input.email ?? ''}" autofocus>
    <label for="password">Password</label>
    <input id="password" name="password" type="password" autocomplete="current-password" required>
    <div class="actions"><button type="submit">Sign in</button></div>
  </form>
</div>`,
    });
}
//# sourceMappingURL=login.page.js.map