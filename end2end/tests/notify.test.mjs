// An owner reaches on-call from the console (issue 40): sets up a channel
// on their team's notifications page, sends a test and reads exactly what
// the receiver answered, mutes their stopped group and sees "muted until"
// on its page, and finds the delivery log on the group's flag. The same
// plain forms with JavaScript off and hydrated; no page wider than a phone.
//
// scripts/test gives the owner (SK_OWNER_USER) the team payments, which
// owns the stopped group SK_GROUP on cluster SK_CLUSTER (its flag is
// raised before this spec runs). SK_ONCALL_URL, when the run starts the
// on-call double, is its base URL (a Slack-style webhook there answers
// 200 ok); without it the channel points at the console's own lineage
// endpoint, which refuses a post without a token (a 4xx, so the channel
// shows broken): either way the test shows
// the receiver's own answer.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { BASE, MODE, flash, launch, post, signedInAs } from '../support.mjs';

const OWNER = process.env.SK_OWNER_USER;
const PW = process.env.SK_OWNER_PASSWORD;
const GROUP = process.env.SK_GROUP;
const CLUSTER = process.env.SK_CLUSTER;
const ONCALL = process.env.SK_ONCALL_URL;

let browser;
before(async () => {
  browser = await launch();
});
after(async () => browser?.close());

/** The page is no wider than a phone at 390 px. */
async function fitsAPhone(page, what) {
  await page.setViewportSize({ width: 390, height: 844 });
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(width <= 390, `${what} is ${width} px wide at 390`);
  await page.setViewportSize({ width: 1280, height: 800 });
}

test(`${MODE}: an owner sets up a channel, tests it, mutes a group and reads a flag's deliveries`,
  { skip: !(OWNER && GROUP && CLUSTER) && 'no owner fixture' }, async () => {
    const problems = [];
    const { context, page } = await signedInAs(browser, problems, '/', OWNER, PW);

    // Home → the team's notifications page.
    const link = page.locator('a[href$="/notifications"]').first();
    assert.equal(await link.count(), 1, 'home links the team\'s notifications');
    await post(page, 'a[href$="/notifications"] >> nth=0');
    assert.match(await page.textContent('h1'), /Notifications of payments/);
    assert.match(await page.textContent('[data-testid="repeat-state"]'), /every 4 h/);
    await fitsAPhone(page, 'the notifications page');

    // A bad value: the message on the form, nothing typed lost.
    const name = `e2e-hook-${MODE}`;
    await page.fill('form[data-testid="add-channel"] input[name="name"]', name);
    await page.selectOption('form[data-testid="add-channel"] select[name="kind"]', 'alertmanager');
    await page.fill('form[data-testid="add-channel"] input[name="kinds"]', 'STOP');
    await post(page, 'form[data-testid="add-channel"] button[type="submit"]');
    assert.match(await page.textContent('[role="alert"]'), /The endpoint URL is missing\./);
    assert.equal(await page.inputValue('form[data-testid="add-channel"] input[name="name"]'), name);
    assert.equal(await page.inputValue('form[data-testid="add-channel"] input[name="kinds"]'), 'STOP');

    // A signed webhook to the receiver.
    const endpoint = ONCALL ? `${ONCALL}/services/E2E/${MODE}/hook` : `${BASE}/api/v1/lineage`;
    await page.selectOption('form[data-testid="add-channel"] select[name="kind"]', 'webhook');
    await page.fill('form[data-testid="add-channel"] input[name="endpoint"]', endpoint);
    await page.fill('form[data-testid="add-channel"] input[name="kinds"]', '');
    await post(page, 'form[data-testid="add-channel"] button[type="submit"]');
    assert.equal(await flash(page), `Added the webhook channel ${name}.`);
    const row = page.locator(`tr[data-channel="${name}"]`);
    assert.equal(await row.count(), 1);
    assert.match(await row.textContent(), /webhook/);

    // Send a test: the note says what the receiver answered.
    await post(page, `tr[data-channel="${name}"] form[data-testid="test-channel"] button[type="submit"]`);
    const said = await flash(page);
    assert.match(said, new RegExp(`^Test sent to ${name}: the receiver answered HTTP \\d{3}, `));
    if (ONCALL) {
      assert.match(said, /HTTP 200, it took the test message\. Its answer: 200 ok/);
    } else {
      assert.match(said, /HTTP 4\d\d, it did not take the test message\. Its answer: 4\d\d/);
      assert.equal(await page.locator(`tr[data-channel="${name}"] [data-testid="channel-broken"]`).count(), 1);
    }

    // Mute the stopped group until tomorrow.
    await page.goto(`${BASE}/settings/silences?cluster=${CLUSTER}`);
    await fitsAPhone(page, 'the silences page');
    const until = new Date(Date.now() + 24 * 3600 * 1000).toISOString().slice(0, 16);
    await page.selectOption('form[data-testid="add-silence"] select[name="scope"]', 'group');
    await page.fill('form[data-testid="add-silence"] input[name="name"]', GROUP);
    await page.fill('form[data-testid="add-silence"] input[name="until"]', until);
    await page.fill('form[data-testid="add-silence"] input[name="reason"]', `e2e ${MODE}`);
    await post(page, 'form[data-testid="add-silence"] button[type="submit"]');
    assert.match(await flash(page), new RegExp(`^Muted the group ${GROUP} until `));
    assert.match(await page.textContent('table[data-testid="silences"]'), new RegExp(`e2e ${MODE}`));

    await page.goto(`${BASE}/clusters/${CLUSTER}/group?name=${encodeURIComponent(GROUP)}`);
    assert.match(await page.textContent('[data-testid="muted"]'), new RegExp(`^Muted until .* UTC \\(e2e ${MODE}\\), by ${OWNER}`));
    await fitsAPhone(page, 'the muted group\'s page');

    // The group's flag: its delivery log.
    await page.goto(`${BASE}/flags?state=any`);
    const flagRow = page.locator('table[data-testid="flags"] tr', { hasText: GROUP }).first();
    await Promise.all([page.waitForNavigation(), flagRow.locator('a').first().click()]);
    const log = page.locator('[data-testid="delivery-log"]');
    assert.equal(await log.count(), 1);
    assert.match(await log.textContent(), /Deliveries/);
    await fitsAPhone(page, 'the flag page');

    // End the silence and remove the channel: the next run starts clean.
    await page.goto(`${BASE}/settings/silences?cluster=${CLUSTER}`);
    await post(page, 'form[data-testid="end-silence"] button[type="submit"]');
    assert.equal(await flash(page), 'Ended the silence.');
    await page.goto(`${BASE}/`);
    await post(page, 'a[href$="/notifications"] >> nth=0');
    await post(page, `tr[data-channel="${name}"] form[data-testid="remove-channel"] button[type="submit"]`);
    assert.equal(await flash(page), 'Removed the channel.');
    await context.close();
    assert.deepEqual(problems, []);
  });
