/**
 * The deployment files of deploy/: the image's entrypoint run as a script (`sh deploy/entrypoint.sh`)
 * against the built CLI, configured by the environment as a container is (templates folder, token
 * file, allowed host names, port); its `healthcheck` mode; its refusals (no templates, no token);
 * SIGTERM reaching the service through `exec`. The Kubernetes manifest parses, has the probes, the
 * Secret-mounted token, the read-only root file system and the autoscaler, uses only variables the
 * entrypoint reads, and is the one docs/service.md shows. No image is built here (no base image on
 * the machines): the Containerfile is checked for what the image promises.
 */
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../lsp/harness';
import { CLI, ensureCliBuilt } from './harness';

const ENTRYPOINT = path.join(REPO, 'deploy', 'entrypoint.sh');
const TOKEN = 'd41d8cd98f00b204e9800998ecf8427e';
let tmp: string;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** The container's environment, pointing at the repository's CLI and this test's files. */
const env = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH,
  CTXLENS_CLI: CLI,
  CTXLENS_NODE: process.execPath,
  CTXLENS_ROOT: path.join(tmp, 'prompts'),
  CTXLENS_TOKEN_FILE: path.join(tmp, 'token'),
  CTXLENS_HOST: '127.0.0.1',
  ...extra,
});

const healthcheck = (port: number) => spawnSync('sh', [ENTRYPOINT, 'healthcheck'], { env: env({ CTXLENS_PORT: String(port) }), encoding: 'utf8', timeout: 30_000 });

beforeAll(() => {
  ensureCliBuilt();
  tmp = mkdtempSync(path.join(tmpdir(), 'ctxlens-deploy-'));
  cpSync(path.join(REPO, 'examples', 'sdk-qa'), path.join(tmp, 'prompts', 'sdk-qa'), { recursive: true });
  writeFileSync(path.join(tmp, 'token'), `${TOKEN}\n`);
});

afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('deploy/entrypoint.sh', () => {
  it('starts ctxlens serve from the environment: token required, allowed host names, healthcheck, drain on SIGTERM', async () => {
    const port = await freePort();
    const proc: ChildProcess = spawn('sh', [ENTRYPOINT], { env: env({ CTXLENS_PORT: String(port), CTXLENS_ALLOW_HOSTS: 'ctxlens ctxlens.default.svc' }), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    proc.stderr!.on('data', (d) => (err += String(d)));
    const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no listening line within 30 s: ${err}`)), 30_000);
        proc.stdout!.on('data', (d) => {
          out += String(d);
          if (out.includes('\n')) {
            clearTimeout(timer);
            resolve();
          }
        });
        void exited.then((code) => reject(new Error(`exited with ${code}: ${err}`)));
      });
      expect(out).toBe(`listening on http://127.0.0.1:${port}\n`);
      const base = `http://127.0.0.1:${port}`;
      const body = JSON.stringify({ template: 'sdk-qa/sdk-qa.prompt', query: 'Does 4.2 retry?', slots: { policy: 'p' } });
      expect((await fetch(`${base}/v1/context`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).status).toBe(401);
      const ok = await fetch(`${base}/v1/context`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` }, body });
      expect(ok.status).toBe(200);
      // A name from CTXLENS_ALLOW_HOSTS is accepted in Host; another name is not.
      const named = await new Promise<number>((resolve, reject) => {
        const s = net.connect(port, '127.0.0.1', () => s.write(`GET /healthz HTTP/1.1\r\nhost: ctxlens.default.svc:${port}\r\nconnection: close\r\n\r\n`));
        let got = '';
        s.on('data', (d) => (got += String(d)));
        s.on('end', () => resolve(Number(/^HTTP\/1\.1 (\d+)/.exec(got)?.[1])));
        s.on('error', reject);
      });
      expect(named).toBe(200);
      expect(healthcheck(port).status).toBe(0);
      proc.kill('SIGTERM');
      // exec: the signal reached the service, which drained and ended with 0.
      expect(await exited).toBe(0);
    } finally {
      if (proc.exitCode === null) proc.kill('SIGKILL');
    }
    expect(out + err).not.toContain(TOKEN);
    // Nothing listens any more: the health check fails.
    expect(healthcheck(port).status).toBe(1);
  }, 90_000);

  it('refuses to start without the templates folder or the token, without printing the token', () => {
    const noRoot = spawnSync('sh', [ENTRYPOINT], { env: env({ CTXLENS_ROOT: path.join(tmp, 'nope') }), encoding: 'utf8', timeout: 30_000 });
    expect(noRoot.status).toBe(2);
    expect(noRoot.stderr).toMatch(/the templates folder .* does not exist/);
    const noToken = spawnSync('sh', [ENTRYPOINT], { env: env({ CTXLENS_TOKEN_FILE: path.join(tmp, 'none') }), encoding: 'utf8', timeout: 30_000 });
    expect(noToken.status).toBe(2);
    expect(noToken.stderr).toMatch(/no bearer token at/);
    const badPort = spawnSync('sh', [ENTRYPOINT], { env: env({ CTXLENS_PORT: '80; rm -rf /' }), encoding: 'utf8', timeout: 30_000 });
    expect(badPort.status).toBe(2);
    const storeless = spawnSync('sh', [ENTRYPOINT], { env: env({ CTXLENS_STORE_PASSWORD_FILE: path.join(tmp, 'token') }), encoding: 'utf8', timeout: 30_000 });
    expect(storeless.status).toBe(2);
    expect(storeless.stderr).toMatch(/without CTXLENS_STORE_URL/);
    for (const r of [noRoot, noToken, badPort, storeless]) expect(r.stdout + r.stderr).not.toContain(TOKEN);
  });
});

describe('deploy/kubernetes.yaml', () => {
  const text = readFileSync(path.join(REPO, 'deploy', 'kubernetes.yaml'), 'utf8');
  const docs = parseAllDocuments(text).map((d) => {
    expect(d.errors).toEqual([]);
    return d.toJS() as Record<string, any>;
  });
  const byKind = (kind: string, name: string) => docs.find((d) => d.kind === kind && d.metadata?.name === name);

  it('has the Deployment with probes on /healthz, the token from a Secret, a read-only root, and the Service, HPA and Redis', () => {
    const dep = byKind('Deployment', 'ctxlens')!;
    const c = dep.spec.template.spec.containers[0];
    expect(c.readinessProbe.httpGet.path).toBe('/healthz');
    expect(c.livenessProbe.httpGet.path).toBe('/healthz');
    expect(c.securityContext.readOnlyRootFilesystem).toBe(true);
    expect(dep.spec.template.spec.securityContext.runAsNonRoot).toBe(true);
    const env = Object.fromEntries((c.env as Array<{ name: string; value: string }>).map((e) => [e.name, e.value]));
    const secrets = dep.spec.template.spec.volumes.find((v: any) => v.secret);
    const mount = c.volumeMounts.find((m: any) => m.name === secrets.name);
    expect(env.CTXLENS_TOKEN_FILE.startsWith(mount.mountPath + '/')).toBe(true);
    expect(c.volumeMounts.find((m: any) => m.mountPath === env.CTXLENS_ROOT).readOnly).toBe(true);
    expect(env.CTXLENS_STORE_URL).toMatch(/^redis:\/\/ctxlens-redis:6379\/\d+$/);
    // Every variable the manifest sets is one the entrypoint reads.
    const entry = readFileSync(ENTRYPOINT, 'utf8');
    for (const name of Object.keys(env)) expect(entry, name).toMatch(new RegExp(`^#\\s+${name}\\s`, 'm'));
    expect(byKind('Service', 'ctxlens')!.spec.ports[0].port).toBe(8710);
    const hpa = byKind('HorizontalPodAutoscaler', 'ctxlens')!;
    expect(hpa.spec.scaleTargetRef.name).toBe('ctxlens');
    expect(hpa.spec.metrics[0].resource.name).toBe('cpu');
    expect(c.resources.requests.cpu).toBeDefined();
    expect(byKind('Deployment', 'ctxlens-redis')).toBeDefined();
    expect(byKind('Service', 'ctxlens-redis')!.spec.ports[0].port).toBe(6379);
  });

  it('is the manifest docs/service.md shows', () => {
    const doc = readFileSync(path.join(REPO, 'docs', 'service.md'), 'utf8');
    const m = /<!-- deploy\/kubernetes\.yaml -->\n```yaml\n([\s\S]*?)```/.exec(doc);
    expect(m?.[1]).toBe(text);
  });
});

describe('deploy/Containerfile', () => {
  const file = readFileSync(path.join(REPO, 'deploy', 'Containerfile'), 'utf8');
  it('runs the entrypoint as a numeric non-root user with a HEALTHCHECK on /healthz', () => {
    const user = /^USER (\d+)(?::(\d+))?$/m.exec(file);
    expect(Number(user?.[1])).toBeGreaterThan(0);
    expect(file).toMatch(/^HEALTHCHECK .*CMD \["\/app\/entrypoint\.sh", "healthcheck"\]$/m);
    expect(file).toMatch(/^ENTRYPOINT \["\/app\/entrypoint\.sh"\]$/m);
    expect(file).toMatch(/^COPY --chmod=0555 deploy\/entrypoint\.sh \/app\/entrypoint\.sh$/m);
    // The CLI path the entrypoint uses by default is where the image installs the package.
    expect(readFileSync(ENTRYPOINT, 'utf8')).toContain('/app/node_modules/context-lens/dist/cli.js');
    expect(file).toMatch(/--prefix \/app /);
  });
});
