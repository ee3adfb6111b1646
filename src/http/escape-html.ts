// Text made safe inside HTML (an element's content or a quoted attribute):
// the web UI's pages (web/html.ts) and the alert e-mails' HTML part use it.
const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}
