// The pilot, end to end. A manager signs in, sets the pilot up on its
// settings form with a baseline and the note on where it came from, sees
// the day-30 table with that baseline, and downloads the table as CSV,
// whose rows are the table's. A viewer cannot reach the pilot settings
// (the server refuses and audits it; server/tests/pilot.rs checks the
// audit).
//
// scripts/test (pilot_fixtures) prepares, per run (SK_JS=off and SK_JS=on):
//   manager-<off|on>  a user with the manager role, password SK_ADMIN_PASSWORD
//   viewer-<off|on>   a user with the viewer role, the same password
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { BASE, JS, MODE, flash, hydrated, launch, post, signedInAs } from '../support.mjs';

const RUN = process.env.SK_JS === 'off' ? 'off' : 'on';
const MANAGER = `manager-${RUN}`;
const VIEWER = `viewer-${RUN}`;
const PW = process.env.SK_ADMIN_PASSWORD;

let browser;
before(async () => {
  browser = await launch();
});
after(async () => browser?.close());

const problems = [];

// A new browser context for one person, signed in at `path`.
const signedIn = (path, username, password) =>
  signedInAs(browser, problems, path, username, password, { acceptDownloads: true });

// RFC 4180: quoted fields may hold commas, quotes (doubled) and newlines.
function parseCsv(text) {
  const rows = [];
  let row = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; i += 1; }
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { row.push(field); field = ''; }
    else if (c === '\n') { row.push(field); rows.push(row); row = []; field = ''; }
    else if (c !== '\r') field += c;
  }
  if (field !== '' || row.length > 0) { row.push(field); rows.push(row); }
  const [head, ...body] = rows;
  return body.map((r) => Object.fromEntries(head.map((h, i) => [h, r[i] ?? ''])));
}

test(`${MODE}: a manager sets a baseline, reads the day-30 table and downloads it as CSV`, async () => {
  const { context, page } = await signedIn('/settings/pilot', MANAGER, PW);
  assert.equal(new URL(page.url()).pathname, '/settings/pilot');
  const form = 'form[data-testid="pilot-settings"]';
  const day1 = new Date(Date.now() - 9 * 86_400_000).toISOString().slice(0, 10);
  // Each run its own figure, so the table shows this run's save.
  const [minutes, shown] = JS ? ['95', '1 h 35 min'] : ['85', '1 h 25 min'];
  const note = `median of the on-call tickets (${MODE})`;
  await page.selectOption(`${form} select[name="scope_kind"]`, 'domains');
  await page.fill(`${form} textarea[name="scope"]`, 'payments');
  await page.fill(`${form} input[name="started_on"]`, day1);
  await page.fill(`${form} input[name="lag_flagged_minutes"]`, minutes);
  await page.fill(`${form} input[name="lag_flagged_note"]`, note);
  const save = `${form} button[type="submit"]`;
  await post(page, save);
  assert.equal(new URL(page.url()).pathname, '/settings/pilot');
  assert.match(await flash(page), /Saved the pilot/);
  assert.equal(await page.inputValue(`${form} input[name="lag_flagged_minutes"]`), minutes);
  assert.match(await page.textContent('[data-testid="pilot-updated"]'), new RegExp(`by ${MANAGER}`));

  // The manager's page, from the header's link.
  await Promise.all([page.waitForURL(/\/pilot$/), page.click('header nav a[href="/pilot"]')]);
  await hydrated(page);
  const table = 'table[data-testid="pilot-table"]';
  await page.waitForSelector(table);
  assert.match(await page.textContent('[data-testid="pilot-summary"]'), /Day 10 of the pilot/);
  const lag = page.locator(`${table} tr[data-metric="lag_flagged"]`);
  const lagText = await lag.textContent();
  assert.ok(lagText.includes(shown), lagText);
  assert.ok(lagText.includes(note), lagText);
  const rows = page.locator(`${table} tbody tr`);
  const onPage = new Map();
  for (let i = 0; i < await rows.count(); i += 1) {
    const tr = rows.nth(i);
    onPage.set(await tr.getAttribute('data-metric'), {
      events: await tr.locator('td.events').getAttribute('data-events'),
      p50: (await tr.locator('td.p50').textContent()).trim(),
      baseline: await tr.locator('td.baseline').textContent(),
    });
  }
  assert.equal(onPage.size, 5, 'a row per metric');
  // A chart per metric, with a point per week.
  assert.equal(await page.locator('figure.pilot-chart').count(), 5);
  assert.equal(await page.locator('figure.pilot-chart[data-metric="lag_flagged"] g.week').count(), 2);

  // The CSV download: its rows are the table's.
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.click('a[data-testid="table-csv"]'),
  ]);
  assert.equal(download.suggestedFilename(), 'pilot-table.csv');
  const csv = parseCsv(await readFile(await download.path(), 'utf8'));
  assert.equal(csv.length, onPage.size);
  for (const r of csv) {
    const row = onPage.get(r.metric);
    assert.ok(row, `no row for ${r.metric} on the page`);
    assert.equal(row.events, r.events, r.metric);
    assert.equal(row.p50, r.p50 || '–', r.metric);
    assert.ok(row.baseline.includes(r.baseline), `${r.metric}: ${row.baseline} has ${r.baseline}`);
    assert.ok(row.baseline.includes(r.baseline_note), `${r.metric}: ${row.baseline}`);
  }
  const lagCsv = csv.find((r) => r.metric === 'lag_flagged');
  assert.equal(lagCsv.baseline_ms, String(Number(minutes) * 60_000));

  await context.close();
  assert.deepEqual(problems, []);
});

test(`${MODE}: a viewer cannot reach the pilot settings`, async () => {
  const { context, page } = await signedIn('/settings/pilot', VIEWER, PW);
  assert.equal(new URL(page.url()).pathname, '/settings/pilot');
  const refusal = await page.textContent('[role="alert"]');
  assert.match(refusal, /not allowed to read the pilot/);
  assert.equal(await page.locator('form[data-testid="pilot-settings"]').count(), 0);
  assert.equal(await page.locator('header nav a[href="/pilot"]').count(), 0, 'no link to the pilot');
  const res = await page.goto(BASE + '/settings/pilot');
  assert.equal(res.status(), 403);
  await context.close();
  assert.deepEqual(problems, []);
});
