import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { pureSha256 as sha256, sha256 as installed, sha256Bytes, useSha256 } from '../../src/core/assembly/sha256';
import { DiskFileHost, nodeSha256 } from '../../src/node/fileHost';

// node:crypto is the oracle here; the core itself cannot use it (it also runs in the browser).
const oracle = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

describe('sha256 (pure, synchronous)', () => {
  it('matches the FIPS 180-4 test vectors', () => {
    expect(sha256('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')).toBe('248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1');
    expect(sha256('a'.repeat(1_000_000))).toBe('cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0');
  });

  it('hashes UTF-8 bytes at every padding boundary', () => {
    const alphabet = ['a', 'é', '€', '😀', '\n', '\u0000', 'Я', '中'];
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
    for (let len = 0; len < 140; len++) {
      let s = '';
      for (let i = 0; i < len; i++) s += alphabet[Math.floor(rand() * alphabet.length)];
      expect(sha256(s)).toBe(oracle(s));
    }
    for (const n of [55, 56, 57, 63, 64, 65, 119, 120, 128]) expect(sha256('x'.repeat(n))).toBe(oracle('x'.repeat(n)));
  });

  it('encodes a lone surrogate as U+FFFD, like TextEncoder', () => {
    expect(sha256('\uD800')).toBe(oracle('\uFFFD'));
    expect(sha256Bytes(new Uint8Array([0x61, 0x62, 0x63]))).toBe(sha256('abc'));
  });

  it('Node hosts install the native hash, which gives the same digests (lone surrogates too)', () => {
    let seed = 11;
    const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
    const units = ['a', 'é', '€', '\uD83D\uDE00', '\uD800', '\uDFFF', '\n', '\u0000', '中'];
    for (let n = 0; n < 300; n++) {
      let s = '';
      const len = Math.floor(rand() * 200);
      for (let i = 0; i < len; i++) s += units[Math.floor(rand() * units.length)];
      expect(nodeSha256(s)).toBe(sha256(s));
    }
    useSha256(undefined);
    expect(installed('abc')).toBe(sha256('abc'));
    new DiskFileHost(['/tmp']);
    expect(installed('\uD800x')).toBe(nodeSha256('\uD800x'));
    expect(installed('\uD800x')).toBe(sha256('\uD800x'));
    useSha256(undefined);
  });
});
