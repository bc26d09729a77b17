// An owner pastes a breaking Avro change to a stream and sees which
// consumer group breaks, and why, and what it breaks further down (the
// dbt model's column its lineage fixture feeds from `amount`, with its
// team), which they send to the owners. scripts/test records the stream's
// schema (SK_TOPIC in cluster SK_CLUSTER, read by SK_GROUP) and sends the
// lineage fixture (lineage_fixture) before the run.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { BASE, JS, MODE, flash, hydrated, launch, post } from '../support.mjs';

const OWNER = process.env.SK_OWNER_USER;
const PW = process.env.SK_OWNER_PASSWORD;
const GROUP = process.env.SK_GROUP;
const TOPIC = process.env.SK_TOPIC;
const CLUSTER = process.env.SK_CLUSTER;
const RUN = process.env.SK_JS === 'off' ? 'off' : 'on';

// The stream's schema has `amount` with no default; this drops it.
const BREAKING = JSON.stringify({
  type: 'record', name: 'Order',
  fields: [{ name: 'id', type: 'string' }],
});

let browser;
before(async () => {
  browser = await launch();
});
after(async () => browser?.close());

test(`${MODE}: an owner checks a breaking Avro change and sees which group breaks`, { skip: !TOPIC && 'no schema fixture' }, async () => {
  const context = await browser.newContext({ javaScriptEnabled: JS });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(e.message));
  const stream = `${BASE}/clusters/${CLUSTER}/stream?name=${encodeURIComponent(TOPIC)}`;
  await page.goto(stream);
  await page.fill('input[name="username"]', OWNER);
  await page.fill('input[name="password"]', PW);
  await Promise.all([page.waitForNavigation(), page.click('form[action="/login"] button[type="submit"]')]);
  await hydrated(page);

  // The stream page shows the schema and who reads it with what.
  assert.match(await page.textContent('[data-testid="stream-schema"]'), /"amount"/);
  const reader = page.locator('table[data-testid="readers"] tr', { hasText: GROUP });
  assert.match(await reader.textContent(), /assumed/);
  // And its freshness SLO section: the SLO and budget, or how to get one.
  assert.match(await page.textContent('[data-testid="stream-slo"]'), /Freshness SLO/);

  await Promise.all([page.waitForNavigation(), page.click('a[data-testid="check-change"]')]);
  await hydrated(page);
  // The editor starts from the stream's current schema, shown beside it.
  assert.match(await page.inputValue('form[data-testid="check-form"] textarea[name="schema"]'), /"amount"/,
    'the editor is prefilled with the current schema');
  assert.match(await page.textContent('[data-testid="current-schema"]'), /"amount"/);
  await page.selectOption('form[data-testid="check-form"] select[name="schema_type"]', 'AVRO');
  await page.fill('form[data-testid="check-form"] textarea[name="schema"]', BREAKING);
  await Promise.all([
    page.waitForURL(/\/schema-checks\/\d+/),
    page.click('form[data-testid="check-form"] button[type="submit"]'),
  ]);
  await hydrated(page);

  assert.equal(await page.textContent('[data-testid="verdict"]'), 'INCOMPATIBLE');
  const row = page.locator(`table[data-testid="consumer-verdicts"] tr[data-group="${GROUP}"]`);
  const text = await row.textContent();
  assert.match(text, /INCOMPATIBLE/);
  assert.match(text, /payments/, 'the owner team is named');
  assert.match(text, /READER_FIELD_MISSING_DEFAULT_VALUE/);
  assert.match(text, /amount/, 'the reason names the field');
  assert.match(text, new RegExp(`${GROUP} reads \`amount\` without a default`), 'said as its owner would');
  assert.match(await page.textContent('[data-testid="summary"]'), new RegExp(GROUP));

  // Past the consumers: removing `amount` breaks the dbt model's column
  // (column lineage: topic → the enricher's table → the model) and the
  // dashboard on it, each named with its owner team.
  const downstream = await page.textContent('ul[data-testid="downstream-breakage"] li[data-field="amount"]');
  assert.match(downstream, new RegExp(
    `removing \`amount\` breaks .*\`analytics\\.orders_daily_${RUN}\\.revenue\` \\(table, team payments\\)`));
  assert.match(downstream, new RegExp(`the dashboard \`Orders ${RUN}\``));
  // Its owners are told before anyone approves: the form works with JS off.
  assert.match(await page.textContent('[data-testid="notify-owners"]'), /owned by .*payments/);
  await post(page, 'form[data-testid="notify-owners-form"] button[type="submit"]');
  assert.match(await flash(page), /Sent to payments/);
  assert.match(await page.textContent('ul[data-testid="owner-notices"]'), new RegExp(`Sent by ${OWNER}.*payments`));

  // The owner declares the group's reader schema on the stream page.
  await page.goto(stream);
  await hydrated(page);
  const row2 = page.locator('table[data-testid="readers"] tr', { hasText: GROUP });
  await row2.locator('summary', { hasText: 'Declare its reader schema' }).click();
  const form2 = row2.locator('form[data-testid="record-reader-schema"]');
  const readerSchema = JSON.stringify({
    type: 'record', name: 'Order', fields: [{ name: 'id', type: 'string' }],
  });
  const textarea2 = form2.locator('textarea[name="schema"]');
  if (JS) {
    // With its island hydrated, a file fills the textarea, and the form posts it as text.
    await form2.locator('input[data-testid="schema-file"]').setInputFiles({
      name: 'reader.avsc', mimeType: 'application/json', buffer: Buffer.from(readerSchema),
    });
    for (let i = 0; i < 50 && (await textarea2.inputValue()) !== readerSchema; i++) {
      await page.waitForTimeout(100);
    }
    assert.equal(await textarea2.inputValue(), readerSchema, 'the file was read into the textarea');
  } else {
    // No file picker that could do nothing: the schema is pasted.
    assert.equal(await form2.locator('input[type="file"]').count(), 0);
    await textarea2.fill(readerSchema);
  }
  await Promise.all([page.waitForNavigation(), form2.locator('button[type="submit"]').click()]);
  await hydrated(page);
  assert.match(await flash(page), new RegExp(`Recorded the ${GROUP} reader schema`));
  await page.locator('table[data-testid="readers"] tr', { hasText: GROUP })
    .filter({ hasText: 'declared' })
    .waitFor({ timeout: 15000 });

  // A schema that does not parse: a clear error on the form, no verdict.
  await page.goto(`${BASE}/clusters/${CLUSTER}/stream/check?name=${encodeURIComponent(TOPIC)}`);
  await hydrated(page);
  const broken = '{"type": "recrod", "name": "Kept <as> & typed"';
  await page.fill('form[data-testid="check-form"] textarea[name="schema"]', broken);
  await post(page, 'form[data-testid="check-form"] button[type="submit"]');
  assert.match(await page.textContent('p.error'), /does not parse/);
  // What was pasted is still there to fix (kept on the server for the
  // page the post went back to; never in the address).
  assert.equal(await page.inputValue('form[data-testid="check-form"] textarea[name="schema"]'), broken,
    'the pasted text is kept after a parse error');
  assert.ok(!page.url().includes('recrod'), 'the text is not in the address');

  // The stream's schema recorded with a reference: the Avro type `Money`
  // is given in the form's first reference slot.
  await page.goto(stream);
  await hydrated(page);
  const card = page.locator('[data-testid="stream-schema"]');
  await card.locator('summary', { hasText: "Record the stream's schema" }).click();
  const form3 = card.locator('form[data-testid="record-stream-schema"]');
  await form3.locator('select[name="schema_type"]').selectOption('AVRO');
  await form3.locator('textarea[name="schema"]').fill(JSON.stringify({
    type: 'record', name: 'Order',
    fields: [{ name: 'id', type: 'string' }, { name: 'total', type: 'Money' }],
  }));
  await form3.locator('summary', { hasText: 'References' }).click();
  await form3.locator('input[name="ref_names[0]"]').fill('Money');
  await form3.locator('textarea[name="ref_texts[0]"]').fill(JSON.stringify({
    type: 'record', name: 'Money', fields: [{ name: 'amount', type: 'double' }],
  }));
  await Promise.all([page.waitForNavigation(), form3.locator('button[type="submit"]').click()]);
  await hydrated(page);
  assert.equal(await flash(page), "Recorded the stream's schema.");
  await card.filter({ hasText: '"Money"' }).waitFor({ timeout: 15000 });
  assert.deepEqual(problems, []);
  await context.close();
});
