// Connectors, end to end, with two people in two browser contexts. The
// owner drafts a Debezium PostgreSQL source from its template with the
// password written inline, validates, sees the error (and that the secret
// did not come back), applies the suggested fix in one click (a
// ${file:…} reference), and proposes it. The approver approves it with
// their password; the domain being at act_after_approval, it is applied to
// the Connect double, which runs it; the console's next status pass shows
// it RUNNING on the item and on the connector's page.
//
// scripts/test (connect_fixture) prepares, per run (SK_JS=off and SK_JS=on):
//   SK_CONNECT / SK_CONNECT_URL  a Connect cluster of SK_CLUSTER (the double,
//                     read every 5 s) and the double's URL.
//   e2e-cdc-<off|on>.public.orders  the topic the source writes, a stream
//                     of payments (act_after_approval, one approval,
//                     SK_APPROVER_USER named).
//   SK_OWNER_USER     an owner in payments (may propose).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { BASE, JS, MODE, hydrated, launch, post, signedInAs } from '../support.mjs';

const AUTHOR = process.env.SK_OWNER_USER;
const AUTHOR_PW = process.env.SK_OWNER_PASSWORD;
const APPROVER = process.env.SK_APPROVER_USER;
const APPROVER_PW = process.env.SK_APPROVER_PASSWORD;
const CLUSTER = process.env.SK_CLUSTER;
const CONNECT = process.env.SK_CONNECT;
const CONNECT_URL = process.env.SK_CONNECT_URL;
const NAME = `orders-cdc-${process.env.SK_JS}`;
const PREFIX = `e2e-cdc-${process.env.SK_JS}`;
const INLINE = 'an-inline-password-1234';

let browser;
before(async () => {
  browser = await launch();
});
after(async () => browser?.close());

const problems = [];

// A new browser context for one person, signed in at `path`.
const signedIn = (path, username, password) =>
  signedInAs(browser, problems, path, username, password);

// Clicks a submit of the draft form; both ways it ends on a new address
// (the draft with its findings, or the review item).
async function press(page, selector, url) {
  await Promise.all([page.waitForURL(url, { timeout: 30000 }), page.click(selector)]);
  await hydrated(page);
  await page.waitForSelector('[data-testid="draft-check"], [data-testid="item-state"]', { timeout: 30000 });
}

const field = (key) => `form[data-testid="draft-form"] [name="values[${key}]"]`;

test(`${MODE}: an owner drafts a Debezium source, fixes it in one click, proposes it; an approver approves; it runs`,
  { skip: !(CONNECT && APPROVER) && 'no Connect fixture' }, async () => {
    const draft = `/clusters/${CLUSTER}/connect/draft?name=${encodeURIComponent(CONNECT)}`;

    // The owner picks the template.
    const { context: ca, page: a } = await signedIn(draft, AUTHOR, AUTHOR_PW);
    assert.equal(new URL(a.url()).pathname, `/clusters/${CLUSTER}/connect/draft`);
    await Promise.all([
      a.waitForURL(/plugin=debezium_postgres/),
      a.click('[data-testid="templates"] a[href*="plugin=debezium_postgres"]'),
    ]);
    await hydrated(a);
    // Choices are selects, the recommended plugin preselected.
    assert.equal(await a.inputValue(field('plugin.name')), 'pgoutput');
    assert.equal(await a.getAttribute(field('database.password'), 'type'), 'password');

    await a.fill(field('name'), NAME);
    await a.fill(field('topic.prefix'), PREFIX);
    await a.fill(field('database.hostname'), 'db.internal');
    await a.fill(field('database.user'), 'debezium');
    await a.fill(field('database.password'), INLINE);
    await a.fill(field('database.dbname'), 'shop');
    await a.fill(field('table.include.list'), 'public\\.orders');
    await a.selectOption(field('key.converter'), 'org.apache.kafka.connect.json.JsonConverter');
    await a.selectOption(field('value.converter'), 'org.apache.kafka.connect.json.JsonConverter');

    // Validate: the inline password is an error, and it does not come back.
    await press(a, '[data-testid="validate"]', /config=/);
    assert.ok(!a.url().includes(INLINE), 'no secret in the address');
    assert.ok(!(await a.content()).includes(INLINE), 'no secret in the page');
    assert.match(await a.textContent('[data-testid="inline-secrets"]'), /database\.password/);
    assert.match(await a.textContent('[data-testid="draft-verdict"]'), /It has errors/);
    const row = a.locator('[data-testid="draft-findings"] tr[data-property="database.password"]');
    assert.match(await row.textContent(), /error/);
    assert.ok(await a.isDisabled('[data-testid="propose"]'), 'a draft with errors cannot be proposed');
    assert.equal(await a.inputValue(field('name')), NAME, 'the form keeps what was typed');

    // The suggested fix, in one click: a reference in place of the secret.
    await press(a, '[data-testid="draft-findings"] tr[data-property="database.password"] button[data-testid="fix"]',
      (u) => !u.href.includes('inline='));
    assert.match(await a.textContent('[data-testid="draft-verdict"]'), /No errors/);
    assert.match(await a.inputValue(field('database.password')), /^\$\{file:.*:database\.password\}$/);
    assert.match(await a.textContent('[data-testid="draft-json"]'), /"connector\.class": "io\.debezium\.connector\.postgresql\.PostgresConnector"/);

    // Propose: the review item, in review.
    await press(a, '[data-testid="propose"]', /\/review\/\d+$/);
    const id = new URL(a.url()).pathname.split('/').pop();
    assert.equal((await a.textContent('[data-testid="item-state"]')).trim(), 'in review');
    assert.match(await a.textContent('[data-testid="connector-diff-base"]'), /does not exist yet/);
    assert.match(await a.textContent('[data-testid="connector-diff"] tr[data-key="database.password"]'), /secret, not shown/);

    // The approver approves with their password; it is applied.
    const { context: cb, page: b } = await signedIn(`/review/${id}`, APPROVER, APPROVER_PW);
    const approve = 'form[data-testid="approve-form"]';
    await b.fill(`${approve} input[name="password"]`, APPROVER_PW);
    await post(b, `${approve} button[type="submit"]`);
    // Applied, then the next status pass (every 5 s) says it runs.
    let run = '';
    for (let i = 0; i < 60; i += 1) {
      await b.waitForTimeout(1000);
      await b.reload();
      await hydrated(b);
      if (await b.locator('[data-testid="connector-run-state"]').count() > 0) {
        run = (await b.textContent('[data-testid="connector-run-state"]')).trim();
        if (run) break;
      }
    }
    assert.equal((await b.textContent('[data-testid="item-state"]')).trim(), 'applied');
    assert.equal(run, 'RUNNING');

    // The Connect double runs it, with the reference as written.
    const status = await (await fetch(`${CONNECT_URL}/connectors/${NAME}/status`)).json();
    assert.equal(status.connector.state, 'RUNNING');
    const config = await (await fetch(`${CONNECT_URL}/connectors/${NAME}/config`)).json();
    assert.match(config['database.password'], /^\$\{file:/);

    // The connector's page shows it RUNNING.
    await a.goto(`${BASE}/clusters/${CLUSTER}/connector?connect=${encodeURIComponent(CONNECT)}&name=${NAME}`);
    await hydrated(a);
    assert.equal((await a.textContent('[data-testid="connector-state"]')).trim(), 'RUNNING');

    await ca.close();
    await cb.close();
    assert.deepEqual(problems, []);
  });

// Hydrated, the draft is checked as it is typed: no Validate, no new
// address. With JavaScript off the Validate submit above is the way.
test(`${MODE}: the draft form is checked as it is typed`,
  { skip: (!JS && 'checked as typed only with its island hydrated') || (!CONNECT && 'no Connect fixture') }, async () => {
    const draft = `/clusters/${CLUSTER}/connect/draft?name=${encodeURIComponent(CONNECT)}&plugin=debezium_postgres`;
    const { context, page: a } = await signedIn(draft, AUTHOR, AUTHOR_PW);
    await hydrated(a);
    const at = a.url();
    assert.match(await a.textContent('[data-testid="live-check"]'), /Checked as you type/);
    const verdict = (re) => a.waitForFunction(
      (src) => new RegExp(src).test(document.querySelector('[data-testid="draft-verdict"]')?.textContent ?? ''),
      re.source, { timeout: 15000 });

    await a.fill(field('name'), `${NAME}-typed`);
    await a.fill(field('topic.prefix'), `${PREFIX}-typed`);
    await a.fill(field('database.hostname'), 'db.internal');
    await a.fill(field('database.user'), 'debezium');
    await a.fill(field('database.dbname'), 'shop');
    await a.fill(field('table.include.list'), 'public\\.orders');
    await a.selectOption(field('key.converter'), 'org.apache.kafka.connect.json.JsonConverter');
    await a.selectOption(field('value.converter'), 'org.apache.kafka.connect.json.JsonConverter');
    // An inline password: the error shows up by itself, masked.
    await a.fill(field('database.password'), INLINE);
    await verdict(/It has errors/);
    const row = '[data-testid="draft-findings"] tr[data-property="database.password"]';
    await a.waitForSelector(row);
    assert.match(await a.textContent(row), /error/);
    assert.ok(await a.isDisabled('[data-testid="propose"]'), 'a draft with errors cannot be proposed');
    assert.match(await a.textContent('[data-testid="draft-json"]'), /"database\.password": "\*+"/);
    assert.ok(!(await a.textContent('[data-testid="draft-check"]')).includes(INLINE), 'no secret shown');

    // A reference instead: no errors, and Propose is open.
    await a.fill(field('database.password'), '${file:/etc/kafka/secrets.properties:database.password}');
    await verdict(/No errors/);
    assert.equal(await a.locator(row).count(), 0);
    assert.ok(!(await a.isDisabled('[data-testid="propose"]')), 'a draft without errors may be proposed');

    // A port in words cannot become a config: said so, not proposable.
    await a.fill(field('database.port'), 'five');
    await a.waitForSelector('[data-testid="draft-check"] [role="alert"]', { timeout: 15000 });
    assert.match(await a.textContent('[data-testid="draft-check"] [role="alert"]'), /database\.port/);
    assert.ok(await a.isDisabled('[data-testid="propose"]'));
    await a.fill(field('database.port'), '5432');
    await verdict(/No errors/);

    assert.equal(a.url(), at, 'checked in place, without a new address');
    await context.close();
    assert.deepEqual(problems, []);
  });
