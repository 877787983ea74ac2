/**
 * The service's network checks, applied to every request before any route runs:
 *
 * - the `Host` header (and `Origin`, when a browser sends one) must name the address the service is
 *   bound to or a name of the allowlist. A web page that rebinds its own domain name to 127.0.0.1
 *   (DNS rebinding) reaches the port, but its requests still carry its own name in `Host`, so they
 *   are refused. IP literals cannot be rebound: when the service listens on every interface, any
 *   IP literal is accepted;
 * - a bearer token, when the service has one, compared in constant time. The token is never
 *   logged, echoed or counted in a metric label.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';

/** True for addresses only this machine can reach: 127.0.0.0/8, ::1, `localhost`. */
export function isLoopback(host: string): boolean {
  const h = bareHost(host);
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  if (h.startsWith('::ffff:')) return isLoopback(h.slice(7));
  return isIP(h) === 4 && h.startsWith('127.');
}

/** True for the wildcard addresses (`0.0.0.0`, `::`) that listen on every interface. */
export function isWildcard(host: string): boolean {
  const h = bareHost(host);
  return h === '0.0.0.0' || h === '::' || h === '0:0:0:0:0:0:0:0';
}

/** `[::1]` -> `::1`, `Example.COM.` -> `example.com`. */
function bareHost(host: string): string {
  let h = host.trim().toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h.endsWith('.')) h = h.slice(0, -1);
  return h;
}

/** The host name of a `Host` header value (`127.0.0.1:8710`, `[::1]:8710`, `example.com`), or undefined when it is malformed. */
export function hostOfHeader(value: string): string | undefined {
  const v = value.trim();
  if (!v || v.length > 300) return undefined;
  if (v.startsWith('[')) {
    const end = v.indexOf(']');
    if (end < 0) return undefined;
    const rest = v.slice(end + 1);
    if (rest && !/^:\d{1,5}$/.test(rest)) return undefined;
    return bareHost(v.slice(1, end));
  }
  const m = /^([^:/?#@\s]+)(?::\d{1,5})?$/.exec(v);
  return m ? bareHost(m[1]) : undefined;
}

export interface HostPolicy {
  /** The address the server is bound to (as given to listen). */
  bound: string;
  /** More host names accepted in `Host` and `Origin` (lower case), e.g. the name of a reverse proxy. */
  allow: readonly string[];
}

/** Whether a request naming `host` (a bare host name) may be answered. */
export function hostAllowed(host: string, policy: HostPolicy): boolean {
  const h = bareHost(host);
  if (policy.allow.some((a) => bareHost(a) === h)) return true;
  const bound = bareHost(policy.bound);
  if (h === bound) return true;
  if (isWildcard(bound)) return isIP(h) !== 0 || isLoopback(h);
  if (isLoopback(bound)) return isLoopback(h);
  return false;
}

export type GuardResult = { ok: true } | { ok: false; status: 401 | 403; code: string; message: string };

/**
 * Checks `Host` and `Origin`. A request without `Host` (HTTP/1.0) is answered: browsers always send
 * one, so its absence is not the rebinding case. The refused value is not repeated in the message.
 */
export function checkHostAndOrigin(headers: { host?: string; origin?: string | string[] }, policy: HostPolicy): GuardResult {
  if (headers.host !== undefined) {
    const h = hostOfHeader(headers.host);
    if (h === undefined || !hostAllowed(h, policy)) return { ok: false, status: 403, code: 'forbidden_host', message: 'the Host header does not name this service (give its address, or start it with --allow-host NAME)' };
  }
  const origin = Array.isArray(headers.origin) ? headers.origin[0] : headers.origin;
  if (origin !== undefined) {
    let host: string | undefined;
    try {
      const u = new URL(origin);
      host = u.protocol === 'http:' || u.protocol === 'https:' ? u.hostname : undefined;
    } catch {
      host = undefined;
    }
    if (host === undefined || !hostAllowed(host, policy)) return { ok: false, status: 403, code: 'forbidden_origin', message: 'requests from this Origin are refused (a web page of another site cannot call the service; start it with --allow-host NAME for a page of your own)' };
  }
  return { ok: true };
}

/** A token holder that compares presented tokens in constant time (digests of equal length). */
export class BearerToken {
  private readonly digest: Buffer;
  constructor(token: string) {
    this.digest = createHash('sha256').update(token, 'utf8').digest();
  }

  /** Checks an `Authorization` header value. */
  matches(header: string | undefined): boolean {
    if (header === undefined) return false;
    const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
    // The digest is computed and compared even for a malformed header, so the time taken does not
    // tell a malformed header from a wrong token.
    const presented = createHash('sha256')
      .update(m ? m[1] : '', 'utf8')
      .digest();
    return timingSafeEqual(presented, this.digest) && m !== null;
  }
}

/** The shortest token accepted: shorter ones can be guessed over the network. */
export const MIN_TOKEN_LENGTH = 16;
