/**
 * A pure, synchronous SHA-256 (FIPS 180-4) over the UTF-8 bytes of a string. The core cannot use
 * `node:crypto` (it also runs in the browser preview) and Web Crypto is asynchronous, while trace
 * hashes and cache keys are computed inside the synchronous assembly pipeline.
 */

const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
  0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
  0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

// Buffers reused by every call: hashing is synchronous, so calls never interleave. Hashing one
// item must not allocate (the pipeline hashes every fixture item), so the message is encoded and
// padded in place in `buf`, which only grows.
const W = new Int32Array(64);
const encoder = new TextEncoder();
let buf = new Uint8Array(4096);
const HEX: string[] = [];
for (let i = 0; i < 256; i++) HEX.push(i.toString(16).padStart(2, '0'));

function hex32(x: number): string {
  return HEX[(x >>> 24) & 255] + HEX[(x >>> 16) & 255] + HEX[(x >>> 8) & 255] + HEX[x & 255];
}

/** Hashes `len` message bytes at the start of `b`; `b` must have room for the padding. */
function digest(b: Uint8Array, len: number): string {
  // Padding: 0x80, zeros to 56 mod 64, then the bit length as a 64-bit big-endian integer.
  const total = ((len + 8) >> 6) * 64 + 64;
  b[len] = 0x80;
  b.fill(0, len + 1, total - 8);
  const bitLen = len * 8;
  const hi = Math.floor(bitLen / 0x100000000);
  const lo = bitLen >>> 0;
  b[total - 8] = hi >>> 24;
  b[total - 7] = hi >>> 16;
  b[total - 6] = hi >>> 8;
  b[total - 5] = hi;
  b[total - 4] = lo >>> 24;
  b[total - 3] = lo >>> 16;
  b[total - 2] = lo >>> 8;
  b[total - 1] = lo;
  let h0 = 0x6a09e667 | 0;
  let h1 = 0xbb67ae85 | 0;
  let h2 = 0x3c6ef372 | 0;
  let h3 = 0xa54ff53a | 0;
  let h4 = 0x510e527f | 0;
  let h5 = 0x9b05688c | 0;
  let h6 = 0x1f83d9ab | 0;
  let h7 = 0x5be0cd19 | 0;
  for (let off = 0; off < total; off += 64) {
    for (let i = 0; i < 16; i++) {
      const j = off + i * 4;
      W[i] = (b[j] << 24) | (b[j + 1] << 16) | (b[j + 2] << 8) | b[j + 3];
    }
    for (let i = 16; i < 64; i++) {
      const w15 = W[i - 15];
      const w2 = W[i - 2];
      const s0 = ((w15 >>> 7) | (w15 << 25)) ^ ((w15 >>> 18) | (w15 << 14)) ^ (w15 >>> 3);
      const s1 = ((w2 >>> 17) | (w2 << 15)) ^ ((w2 >>> 19) | (w2 << 13)) ^ (w2 >>> 10);
      W[i] = (W[i - 16] + s0 + W[i - 7] + s1) | 0;
    }
    let a = h0;
    let bb = h1;
    let c = h2;
    let d = h3;
    let e = h4;
    let f = h5;
    let g = h6;
    let h = h7;
    for (let i = 0; i < 64; i++) {
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const ch = (e & f) ^ (~e & g);
      const t1 = (h + S1 + ch + K[i] + W[i]) | 0;
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const maj = (a & bb) ^ (a & c) ^ (bb & c);
      const t2 = (S0 + maj) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = bb;
      bb = a;
      a = (t1 + t2) | 0;
    }
    h0 = (h0 + a) | 0;
    h1 = (h1 + bb) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0;
    h5 = (h5 + f) | 0;
    h6 = (h6 + g) | 0;
    h7 = (h7 + h) | 0;
  }
  return hex32(h0) + hex32(h1) + hex32(h2) + hex32(h3) + hex32(h4) + hex32(h5) + hex32(h6) + hex32(h7);
}

function room(bytes: number): Uint8Array {
  const need = bytes + 72;
  if (buf.length < need) buf = new Uint8Array(Math.max(need, buf.length * 2));
  return buf;
}

/** SHA-256 of raw bytes, as 64 lowercase hex digits. */
export function sha256Bytes(bytes: Uint8Array): string {
  const b = room(bytes.length);
  b.set(bytes);
  return digest(b, bytes.length);
}

/** A synchronous SHA-256 of a string's UTF-8 bytes, as 64 lowercase hex digits. */
export type Sha256 = (text: string) => string;

let native: Sha256 | undefined;

/**
 * Lets a host with a native hash (Node's `crypto`, about ten times faster than this file) take
 * over `sha256`. It must give the same digests, lone surrogates encoded as U+FFFD included; the
 * pure implementation stays the default (the browser preview) and the reference in tests.
 */
export function useSha256(impl: Sha256 | undefined): void {
  native = impl;
}

/** SHA-256 of a string's UTF-8 encoding (lone surrogates become U+FFFD, as TextEncoder does). */
export function sha256(text: string): string {
  return native !== undefined ? native(text) : pureSha256(text);
}

/** The pure implementation, whatever host is installed. */
export function pureSha256(text: string): string {
  // At most 3 UTF-8 bytes per UTF-16 unit.
  const b = room(text.length * 3);
  const { written } = encoder.encodeInto(text, b);
  return digest(b, written);
}
