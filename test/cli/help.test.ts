/**
 * `ctxlens <command> --help` lists every option the command accepts, one line each with what it
 * does, and every option it lists is one the command's parser takes: the built CLI as a subprocess.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMAND_OPTIONS } from '../../src/cli/options';
import { SERVE_OPTIONS } from '../../src/service/run';

const CLI = resolve(__dirname, '../../dist/cli.js');
const cwd = mkdtempSync(join(tmpdir(), 'ctxlens-help-'));

function ctxlens(args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('every command --help', () => {
  for (const [command, options] of Object.entries({ ...COMMAND_OPTIONS, serve: SERVE_OPTIONS })) {
    it(`${command}: every option, one line each, each accepted by the command`, () => {
      const help = ctxlens([command, '--help']);
      expect(help.code).toBe(0);
      const lines = help.stdout.split('\n');
      for (const [name, spec] of Object.entries(options)) {
        const line = lines.find((l) => new RegExp(`^\\s+--${name}(\\s|$)`).test(l));
        expect(line, `--${name} in ${command} --help`).toBeDefined();
        expect(line).toContain(spec.help);
        // The parser knows it: an unknown option after it is the one refused.
        const r = ctxlens([command, `--${name}`, ...(spec.type === 'string' ? ['x'] : []), '--no-such-option-zz']);
        expect(r.code).toBe(2);
        expect(r.stderr).toContain('--no-such-option-zz');
        expect(r.stderr).not.toMatch(new RegExp(`Unknown option '--${name}'`));
      }
      expect(lines.some((l) => /^\s+-h, --help\s/.test(l))).toBe(true);
    });
  }

  it('serve lists every option of its usage line', () => {
    const help = ctxlens(['serve', '--help']);
    expect(help.code).toBe(0);
    const usage = help.stdout.slice(0, help.stdout.indexOf('\nOptions:'));
    const listed = help.stdout.slice(help.stdout.indexOf('\nOptions:'));
    const flags = [...new Set([...usage.matchAll(/\[(--[a-z-]+)/g)].map((m) => m[1]))];
    expect(flags.length).toBeGreaterThan(10);
    for (const f of flags) expect(listed).toMatch(new RegExp(`^\\s+${f}(\\s|$)`, 'm'));
  });
});
