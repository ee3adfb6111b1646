// Issue 37, item 1: the one way e-mails, pages and CSVs write a URL, and the
// character rule every URL given to us follows.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { renderAlert } from '../src/alerts/templates.ts';
import { printableUrl, urlCharacterProblem } from '../src/url-characters.ts';

const INJECTED = 'https://hooks.example.com/x\r\n\r\nIMPORTANT - confirm at https://evil.example/login\u2028\u0085\t\u007f';

test('printableUrl percent-encodes C0, DEL, C1 and the line separators, and nothing else', () => {
  assert.equal(
    printableUrl(INJECTED),
    'https://hooks.example.com/x%0D%0A%0D%0AIMPORTANT - confirm at https://evil.example/login%E2%80%A8%C2%85%09%7F',
  );
  assert.equal(printableUrl('https://hooks.zapier.com/…?q=ö'), 'https://hooks.zapier.com/…?q=ö');
});

test('urlCharacterProblem refuses control characters, spaces and non-ASCII, and accepts printable ASCII', () => {
  for (const raw of ['a\rb', 'a\nb', 'a\tb', 'a\u0000b', 'a\u007fb', 'a b', 'aöb', 'a\u2028b']) {
    assert.ok(urlCharacterProblem(raw), JSON.stringify(raw));
  }
  assert.equal(urlCharacterProblem('https://h.example/%0D%0A?a=b&c=~!*()[]@:;'), undefined);
});

test('an alert e-mail writes a receiver URL with its control characters percent-encoded', () => {
  const message = renderAlert(
    {
      kind: 'incident',
      subject_type: 'subscription',
      subject_id: '00000000-0000-0000-0000-000000000001',
      details: { app: 'Zapier', client_id: 'c', url: INJECTED, since: '2026-11-28T01:00:00.000Z', waiting: 1 },
    },
    { baseUrl: 'https://switchboard.example', organizationName: 'Acme' },
  );
  assert.ok(message.text.includes('https://hooks.example.com/x%0D%0A%0D%0AIMPORTANT'));
  assert.doesNotMatch(message.text, /\nIMPORTANT/);
  assert.doesNotMatch(message.html, /\nIMPORTANT/);
  assert.doesNotMatch(message.subject, /[\r\n]/);
});
