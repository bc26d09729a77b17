// A TOTP second factor in a real headless Chromium: a user enrols on the
// account page (reading the key the page shows and computing the codes here,
// RFC 6238 with node:crypto), signs out, and signs in with password + code.
// scripts/test runs this file twice: SK_JS=off and SK_JS=on, each with its own
// user (SK_TOTP_USER), since an enrolment cannot be undone by the other run.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { BASE, JS, MODE, hydrated, launch, post } from '../support.mjs';

const USER = process.env.SK_TOTP_USER;
const PASSWORD = process.env.SK_TOTP_PASSWORD;
if (!BASE || !USER || !PASSWORD) {
  throw new Error('SK_URL, SK_TOTP_USER and SK_TOTP_PASSWORD must be set (scripts/test sets them)');
}

const STEP = 30;

function base32(text) {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = 0;
  let value = 0;
  const out = [];
  for (const c of text.replace(/[\s=]/g, '').toUpperCase()) {
    const i = alphabet.indexOf(c);
    if (i < 0) throw new Error(`not base32: ${c}`);
    value = ((value << 5) | i) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

// RFC 6238 with HMAC-SHA1 and 6 digits (RFC 4226's dynamic truncation).
function totp(secret, step) {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(step));
  const h = createHmac('sha1', base32(secret)).update(counter).digest();
  const o = h[h.length - 1] & 0x0f;
  const n = ((h[o] & 0x7f) << 24) | (h[o + 1] << 16) | (h[o + 2] << 8) | h[o + 3];
  return String(n % 1_000_000).padStart(6, '0');
}

const nowStep = () => Math.floor(Date.now() / 1000 / STEP);
let lastStep = -1;

// A code the server has not accepted yet: each step's code works once, and
// the server accepts one step either side of now.
async function nextCode(secret) {
  let step = Math.max(nowStep(), lastStep + 1);
  while (step > nowStep() + 1) {
    await new Promise((r) => setTimeout(r, 1000));
  }
  lastStep = step;
  return totp(secret, step);
}

let browser;

before(async () => {
  browser = await launch();
});

after(async () => {
  await browser?.close();
});

async function session() {
  const context = await browser.newContext({ javaScriptEnabled: JS });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().includes('status of 40')) problems.push(`console: ${m.text()}`);
  });
  const open = async (path) => {
    await page.goto(BASE + path);
    await hydrated(page);
  };
  const path = () => {
    const u = new URL(page.url());
    return u.pathname + u.search;
  };
  // A full page load in both modes: the sign-in forms are plain forms.
  const submit = async (selector) => {
    await Promise.all([page.waitForNavigation(), page.click(selector)]);
    await hydrated(page);
  };
  // An ActionForm: hydrated, it stays on the page and `done` appears;
  // without JavaScript, the post redirects back and the page is rendered again.
  const act = async (form, done) => {
    await post(page, `${form} button[type="submit"]`);
    await page.waitForSelector(done, { timeout: 15000 });
  };
  return { context, page, problems, open, path, submit, act };
}

test('the RFC 6238 helper gives the RFC test vector', () => {
  // RFC 6238 Appendix B, SHA-1, T = 59 s: 94287082, whose last 6 digits
  // are what a 6-digit code shows.
  assert.equal(totp('GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ', Math.floor(59 / STEP)), '287082');
});

test(`${MODE}: a user enrols a second factor and signs in with password and code`, async () => {
  const s = await session();
  const { page } = s;
  await s.open('/login');
  await page.fill('input[name="username"]', USER);
  await page.fill('input[name="password"]', PASSWORD);
  await s.submit('form[action="/login"] button[type="submit"]');
  assert.equal(s.path(), '/');

  // The header's name leads to the account page.
  assert.equal(await page.getAttribute('[data-testid="signed-in-user"]', 'href'), '/account');
  await s.open('/account');
  assert.equal(await page.textContent('h1'), 'Your account');
  await s.act('form[data-testid="start-second-factor"]', '[data-testid="totp-secret"]');
  const secret = (await page.textContent('[data-testid="totp-secret"]')).trim();
  assert.match(secret, /^[A-Z2-7]{32}$/);
  const codes = await page.$$eval('[data-testid="recovery-codes"] li', (li) => li.map((l) => l.textContent.trim()));
  assert.equal(codes.length, 10);

  // A wrong code does not turn it on; the right one does.
  await page.fill('form[data-testid="confirm-second-factor"] input[name="code"]', '000000');
  await s.act('form[data-testid="confirm-second-factor"]', '[role="alert"]');
  assert.match(await page.textContent('[role="alert"]'), /not accepted/);
  await page.fill('form[data-testid="confirm-second-factor"] input[name="code"]', await nextCode(secret));
  await s.act('form[data-testid="confirm-second-factor"]', '[data-testid="second-factor-on"]');
  assert.match(await page.textContent('[data-testid="second-factor-on"]'), /10 recovery codes left/);
  assert.equal(await page.$('[data-testid="totp-secret"]'), null, 'the key is not shown again');

  await s.submit('text=Sign out');
  assert.equal(s.path(), '/login');

  // Password first, then the code page; the session is not signed in between.
  await s.open('/login?next=%2Fstreams');
  await page.fill('input[name="username"]', USER);
  await page.fill('input[name="password"]', PASSWORD);
  await s.submit('form[action="/login"] button[type="submit"]');
  assert.equal(s.path(), '/login/code?next=%2Fstreams');
  await page.fill('input[name="code"]', '123456');
  await s.submit('form[action="/login/code"] button[type="submit"]');
  assert.match(s.path(), /^\/login\/code\?error=1/);
  assert.match(await page.textContent('[data-testid="code-error"]'), /not right/);
  await page.fill('input[name="code"]', await nextCode(secret));
  await s.submit('form[action="/login/code"] button[type="submit"]');
  assert.equal(s.path(), '/streams');
  assert.ok(await page.isVisible('[data-testid="signed-in-user"]'));
  await s.context.close();

  // A recovery code signs in too, in a fresh browser.
  const r = await session();
  await r.open('/login');
  await r.page.fill('input[name="username"]', USER);
  await r.page.fill('input[name="password"]', PASSWORD);
  await r.submit('form[action="/login"] button[type="submit"]');
  await r.page.fill('input[name="code"]', codes[0]);
  await r.submit('form[action="/login/code"] button[type="submit"]');
  assert.equal(r.path(), '/');
  await r.open('/account');
  assert.match(await r.page.textContent('[data-testid="second-factor-on"]'), /9 recovery codes left/);
  await r.context.close();
  assert.deepEqual([...s.problems, ...r.problems], []);
});
