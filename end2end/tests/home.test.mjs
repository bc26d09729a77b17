// Each role's home, on the run's data: the admin's lists open trouble and
// never says all is well while a consumer is STOPped; the owner's names
// the group of each of their team's flags (and marks one acknowledged);
// the approver's says what waits for them; the manager's leads to the
// pilot; a viewer's shows none of these.
//
// scripts/test prepares, per run (SK_JS=off and SK_JS=on):
//   SK_ADMIN_USER     an admin
//   SK_OWNER_USER     an owner in payments, whose group SK_GROUP stopped
//                     (its STOP flag is raised before the run)
//   SK_APPROVER_USER  an approver of the payments domain
//   manager-<off|on>, viewer-<off|on>  (pilot_fixtures), password SK_ADMIN_PASSWORD
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { MODE, launch, signedInAs } from '../support.mjs';

const RUN = process.env.SK_JS === 'off' ? 'off' : 'on';
const ADMIN = process.env.SK_ADMIN_USER;
const ADMIN_PW = process.env.SK_ADMIN_PASSWORD;
const OWNER = process.env.SK_OWNER_USER;
const OWNER_PW = process.env.SK_OWNER_PASSWORD;
const APPROVER = process.env.SK_APPROVER_USER;
const APPROVER_PW = process.env.SK_APPROVER_PASSWORD;
const GROUP = process.env.SK_GROUP;

let browser;
before(async () => {
  browser = await launch();
});
after(async () => browser?.close());

const problems = [];

/** `username`'s home, signed in from it; the context to close after. */
async function home(username, password) {
  const { context, page } = await signedInAs(browser, problems, '/', username, password);
  assert.equal(new URL(page.url()).pathname, '/');
  assert.match(await page.textContent('main h1'), /Welcome/);
  return { context, page };
}

/** How many elements match `selector` on `page`. */
const count = (page, selector) => page.locator(selector).count();

test(`${MODE}: the admin's home lists open trouble and is not calm during a STOP`, { skip: !ADMIN && 'no admin' }, async () => {
  const { context, page } = await home(ADMIN, ADMIN_PW);
  assert.equal(await count(page, '[data-testid="home-admin"]'), 1);
  const flags = await page.textContent('[data-testid="home-admin"] [data-testid="open-flags"]');
  assert.match(flags, /STOP/, 'the stopped groups\' flags are counted by kind');
  assert.equal(await count(page, '[data-testid="all-well"]'), 0, 'never "every cluster is up" during a STOP');
  // The admin's links, and no owner's or approver's card they have no part in.
  assert.ok((await count(page, 'main a[href="/settings/routines"]')) > 0);
  assert.equal(await count(page, '[data-testid="home-waiting"]'), 0);
  await context.close();
  assert.deepEqual(problems, []);
});

test(`${MODE}: the owner's home names the group of their team's flag`, { skip: !(OWNER && GROUP) && 'no flag fixture' }, async () => {
  const { context, page } = await home(OWNER, OWNER_PW);
  assert.equal(await count(page, '[data-testid="home-admin"]'), 0, 'no admin card');
  assert.match(await page.textContent('[data-testid="home-flags"] h2'), /payments/);
  const item = page.locator('[data-testid="home-flags"] [data-testid="flag-list"] li', { hasText: GROUP });
  assert.equal(await item.count(), 1, `${GROUP}'s flag is on the home`);
  assert.equal((await item.locator('[data-testid="flag-subject"]').textContent()).trim(), `group ${GROUP}`);
  assert.match(await item.textContent(), /STOP/);
  // The flags spec acknowledges it (it runs first): then the home says by whom.
  if ((await item.locator('[data-testid="acknowledged"]').count()) > 0) {
    assert.match(await item.locator('[data-testid="acknowledged"]').textContent(), new RegExp(`acknowledged by ${OWNER}`));
  }
  // The link opens the flag.
  const href = await item.locator('a').first().getAttribute('href');
  assert.match(href, /^\/flags\/\d+$/);
  assert.equal(await count(page, '[data-testid="home-mine"]'), 1, 'their changes in review');
  await context.close();
  assert.deepEqual(problems, []);
});

test(`${MODE}: the approver's home says what waits for their approval`, { skip: !APPROVER && 'no approver' }, async () => {
  const { context, page } = await home(APPROVER, APPROVER_PW);
  assert.equal(await count(page, '[data-testid="home-waiting"]'), 1);
  assert.match(await page.textContent('[data-testid="home-waiting"] h2'), /Waiting for your approval/);
  assert.equal(await count(page, '[data-testid="home-admin"]'), 0, 'no admin card');
  await context.close();
  assert.deepEqual(problems, []);
});

test(`${MODE}: the manager's home leads to the pilot, the viewer's to none of the others' parts`, { skip: !ADMIN_PW && 'no pilot fixture' }, async () => {
  const m = await home(`manager-${RUN}`, ADMIN_PW);
  assert.equal(await count(m.page, '[data-testid="home-pilot"] a[href="/pilot"]'), 1);
  assert.equal(await count(m.page, '[data-testid="home-admin"]'), 0);
  await m.context.close();

  const v = await home(`viewer-${RUN}`, ADMIN_PW);
  for (const part of ['home-admin', 'home-flags', 'home-waiting', 'home-pilot']) {
    assert.equal(await count(v.page, `[data-testid="${part}"]`), 0, `a viewer's home has no ${part}`);
  }
  assert.match(await v.page.textContent('main'), /You are not in a team yet/);
  await v.context.close();
  assert.deepEqual(problems, []);
});
