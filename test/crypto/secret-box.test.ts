import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { keyRing } from '../../src/crypto/key-ring.ts';
import { createSecretBox, UnreadableSealError } from '../../src/crypto/secret-box.ts';

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

describe('the secret box across a key rotation (SECRET_KEY_PREVIOUS)', () => {
  const [oldKey, newKey, otherKey] = [randomBytes(32), randomBytes(32), randomBytes(32)];
  const org = '5d0c6f0e-1111-4222-8333-944455556666';
  const before = createSecretBox(oldKey);
  const rotated = createSecretBox(keyRing(newKey, [otherKey, oldKey]));

  test('what an older key sealed still opens; what is sealed now is under SECRET_KEY only', () => {
    const sealed = before.seal('kept secret', org);
    assert.equal(rotated.open(sealed, org), 'kept secret');
    assert.equal(rotated.isCurrent(sealed, org), false);
    const fresh = rotated.seal('new secret', org);
    assert.equal(createSecretBox(newKey).open(fresh, org), 'new secret');
    assert.throws(() => before.open(fresh, org));
  });

  test('reseal moves a value to SECRET_KEY, and leaves one already there alone', () => {
    const resealed = rotated.reseal(before.seal('kept secret', org), org);
    assert.ok(resealed);
    assert.equal(createSecretBox(newKey).open(resealed, org), 'kept secret');
    assert.equal(rotated.reseal(resealed, org), undefined);
  });

  test('a value no key opens says which variables to look at; the associated data still binds it', () => {
    const sealed = createSecretBox(randomBytes(32)).seal('lost', org);
    assert.throws(
      () => rotated.open(sealed, org),
      (error: unknown) => {
        assert.ok(error instanceof UnreadableSealError);
        assert.match(error.message, /neither SECRET_KEY nor any key of SECRET_KEY_PREVIOUS/);
        return true;
      },
    );
    assert.throws(() => rotated.open(before.seal('s', org), '00000000-0000-4000-8000-000000000000'), UnreadableSealError);
  });
});
