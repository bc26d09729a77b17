// An owner sees their team's flag, opens its receipts and acknowledges it.
// scripts/test prepares a stopped consumer group per run (SK_GROUP) owned by
// the owner's team, on a broker the console watches, and waits until its
// flag is raised. A connector's flag shows its trace: scripts/test
// (connect_fixture) seeds the Connect double with SK_FAILING_CONNECTOR, a
// sink whose only task fails with a trace after every restart.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { BASE, JS, MODE, flash, hydrated, launch, post, signedInAs } from '../support.mjs';

const OWNER = process.env.SK_OWNER_USER;
const PW = process.env.SK_OWNER_PASSWORD;
const GROUP = process.env.SK_GROUP;
const ADMIN = process.env.SK_ADMIN_USER;
const ADMIN_PW = process.env.SK_ADMIN_PASSWORD;
const FAILING = process.env.SK_FAILING_CONNECTOR;

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

test(`${MODE}: a connector flag's page shows the failed task's trace, the restart and a link to the connector`,
  { skip: !(FAILING && ADMIN) && 'no failing connector fixture' }, async () => {
    const problems = [];
    const { context, page } = await signedInAs(browser, problems, '/flags?scope=all', ADMIN, ADMIN_PW);
    assert.equal(new URL(page.url()).pathname, '/flags');
    // The Connect routine reads the double every 5 s: wait for its flag.
    const row = page.locator('table[data-testid="flags"] tr', { hasText: FAILING });
    for (let i = 0; i < 60 && (await row.count()) === 0; i += 1) {
      await page.waitForTimeout(1000);
      await page.goto(`${BASE}/flags?scope=all`);
      await hydrated(page);
    }
    assert.equal(await row.count(), 1, `${FAILING}'s flag is listed`);
    assert.match(await row.textContent(), /FAILED/);
    await Promise.all([page.waitForNavigation(), row.locator('a').first().click()]);
    await hydrated(page);

    assert.equal(await page.textContent('[data-testid="flag-kind"]'), 'FAILED');
    const receipts = await page.textContent('[data-testid="receipts"]');
    assert.doesNotMatch(receipts, /Rule: ;/, 'no empty group rule');
    assert.doesNotMatch(receipts, /null/, 'no missing value shown as null');
    assert.match(receipts, new RegExp(`Connector ${FAILING} on Connect cluster`));
    assert.match(await page.textContent('[data-testid="receipts-trace"]'), /ConnectException: Unable to write to bucket/);
    assert.match(await page.textContent('[data-testid="receipts-restart"]'),
      new RegExp(`^POST http://.*/connectors/${FAILING}/restart\\?includeTasks=true&onlyFailed=true$`));
    const link = await page.getAttribute('a[data-testid="receipts-connector"]', 'href');
    assert.match(link, new RegExp(`/connector\\?connect=.*&name=${FAILING}$`));
    await context.close();
    assert.deepEqual(problems, []);
  });
