/**
 * Secrets that hide from a scan of the raw text (YAML and JSON escapes, line continuations),
 * formats the scanner did not know (Slack app tokens, AWS secret access keys, Stripe keys, …),
 * and messages that quoted a detected secret whole (a private key in a broken fixture's YAML
 * error, an unknown key that is a token).
 */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/core/config/parse';
import { parseFixture } from '../../src/core/fixture';
import { finding } from '../../src/core/rules/registry';
import { redactSecret, redactSecrets, scanHiddenCharacters, scanSecrets, scanYamlSecrets } from '../../src/core/text/scan';
import { parseTemplate } from '../../src/core/language';
import { renderDotprompt } from '../../src/core/language/dotprompt/engine';
import { redactQuoted } from '../../src/core/text/secrets';
import { parseYaml } from '../../src/core/text/yaml';
import type { Finding } from '../../src/core/types';

// Built at run time so this file does not itself look like it holds credentials.
const openai = ['sk-proj-', 'Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z', 'A7b0C3d9f2'].join('');
const pemBody = ['MIIEowIBAAKCAQEAx4v2kq9T0cZ3', 'Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8Ba7', 'Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe'];
const pem = ['-----BEGIN RSA PRIVATE KEY-----', ...pemBody, '-----END RSA PRIVATE KEY-----'].join('\n');

/** Every secret-looking piece of `secret` that a message must not contain. */
function leaks(text: string, secret: string): boolean {
  return text.includes(secret) || text.includes(secret.slice(6, -3));
}

const only = (fs: Finding[]) => fs.filter((f) => f.rule === 'secret-in-context');

describe('secrets written with escapes', () => {
  const escaped: Array<[string, string]> = [
    ['\\x escape', `"\\x73${openai.slice(1)}"`],
    ['\\u escape', `"\\u0073${openai.slice(1)}"`],
    ['\\U escape', `"\\U00000073${openai.slice(1)}"`],
    ['a double-quoted line continuation', `"${openai.slice(0, 12)}\\\n      ${openai.slice(12)}"`],
    ['a CRLF line continuation', `"${openai.slice(0, 12)}\\\r\n      ${openai.slice(12)}"`],
    ['escapes in the middle', `"sk-proj-\\u0041b3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zA7b0C3d9f2"`],
  ];
  for (const [name, value] of escaped) {
    it(`finds an OpenAI key spelled with ${name}, over its source`, () => {
      const text = `slots:\n  question: ${value}\n`;
      const got = only(scanSecrets('/w/a.fixture.yaml', text));
      expect(got).toHaveLength(1);
      const src = text.slice(got[0].span.start, got[0].span.end);
      expect(value).toContain(src);
      expect(src.length).toBeGreaterThan(30);
      expect(src).not.toMatch(/[\r\n]$/);
      expect(got[0].message).toContain('OpenAI API key');
      expect(got[0].message).toContain('escape sequences');
      expect(leaks(got[0].message, openai)).toBe(false);
      // The parsed value is the key: the YAML value scan agrees and reports it once.
      const yaml = parseYaml(text);
      expect(yaml.doc.errors).toEqual([]);
      expect(only(scanYamlSecrets('/w/a.fixture.yaml', yaml))).toHaveLength(1);
    });
  }

  it('finds a key escaped inside a JSON fixture string (\\u and \\/)', () => {
    const hook = ['https:\\/\\/hooks.slack.com\\/services\\/', 'T0123ABCD\\/B0123ABCD\\/', 'aB3dEf6hIj9kLm2nOp5qRs8t'].join('');
    const text = `{"slots": {"q": "\\u0073${openai.slice(1)}", "h": "${hook}"}}`;
    const got = only(scanSecrets('/w/a.fixture.json', text));
    expect(got.map((f) => f.message.split(' (')[0])).toEqual(['Looks like an OpenAI API key', 'Looks like a Slack webhook URL']);
  });

  it('an escaped backslash starts no escape', () => {
    // "C:\\x73k-proj-…" is a backslash and the text x73k-proj-…: no key.
    expect(scanSecrets('/w/a', `path: "C:\\\\x73${openai.slice(1)}"`)).toEqual([]);
  });

  it('the YAML value scan agrees on a key joined over several escaped line breaks', () => {
    const text = `q: "${openai.slice(0, 20)}\\\n   \\\n   ${openai.slice(20)}"\n`;
    const got = only(scanYamlSecrets('/w/a.fixture.yaml', parseYaml(text)));
    expect(got).toHaveLength(1);
    expect(leaks(got[0].message, openai)).toBe(false);
  });
});

describe('more credential formats', () => {
  const W = (...parts: string[]) => parts.join('');
  const fires: Array<[string, string, string, string?]> = [
    ['Slack app-level token', W('xapp-1-', 'A0123BCDEF9-', '1234567890123-', '0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f'), 'Slack app token'],
    ['Slack user token', W('xoxp-', '1234567890-1234567890-1234567890-', 'a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6'), 'Slack token'],
    ['Stripe live secret key', W('sk_live_', '51H8ZqKLm3N4o5P6q7R8s9T0u1V2w3X4y'), 'Stripe API key'],
    ['Stripe restricted key', W('rk_live_', '51H8ZqKLm3N4o5P6q7R8s9T0u1V2w3X4y'), 'Stripe API key'],
    ['AWS secret access key (YAML)', W('aws_secret_access_key: ', 'wJalrXUtnFEMI/K7MDENG/bPxRfiCY9Q2z8R4m1N'), 'AWS secret access key', W('wJalrXUtnFEMI/K7MDENG/bPxRfiCY9Q2z8R4m1N')],
    ['AWS secret access key (env)', W('AWS_SECRET_ACCESS_KEY=', 'wJalrXUtnFEMI/K7MDENG/bPxRfiCY9Q2z8R4m1N'), 'AWS secret access key', W('wJalrXUtnFEMI/K7MDENG/bPxRfiCY9Q2z8R4m1N')],
    ['AWS secret access key (JSON)', W('"SecretAccessKey": "', 'wJalrXUtnFEMI/K7MDENG/bPxRfiCY9Q2z8R4m1N', '"'), 'AWS secret access key', W('wJalrXUtnFEMI/K7MDENG/bPxRfiCY9Q2z8R4m1N')],
    ['AWS temporary key id', W('ASIA', 'Z7Q2XK4M9P3R8T1W'), 'AWS access key id'],
    ['GitHub fine-grained token', W('github_pat_', '11ABCDEFG0abcdefghijkl_9mNoPqRsTuVwXyZ123456'), 'GitHub token'],
    ['GitLab token', W('glpat-', 'a1B2c3D4e5F6g7H8i9J0'), 'GitLab token'],
    ['npm token', W('npm_', 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'), 'npm access token'],
    ['Hugging Face token', W('hf_', 'AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh'), 'Hugging Face token'],
    ['SendGrid key', W('SG.', 'a1B2c3D4e5F6g7H8i9J0k1', '.', 'L2m3N4o5P6q7R8s9T0u1V2w3X4y5Z6a7B8c9D0e1F2g'), 'SendGrid API key'],
    ['age secret key', W('AGE-SECRET-KEY-1', 'QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7LQPZRY9X8GF2TVDW0S3JN54KHCE'), 'age secret key'],
  ];
  for (const [name, text, label, secret = text] of fires) {
    it(`fires: ${name}, redacted`, () => {
      const got = only(scanSecrets('/w/a', `before ${text} after`));
      expect(got).toHaveLength(1);
      expect(got[0].message).toContain(label);
      expect(got[0].message).toContain(redactSecret(secret));
      expect(leaks(got[0].message, secret)).toBe(false);
    });
  }

  const silent: Array<[string, string]> = [
    ['a Stripe placeholder', 'sk_live_xxxxxxxxxxxxxxxxxxxxxxxx'],
    ['an AWS secret key name without a key', 'Set aws_secret_access_key: in your profile'],
    ['an AWS-named value that is too short', 'aws_secret_access_key: abc123'],
    ['words like xapp-', 'the xapp-launcher and sk_live_ prefixes'],
  ];
  for (const [name, text] of silent) {
    it(`stays silent: ${name}`, () => expect(only(scanSecrets('/w/a', text))).toEqual([]));
  }
});

describe('a text full of tokens', () => {
  it('is scanned in one pass: overlap checks do not compare every hit with every other', () => {
    const tok = (i: number) => ['ghp_', String(i).padStart(6, '0'), 'aB3dEf6hIj9kLm2nOp5qRs8tUv1wXy'].join('');
    const text = Array.from({ length: 20_000 }, (_, i) => tok(i)).join(' ');
    const got = scanSecrets('/w/a', text);
    expect(got).toHaveLength(20_000);
    expect(got[19_999].span.end).toBe(text.length);
  });
});

describe('no message carries a detected secret whole', () => {
  it('redactSecrets keeps only a prefix of each secret and cuts a private key to its header', () => {
    const text = `key ${openai} and\n${pem}\nend`;
    const out = redactSecrets(text);
    expect(leaks(out, openai)).toBe(false);
    for (const line of pemBody) expect(out).not.toContain(line);
    expect(out).toContain('-----BEGIN RSA PRIVATE KEY-----…');
    expect(out).toContain(redactSecret(openai));
    // A header alone (the scanner's own message) is left as it is.
    expect(redactSecrets('A private key block (-----BEGIN RSA PRIVATE KEY-----) would be sent')).toBe('A private key block (-----BEGIN RSA PRIVATE KEY-----) would be sent');
    expect(redactSecrets('nothing to see')).toBe('nothing to see');
  });

  it('a private key in a broken fixture is not printed in any fixture-invalid message', () => {
    const cases = [
      `slots:\n  ${pem.replace(/\n/g, ' ')}: 1\n  x: [\n`,
      `slots: ${pem.replace(/\n/g, ' ')}\n`,
      `%YAML ${pem.replace(/\n/g, ' ')}\n---\nslots: {}\n`,
      `${pem.replace(/\n/g, ' ')}: oops\n`,
      `slots:\n  q: x\n ${openai}\n`,
      `%YAML ${openai}\n---\nslots: {}\n`,
    ];
    for (const text of cases) {
      const all = [...parseFixture('/w/a.fixture.yaml', text).findings, ...parseConfig('/w/a.context.yaml', text.replace('slots:', 'filters:')).findings];
      expect(all.length, text).toBeGreaterThan(0);
      for (const f of all) {
        for (const line of pemBody) expect(f.message, text).not.toContain(line);
        expect(leaks(f.message, openai), f.message).toBe(false);
      }
    }
  });

  it('every finding built by the registry is redacted, related messages too', () => {
    const f = finding('config-invalid', '/w/a', { start: 0, end: 1 }, `Unknown key '${openai}'`, { related: [{ path: '/w/b', span: { start: 0, end: 0 }, message: `see ${openai}` }] });
    expect(leaks(f.message, openai)).toBe(false);
    expect(leaks(f.related![0].message, openai)).toBe(false);
  });
});

describe('a secret quoted in a message is redacted before the quote is cut short', () => {
  // Found by the fuzz suite (test/fuzz, analysis/secrets): messages quote user text cut to 40 or 60
  // characters; cut first, a secret is no longer recognised by the redaction that follows, and most
  // of it was shown. Each case below cuts a secret so that what is left matches no pattern.
  const npm = ['npm_', 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'].join('');
  const jwt = ['eyJ', 'hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9xYzAb', '.', 'eyJzdWIiOiIxMjM0NTY3ODkwIn0', '.', 'SflKxwRJSMeKKF2QT4fwpMeJf36P'].join('');
  const pieceOf = (s: string) => s.slice(8, 20);
  const shows = (fs: Finding[], s: string) => fs.some((f) => f.message.includes(pieceOf(s)));

  it('config: a label or an unknown key that is a token', () => {
    const label = parseConfig('/w/a.context.yaml', `slots:\n  q: { kind: user, label: " ${npm} " }\n`).findings;
    expect(label.length).toBeGreaterThan(0);
    expect(shows(label, npm)).toBe(false);
    const key = parseConfig('/w/a.context.yaml', `slots:\n  q: { kind: user }\n${npm} and more words: 1\n`).findings;
    expect(key.map((f) => f.message).join('\n')).toMatch(/Unknown key/);
    expect(shows(key, npm)).toBe(false);
  });

  it('YAML: a list written as a key becomes a plain key of its source text, redacted', () => {
    const doc = parseFixture('/w/a.fixture.yaml', `slots:\n  ? [ab, ${jwt}]\n  : 1\n`);
    const keys = Object.keys(doc.slots);
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(/^\[ab, /);
    expect(keys[0]).not.toContain(pieceOf(jwt));
  });

  it('hidden characters: tag text that spells a token', () => {
    const hidden = [...jwt].map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join('');
    const fs = scanHiddenCharacters('/w/a.prompt', `visible ${hidden} text`);
    expect(fs.map((f) => f.message).join('\n')).toMatch(/hidden tag text/);
    expect(shows(fs, jwt)).toBe(false);
  });

  it('templates: an unclosed dotprompt block or Jinja loop whose tag holds a token', () => {
    const prompt = parseTemplate('/w/a.prompt', `{{#if ${jwt}}}\nhello\n`).findings;
    expect(prompt.map((f) => f.rule)).toContain('template-invalid');
    expect(shows(prompt, jwt)).toBe(false);
    const prompty = parseTemplate('/w/a.prompty', `---\nname: x\n---\nsystem:\n{% for d in ${jwt} %}\nhello\n`).findings;
    expect(prompty.map((f) => f.rule)).toContain('template-invalid');
    expect(shows(prompty, jwt)).toBe(false);
  });
});

describe('Handlebars error excerpts', () => {
  // Found by the fuzz suite: Handlebars quotes 20 characters either side of a lexical error, so a
  // token before it lost its prefix (`...aaaa1aI_B`) and passed the redaction of the message.
  const glpat = ['glpat-', 'k3J9xQ2mW7vB4nT8cR1z'].join('');
  it('a template or partial parse error shows no piece of a secret near it', () => {
    const source = `---\nmodel: gpt-4o\n---\n  ${glpat} \u0000 {{#if}} {{/each}}`;
    const r = renderDotprompt(`${glpat}${glpat} \u0000 ---\nmodel: x\n---\n{{x`, { input: {} });
    const partial = renderDotprompt('{{> bad}}', { input: {} }, { partials: { bad: `${glpat}${glpat} {{x` } });
    for (const res of [r, partial, renderDotprompt(source, { input: {} })]) {
      expect(res.issues.length).toBeGreaterThan(0);
      for (const i of res.issues) expect(i.message).not.toContain(glpat.slice(8, 18));
    }
    expect(r.issues[0].message).toMatch(/error/i);
  });

  it('redactQuoted masks pieces of a source secret and leaves other text alone', () => {
    const src = `x ${glpat} y`;
    expect(redactQuoted(`...${glpat.slice(10)} near`, src)).toBe('...… near');
    expect(redactQuoted('nothing secret here', src)).toBe('nothing secret here');
    expect(redactQuoted(`whole ${glpat}`, src)).not.toContain(glpat.slice(8));
  });
});

describe('quick fix titles', () => {
  // Found by the fuzz suite: a slot named with a token got "Add 'trust: untrusted' to slot '<token>'".
  it('are redacted like messages', () => {
    const hook = ['https://hooks.slack.com/services/', '1KvV/4GrHcB4nu6t9htjDU19Zs60xLfbKyAN6rHaR3hX6NxGHzg'].join('');
    const f = finding('trust-missing', '/w/a', { start: 0, end: 1 }, 'Slot has no trust.', { fixes: [{ title: `Add 'trust: untrusted' to slot 'x ${hook} y'`, edits: [{ path: '/w/a', span: { start: 0, end: 0 }, newText: 'trust: untrusted' }] }] });
    expect(f.fixes![0].title).not.toContain(hook.slice(40));
    expect(f.fixes![0].title).toContain("Add 'trust: untrusted' to slot 'x https://hooks.");
    expect(f.fixes![0].edits[0].newText).toBe('trust: untrusted');
  });
});

describe('pieces of a secret that YAML splits over keys and values', () => {
  // Found by the fuzz suite: a private key pasted into a fixture at the wrong indentation made its
  // key material (without the BEGIN header) a mapping key, quoted whole by "Unknown key '…'".
  const body = ['MIIEowIBAAKCAQEAx4v2kq9T0cZ3Yw8Vu7Ts6Rq5', 'Po4Nm3Lk2Ji1Hg0Fe9Dc8Ba7Zx9Yw8Vu7Ts6Rq5'];
  const block = `  -----BEGIN RSA PRIVATE KEY-----\n${body.join('\n')}\n-----END RSA PRIVATE KEY-----  slots`;
  it('a fixture: the unknown key shows none of the key material', () => {
    const text = `name: "x"\n${block}:\n  q: 1\n`;
    const fs = parseFixture('/w/a.fixture.yaml', text).findings;
    expect(fs.some((f) => f.message.includes('Unknown key'))).toBe(true);
    for (const f of fs) for (const line of body) expect(f.message).not.toContain(line.slice(5, 20));
  });
  it('a config: the same', () => {
    // Commented-out header and footer, the key material left as a key.
    const text = `window: 1000\n# -----BEGIN RSA PRIVATE KEY-----\n${body[0]}: 1\n# -----END RSA PRIVATE KEY-----\n`;
    const fs = parseConfig('/w/a.context.yaml', text).findings;
    expect(fs.some((f) => f.message.includes('Unknown key'))).toBe(true);
    expect(fs.length).toBeGreaterThan(0);
    for (const f of fs) expect(f.message).not.toContain(body[0].slice(5, 20));
  });
});

describe('a Jinja tag that quotes a secret in its message', () => {
  it('is redacted before it is cut (an unterminated comment quoted the first 40 characters)', () => {
    // A Twilio key is exactly 32 hex digits after SK: cut at the 40th character of the tag, it was no longer one.
    const twilio = ['SK', '9f3b2c7d1e8a4f6b', '0c5d9e2a7b3f1c8d'].join('');
    for (const [lead, secret] of [['', openai], ['key = ', openai], ['api key ', twilio], ['twilio key: ', twilio]] as const) {
      const text = `---\nmodel:\n  api: chat\n---\nuser:\n{# ${lead}${secret} and more words after it\n`;
      const d = parseTemplate('/w/leak.prompty', text);
      const f = d.findings.filter((x) => /Unterminated/.test(x.message));
      expect(f.length, lead).toBe(1);
      expect(leaks(f[0].message, secret), f[0].message).toBe(false);
      expect(f[0].message).not.toContain(secret.slice(0, 12));
    }
  });
});
