// An owner sees their team's flag, opens its receipts and acknowledges it.
// scripts/test prepares a stopped consumer group per run (SK_GROUP) owned by
// the owner's team, on a broker the console watches, and waits until its
// flag is raised.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { BASE, JS, MODE, flash, hydrated, launch, post } from '../support.mjs';

const OWNER = process.env.SK_OWNER_USER;
const PW = process.env.SK_OWNER_PASSWORD;
const GROUP = process.env.SK_GROUP;

let browser;
before(async () => {
  browser = await launch();
});
after(async () => browser?.close());

test(`${MODE}: an owner sees their flag, opens its receipts and acknowledges it`, { skip: !OWNER && 'no flag fixture' }, async () => {
  const context = await browser.newContext({ javaScriptEnabled: JS });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(e.message));
  await page.goto(`${BASE}/flags`);
  await page.fill('input[name="username"]', OWNER);
  await page.fill('input[name="password"]', PW);
  await Promise.all([page.waitForNavigation(), page.click('form[action="/login"] button[type="submit"]')]);
  await hydrated(page);
  assert.equal(new URL(page.url()).pathname, '/flags');

  // The filter in use is marked.
  assert.equal(await page.textContent('nav.ranges a[aria-current="page"]'), 'My teams, open');
  const row = page.locator('table[data-testid="flags"] tr', { hasText: GROUP });
  assert.equal(await row.count(), 1, 'the flag is in My flags');
  assert.match(await row.textContent(), /STOP/);
  // The row links as a whole: a click on its reason opens the flag.
  const why = await row.locator('td').last().boundingBox();
  await Promise.all([page.waitForNavigation(), page.mouse.click(why.x + why.width / 2, why.y + why.height / 2)]);
  await hydrated(page);

  assert.equal(await page.textContent('[data-testid="flag-kind"]'), 'STOP');
  assert.match(await page.textContent('[data-testid="flag-reason"]'), /no progress/);
  const receipts = await page.textContent('[data-testid="receipts"]');
  assert.match(receipts, /Rule: windowed lag status/);
  assert.match(receipts, /Sampled at/);
  // Receipts are rewritten when the trouble changes: the page says of when.
  assert.match(await page.textContent('[data-testid="receipts-as-of"]'), /Receipts of the pass at .* at least every 20 passes/);
  assert.equal(await page.textContent('[data-testid="flag-state"]'), 'open');

  const ack = 'form[data-testid="acknowledge"] button[type="submit"]';
  await post(page, ack);
  assert.match(await flash(page), /acknowledged\./);
  await page.waitForFunction(
    () => document.querySelector('[data-testid="flag-state"]')?.textContent === 'acknowledged',
  );
  assert.match(await page.textContent('section.card dl'), new RegExp(`by ${OWNER}`));
  await context.close();
  assert.deepEqual(problems, []);
});
