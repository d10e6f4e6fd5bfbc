import { createDecipheriv, createHash, createHmac, hkdfSync } from 'node:crypto';
import t from 'tap';
import { libolmAccountPickle, newIdentity, publicKeys, uploadedKeyIds } from './pickle.ts';

t.test('the libolm account pickle: layout, encryption and MAC as libolm writes them', async (tt) => {
  const id = { ...newIdentity('@herald:example.org', 'DEV'), nextKeyId: 0x01020304 };
  const key = new TextEncoder().encode('pickle-key');
  const raw = Buffer.from(libolmAccountPickle(id, key), 'base64');
  const keys = Buffer.from(hkdfSync('sha256', key, Buffer.from([0]), 'Pickle', 80));
  const [ciphertext, mac] = [raw.subarray(0, -8), raw.subarray(-8)];
  tt.same(
    mac,
    createHmac('sha256', keys.subarray(32, 64)).update(ciphertext).digest().subarray(0, 8),
    'truncated HMAC-SHA-256 over the ciphertext',
  );
  const d = createDecipheriv('aes-256-cbc', keys.subarray(0, 32), keys.subarray(64, 80));
  const plain = Buffer.concat([d.update(ciphertext), d.final()]);
  const pub = publicKeys(id);
  tt.equal(plain.readUInt32BE(0), 4, 'version 4');
  tt.equal(plain.subarray(4, 36).toString('base64').replace(/=+$/, ''), pub.ed25519, 'Ed25519 public key');
  tt.same(
    plain.subarray(36, 100),
    createHash('sha512').update(Buffer.from(id.ed25519Seed, 'base64')).digest(),
    'expanded Ed25519 private key',
  );
  tt.equal(plain.subarray(100, 132).toString('base64').replace(/=+$/, ''), pub.curve25519, 'Curve25519 public key');
  tt.same(plain.subarray(132, 164), Buffer.from(id.curve25519Secret, 'base64'), 'Curve25519 private key');
  tt.equal(plain.readUInt32BE(164), 0, 'no one-time keys');
  tt.equal(plain[168], 0, 'no fallback keys');
  tt.equal(plain.readUInt32BE(169), 0x01020304, 'the next one-time key id');
  tt.equal(plain.length, 173);
  tt.not(newIdentity('@herald:example.org', 'DEV').ed25519Seed, id.ed25519Seed, 'each identity is new');
});

t.test('one-time key ids in a /keys/upload body', async (tt) => {
  tt.same(
    uploadedKeyIds({
      one_time_keys: { 'signed_curve25519:AAAAAAAAADI': {}, 'signed_curve25519:AAAAAAAAAAE': {} },
      fallback_keys: { 'signed_curve25519:AAAAAAAAAQA': {} },
    }),
    [50, 1],
    'fallback keys count apart',
  );
  tt.same(uploadedKeyIds({ device_keys: {} }), []);
  tt.same(uploadedKeyIds(null), []);
});
