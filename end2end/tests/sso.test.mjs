// Single sign-on in a real headless Chromium against a real OpenID Connect
// provider (oidc-provider-mock, started by scripts/test), with JavaScript
// off and hydrated: "Sign in with <provider>" on the sign-in page, the
// provider's own form, back at the console as the team and role the
// groups map to; a group removed at the provider removes the role at the
// next sign-in.
import { test, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const BASE = process.env.SK_URL;
const ISSUER = process.env.SK_OIDC_ISSUER;
const JS = process.env.SK_JS !== 'off';
const MODE = JS ? 'js' : 'nojs';
if (!BASE || !ISSUER) {
  throw new Error('SK_URL and SK_OIDC_ISSUER must be set (scripts/test sets them)');
}
const SUB = `sso-user-${MODE}`;

let browser;
let context;
let page;
let problems;

before(async () => {
  browser = await chromium.launch({
    executablePath: process.env.SK_CHROMIUM || '/usr/bin/chromium',
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
  });
});

after(async () => {
  await browser?.close();
});

beforeEach(async () => {
  context = await browser.newContext({ javaScriptEnabled: JS });
  page = await context.newPage();
  problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    // Only the console's own pages: the provider's are not ours to judge.
    if (m.type() === 'error' && page.url().startsWith(BASE)) problems.push(`console: ${m.text()}`);
  });
});

afterEach(async () => {
  await context?.close();
  assert.deepEqual(problems.filter((p) => !p.includes('status of 40')), []);
});

async function hydrated() {
  if (JS) await page.waitForSelector('body[data-hydrated="true"]', { timeout: 15000 });
}

/** Sets the user's claims at the provider, through its own API. */
async function atProvider(groups) {
  const r = await fetch(`${ISSUER}/users/${SUB}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ preferred_username: SUB, name: `SSO ${MODE}`, groups }),
  });
  assert.equal(r.status, 204);
}

/** From the sign-in page through the provider's form and back. */
async function signInThroughProvider(next) {
  await page.goto(BASE + (next ? `/login?next=${encodeURIComponent(next)}` : '/login'));
  await hydrated();
  const button = page.locator('[data-testid="sso-sign-in"]');
  assert.match(await button.textContent(), /Sign in with Test IdP/);
  await Promise.all([page.waitForURL((u) => u.href.startsWith(ISSUER)), button.click()]);
  await page.fill('input[name="sub"]', SUB);
  await Promise.all([
    page.waitForURL((u) => u.href.startsWith(BASE) && !u.pathname.startsWith('/login')),
    page.click('button[type="submit"]:has-text("Authorize")'),
  ]);
  await hydrated();
}

async function me() {
  const r = await page.goto(BASE + '/api/v1/me');
  assert.equal(r.status(), 200);
  return JSON.parse(await r.text());
}

test(`${MODE}: signing in through the identity provider lands as the mapped team and role`, async () => {
  await atProvider(['team-payments']);
  await signInThroughProvider('/flags');
  assert.equal(new URL(page.url()).pathname, '/flags');
  const who = await me();
  assert.equal(who.principal.username, SUB);
  assert.deepEqual(who.principal.roles, ['viewer', 'owner']);
  assert.deepEqual(who.teams.map((t) => t.name), ['payments']);

  // The group removed at the provider: the role and the team go at the
  // next sign-in.
  await atProvider([]);
  await context.clearCookies();
  await signInThroughProvider();
  const after = await me();
  assert.deepEqual(after.principal.roles, ['viewer']);
  assert.deepEqual(after.teams, []);
});

test(`${MODE}: a refusal at the provider brings the person back with a reason`, async () => {
  await page.goto(BASE + '/login');
  await hydrated();
  await Promise.all([
    page.waitForURL((u) => u.href.startsWith(ISSUER)),
    page.click('[data-testid="sso-sign-in"]'),
  ]);
  await Promise.all([
    page.waitForURL((u) => u.href.startsWith(BASE + '/login')),
    page.click('button[name="action"][value="deny"]'),
  ]);
  await hydrated();
  assert.match(await page.textContent('[data-testid="sso-error"]'), /did not sign you in/);
});
