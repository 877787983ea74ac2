#!/usr/bin/env node
// Posts the Markdown of `ctxlens report --format markdown` as a pull-request comment, or updates
// the comment an earlier run posted: the Action's `report: true` step runs it, so a pull request
// carries one report comment however often it is pushed to. The comment is found by the marker
// the report starts with (`<!-- ctxlens-report -->`), at the start of the body, so a reply that
// quotes the report is never taken for it.
//
//   node scripts/report-comment.mjs <report.md>
//
// Environment (set by GitHub Actions, except the token and the number):
//   GITHUB_API_URL     the REST API's base URL (https://api.github.com, or a GHES or test server)
//   GITHUB_REPOSITORY  owner/name
//   GITHUB_TOKEN       the job's token (needs `pull-requests: write`); never printed
//   CTXLENS_PR         the pull request's number; else read from the event at GITHUB_EVENT_PATH
// Exit 0 when the comment was created or updated (or there is no pull request to comment on), 1
// when the API refuses, 2 on missing input.
import { readFileSync } from 'node:fs';

const MARKER = '<!-- ctxlens-report -->';
/** GitHub refuses longer comment bodies. */
const MAX_BODY = 65_536;
/** Pages of 100 comments looked through for the earlier report. */
const MAX_PAGES = 30;

function fail(code, message) {
  process.stderr.write(`report-comment: ${message}\n`);
  process.exit(code);
}

const file = process.argv[2];
if (!file) fail(2, 'usage: node scripts/report-comment.mjs <report.md>');
let body;
try {
  body = readFileSync(file, 'utf8');
} catch (e) {
  fail(2, `cannot read ${file}: ${e.message}`);
}
if (!body.startsWith(MARKER)) body = `${MARKER}\n${body}`;
if (body.length > MAX_BODY) body = body.slice(0, MAX_BODY - 200) + '\n\n… (cut to fit a comment; the full report is in the job summary)\n';

const api = (process.env.GITHUB_API_URL || 'https://api.github.com').replace(/\/+$/, '');
const repo = process.env.GITHUB_REPOSITORY ?? '';
const token = process.env.GITHUB_TOKEN ?? '';
if (!/^[\w.-]+\/[\w.-]+$/.test(repo)) fail(2, 'GITHUB_REPOSITORY must be owner/name');
if (!token) fail(2, 'GITHUB_TOKEN is empty (pass the job token: github-token: ${{ github.token }})');

let pr = process.env.CTXLENS_PR ?? '';
if (!pr && process.env.GITHUB_EVENT_PATH) {
  try {
    const event = JSON.parse(readFileSync(process.env.GITHUB_EVENT_PATH, 'utf8'));
    pr = String(event.pull_request?.number ?? event.issue?.number ?? '');
  } catch {
    // No readable event: there is no pull request to comment on.
  }
}
if (!pr) {
  process.stdout.write('report-comment: not a pull request, no comment posted\n');
  process.exit(0);
}
if (!/^\d+$/.test(pr)) fail(2, `the pull request number '${pr}' is not a number`);

async function call(method, path, payload) {
  const res = await fetch(`${api}${path}`, {
    method,
    headers: {
      Accept: 'application/vnd.github+json',
      Authorization: `Bearer ${token}`,
      'X-GitHub-Api-Version': '2022-11-28',
      'User-Agent': 'context-lens-report',
      ...(payload ? { 'Content-Type': 'application/json' } : {}),
    },
    ...(payload ? { body: JSON.stringify(payload) } : {}),
  });
  const text = await res.text();
  if (!res.ok) {
    let message = text.slice(0, 300);
    try {
      message = JSON.parse(text).message ?? message;
    } catch {
      // not JSON: the start of the text says enough
    }
    fail(1, `${method} ${path}: HTTP ${res.status} ${message}`);
  }
  return text ? JSON.parse(text) : undefined;
}

async function findEarlier() {
  for (let page = 1; page <= MAX_PAGES; page++) {
    const list = await call('GET', `/repos/${repo}/issues/${pr}/comments?per_page=100&page=${page}`);
    if (!Array.isArray(list)) return undefined;
    const hit = list.find((c) => typeof c?.body === 'string' && c.body.startsWith(MARKER));
    if (hit) return hit;
    if (list.length < 100) return undefined;
  }
  return undefined;
}

const earlier = await findEarlier();
if (earlier) {
  const c = await call('PATCH', `/repos/${repo}/issues/comments/${earlier.id}`, { body });
  process.stdout.write(`report-comment: updated comment ${c?.id ?? earlier.id} on #${pr}\n`);
} else {
  const c = await call('POST', `/repos/${repo}/issues/${pr}/comments`, { body });
  process.stdout.write(`report-comment: created comment ${c?.id ?? ''} on #${pr}\n`);
}
