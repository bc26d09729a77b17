// An owner opens a topic, sees its graph, asks what breaks, and sends the
// impact to the owners. scripts/test (lineage_fixture) sends OpenLineage
// events per run: a streaming job reading SK_TOPIC and writing a table, a
// dbt-like model built from it (owned by payments) and a dashboard on the
// model; the owner's team, payments, owns the topic.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { BASE, JS, MODE, flash, hydrated, launch, post } from '../support.mjs';

const OWNER = process.env.SK_OWNER_USER;
const PW = process.env.SK_OWNER_PASSWORD;
const TOPIC = process.env.SK_TOPIC;
const CLUSTER = process.env.SK_CLUSTER;
const RUN = process.env.SK_JS === 'off' ? 'off' : 'on';

let browser;
before(async () => {
  browser = await launch();
});
after(async () => browser?.close());

test(`${MODE}: an owner opens a topic, sees its graph, asks what breaks and notifies the owners`, { skip: !TOPIC && 'no lineage fixture' }, async () => {
  const context = await browser.newContext({ javaScriptEnabled: JS });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(e.message));
  const follow = async (selector, url) => {
    await Promise.all([page.waitForURL(url), page.click(selector)]);
    await hydrated(page);
  };
  const topicNode = `dataset:kafka://127.0.0.1:`;
  const enricher = `job:flink:e2e-enricher-${RUN}`;

  await page.goto(`${BASE}/clusters/${CLUSTER}/stream?name=${encodeURIComponent(TOPIC)}`);
  await page.fill('input[name="username"]', OWNER);
  await page.fill('input[name="password"]', PW);
  await Promise.all([page.waitForNavigation(), page.click('form[action="/login"] button[type="submit"]')]);
  await hydrated(page);

  // The topic's graph: the topic in the centre, its reader beside it.
  await follow('a[data-testid="stream-lineage"]', /\/lineage\/graph\?/);
  assert.equal(await page.textContent('[data-testid="graph-center"]'), TOPIC);
  const center = page.locator('svg[data-testid="graph-svg"] a.center');
  assert.ok((await center.getAttribute('data-node')).startsWith(topicNode));
  assert.equal(await center.getAttribute('data-kind'), 'topic');
  assert.equal(await page.locator(`svg a[data-node="${enricher}"]`).count(), 1, 'its reader is drawn');
  const topicRow = page.locator('table[data-testid="graph-nodes"] tr', { hasText: TOPIC });
  assert.match(await topicRow.first().textContent(), /payments/);
  assert.match(await page.textContent('[data-testid="partial"]'), /beyond the depth/);
  if (JS) {
    // The drawing's zoom is an island: its buttons appear once hydrated.
    await page.click('[data-testid="zoom-in"]');
    assert.equal((await page.textContent('[data-testid="zoom-level"]')).trim(), '140%');
    assert.equal(await page.$eval('[data-testid="lineage-drawing"]', (d) => d.style.zoom), '140%');
    await page.click('[data-testid="zoom-reset"]');
    assert.equal((await page.textContent('[data-testid="zoom-level"]')).trim(), '100%');
  } else {
    assert.equal(await page.locator('[data-testid="zoom-controls"]').count(), 0);
  }

  // Focus on the reader: the graph re-centres on it.
  await follow(`svg a[data-node="${enricher}"]`, /node=job%3Aflink%3Ae2e-enricher/);
  await page.waitForFunction(
    (name) => document.querySelector('[data-testid="graph-center"]')?.textContent === name,
    `e2e-enricher-${RUN}`,
  );
  assert.equal(await page.textContent('[data-testid="graph-center"]'), `e2e-enricher-${RUN}`);

  // Deeper: the dbt model and the dashboard on it.
  await follow('[data-testid="depth-links"] a:text-is("6")', /depth=6/);
  await page.locator(`svg a[data-node="job:dbt:analytics.orders_daily_${RUN}"]`).waitFor();
  assert.equal(await page.locator(`svg a[data-node="job:dbt:analytics.orders_daily_${RUN}"]`).count(), 1);
  assert.equal(await page.locator('svg a[data-kind="dashboard"]').count(), 1, 'the dashboard');
  assert.equal(await page.locator('svg a[data-kind="table"]').count(), 2, 'the table and the model');

  // Back on the topic, ask what breaks if it changes.
  await follow('svg a[data-kind="topic"]', /node=dataset/);
  await page.locator('a[data-testid="what-breaks"]').waitFor();
  await follow('a[data-testid="what-breaks"]', /\/lineage\/impact\?/);
  const rows = page.locator('table[data-testid="impact-nodes"] tbody tr');
  await rows.first().waitFor();
  const text = (await rows.allTextContents()).join('\n');
  for (const name of [`e2e-enricher-${RUN}`, `shop.public.orders_${RUN}`, `analytics.orders_daily_${RUN}`, `Orders ${RUN}`]) {
    assert.ok(text.includes(name), `${name} breaks: ${text}`);
  }
  assert.match(await page.textContent('[data-testid="impact-summary"]'), /owner team.*payments/);
  assert.equal(await page.locator('[data-testid="sent-none"]').count(), 1);

  // Send it to the owners: recorded and listed.
  const send = 'form[data-testid="notify-form"] button[type="submit"]';
  await post(page, send);
  assert.match(await flash(page), /Sent to payments/);
  await page.waitForSelector('table[data-testid="sent"]');
  assert.match(await page.textContent('table[data-testid="sent"]'), new RegExp(`${OWNER}[\\s\\S]*payments`));

  // Field level (issue 43): the picker lists the topic's fields; `amount`
  // draws its column paths, through the enricher's table to the model's
  // column and the dashboard (the fixture's columnLineage facets).
  await page.selectOption('form[data-testid="field-picker"] select[name="field"]', 'amount');
  await post(page, 'form[data-testid="field-picker"] button[type="submit"]');
  const paths = await page.textContent('[data-testid="column-paths"]');
  assert.match(paths, new RegExp(`e2e-orders-${RUN}\\.amount → shop\\.public\\.orders_${RUN}\\.amount → analytics\\.orders_daily_${RUN}\\.revenue`));
  assert.match(paths, new RegExp(`Orders ${RUN}\\.revenue`));
  // The model's page lists its column and where it comes from.
  const model = `dataset:postgres://127.0.0.1:5432:analytics.orders_daily_${RUN}`;
  await page.goto(`${BASE}/lineage/graph?node=${encodeURIComponent(model)}`);
  await hydrated(page);
  const column = await page.textContent('table[data-testid="dataset-columns"] tr[data-column="revenue"]');
  assert.match(column, new RegExp(`shop\\.public\\.orders_${RUN}\\.amount \\(DIRECT, AGGREGATION\\)`));
  await context.close();
  assert.deepEqual(problems, []);
});
