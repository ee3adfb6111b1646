import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { rememberOpenedSeals } from '../../src/crypto/opened-seals.ts';
import { createSecretBox, type SecretBox } from '../../src/crypto/secret-box.ts';

/** A box that counts its decryptions. */
function counting(box: SecretBox): SecretBox & { opens: number } {
  const counted = {
    ...box,
    opens: 0,
    open(sealed: Buffer, context: string) {
      counted.opens++;
      return box.open(sealed, context);
    },
  };
  return counted;
}

describe('a secret box that remembers what it opened', () => {
  const org = '5d0c6f0e-1111-4222-8333-944455556666';
  const other = '00000000-0000-4000-8000-000000000000';

  test('opens each sealed value once, however often it is asked', () => {
    const box = counting(createSecretBox(randomBytes(32)));
    const remembering = rememberOpenedSeals(box);
    const sealed = box.seal('s3cret', org);
    for (let i = 0; i < 5; i++) assert.equal(remembering.open(Buffer.from(sealed), org), 's3cret');
    assert.equal(box.opens, 1);
  });

  test('a secret sealed again or changed is opened afresh; another context never gets a remembered answer', () => {
    const box = counting(createSecretBox(randomBytes(32)));
    const remembering = rememberOpenedSeals(box);
    const sealed = box.seal('first', org);
    assert.equal(remembering.open(sealed, org), 'first');
    assert.equal(remembering.open(box.seal('second', org), org), 'second');
    assert.throws(() => remembering.open(sealed, other), 'the organization is still the associated data');
    // Same IV and tag, other ciphertext bytes: not the remembered value, so the box decides (and refuses it).
    const altered = Buffer.from(sealed);
    altered[altered.length - 1]! ^= 1;
    assert.throws(() => remembering.open(altered, org));
    assert.equal(remembering.open(sealed, org), 'first');
    assert.equal(box.opens, 4);
  });

  test('keeps at most maxEntries, dropping the oldest', () => {
    const box = counting(createSecretBox(randomBytes(32)));
    const remembering = rememberOpenedSeals(box, 2);
    const [a, b, c] = ['a', 'b', 'c'].map((secret) => box.seal(secret, org)) as [Buffer, Buffer, Buffer];
    for (const sealed of [a, b, c]) remembering.open(sealed, org);
    assert.equal(box.opens, 3);
    remembering.open(c, org);
    remembering.open(b, org);
    assert.equal(box.opens, 3, 'b and c are remembered');
    remembering.open(a, org);
    assert.equal(box.opens, 4, 'a was dropped');
  });

  test('seals as the box does', () => {
    const box = createSecretBox(randomBytes(32));
    const remembering = rememberOpenedSeals(box);
    assert.equal(box.open(remembering.seal('x', org), org), 'x');
  });
});
