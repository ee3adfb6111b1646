// A tagged template that escapes every interpolated value, so page code
// cannot forget to: html`<p>${userInput}</p>`. Trusted fragments are SafeHtml
// (the result of another html`` call); arrays are joined.
export class SafeHtml {
    value;
    constructor(value) {
        this.value = value;
    }
    toString() {
        return this.value;
    }
}
const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export function escapeHtml(text) {
    return text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}
function render(value) {
    if (value instanceof SafeHtml)
        return value.value;
    if (Array.isArray(value))
        return value.map(render).join('');
    if (value === null || value === undefined || value === false)
        return '';
    return escapeHtml(String(value));
}
export function html(strings, ...values) {
    let out = strings[0];
    values.forEach((value, i) => {
        out += render(value) + strings[i + 1];
    });
    return new SafeHtml(out);
}
//# sourceMappingURL=html.js.map