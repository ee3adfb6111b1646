import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { createSecretBox } from '../../src/crypto/secret-box.ts';

describe('webhook secret box (AES-256-GCM)', () => {
  const box = createSecretBox(randomBytes(32));
  const org = '5d0c6f0e-1111-4222-8333-944455556666';

  test('opens what it sealed, and never stores the secret in clear', () => {
    const sealed = box.seal('my shared secret', org);
    assert.equal(box.open(sealed, org), 'my shared secret');
    assert.ok(!sealed.includes(Buffer.from('my shared secret')));
    assert.notDeepEqual(box.seal('my shared secret', org), sealed, 'a fresh IV every time');
  });

  test("does not open under another organization's id, another key, or after tampering", () => {
    const sealed = box.seal('s3cret', org);
    assert.throws(() => box.open(sealed, '00000000-0000-4000-8000-000000000000'));
    assert.throws(() => createSecretBox(randomBytes(32)).open(sealed, org));
    const tampered = Buffer.from(sealed);
    tampered[tampered.length - 1]! ^= 1;
    assert.throws(() => box.open(tampered, org));
    assert.throws(() => box.open(Buffer.from([2, ...sealed.subarray(1)]), org));
  });

  test('refuses a key that is not 32 bytes', () => {
    assert.throws(() => createSecretBox(randomBytes(16)));
  });
});
