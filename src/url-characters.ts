// The characters a URL given to us may hold, and how a URL is written out.
// WHATWG parsing (`new URL`) silently drops TAB, CR and LF, so a URL that
// parses may still carry lines into whatever prints it: every URL a client or
// an operator gives (hookUrl, redirect_uri) is refused when it holds a
// control character, a space or a non-ASCII character, and stored exactly as
// checked. URLs stored before that rule are written out through printableUrl.

// C0 controls, space, DEL, and everything beyond ASCII.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this refuses.
const NOT_URL_CHARACTER = /[\u0000-\u0020\u007f-\u{10ffff}]/u;

/** Why `raw` cannot be a URL we accept, or undefined; the message follows the field's name. */
export function urlCharacterProblem(raw: string): string | undefined {
  const match = NOT_URL_CHARACTER.exec(raw);
  if (!match) return undefined;
  const char = match[0];
  const code = char.codePointAt(0)!;
  const what = code === 0x20 ? 'a space' : code < 0x20 || code === 0x7f ? 'a control character' : 'a non-ASCII character';
  const hex = code.toString(16).toUpperCase().padStart(4, '0');
  return `must not contain ${what} (U+${hex} at position ${match.index + 1}); percent-encode it`;
}

// C0, DEL, C1 and the Unicode line and paragraph separators: what a reader of
// an e-mail, a page or a CSV could take as the start of a new line.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this encodes.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/gu;

/** The URL with each control character percent-encoded (UTF-8): the one way e-mails, pages and CSVs write a URL. */
export function printableUrl(url: string): string {
  return url.replace(CONTROL, (c) => encodeURIComponent(c));
}
