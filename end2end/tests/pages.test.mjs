// The main pages, walked as an admin: each one checked for accessibility by
// axe-core (no serious or critical violation), and timed by the browser's
// own navigation timing (HTML bytes, time to first byte, DOMContentLoaded,
// and with JavaScript on, the time until its islands are hydrated).
//
// axe runs in the hydrated run only: it is a script, and with JavaScript
// off Chromium cannot run it in the page (the HTML it would check is the
// same server HTML). The timings are taken in both runs.
//
// The figures for BENCHMARKS.md come from the same walk over the demo's
// data: with `scripts/demo` running, from end2end/,
//   SK_URL=http://127.0.0.1:3000 SK_ADMIN_USER=admin SK_ADMIN_PASSWORD=… \
//   SK_PAGES_OUT=/tmp/pages.json node --test tests/pages.test.mjs
// The cluster, topic, group and Connect worker come from SK_CLUSTER,
// SK_TOPIC, SK_GROUP and SK_CONNECT when set (scripts/test sets them), else
// from the first ones the pages link to.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';
import { BASE, JS, MODE, hydrated, launch, signedInAs } from '../support.mjs';

const ADMIN = process.env.SK_ADMIN_USER;
const PW = process.env.SK_ADMIN_PASSWORD;
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
// Impacts that fail the walk; moderate and minor ones are printed.
const BLOCKING = new Set(['serious', 'critical']);

let browser;
before(async () => {
  browser = await launch();
});
after(async () => browser?.close());

/** The first link on `path` whose href starts with `prefix`, or null. */
async function firstLink(page, path, prefix) {
  await page.goto(BASE + path);
  const a = page.locator(`main a[href^="${prefix}"]`).first();
  return (await a.count()) > 0 ? a.getAttribute('href') : null;
}

/** The pages to walk, with the cluster, stream and group the run has. */
async function pages(page) {
  let cluster = process.env.SK_CLUSTER;
  if (!cluster) {
    const href = await firstLink(page, '/clusters', '/clusters/');
    cluster = href?.match(/^\/clusters\/(\d+)/)?.[1];
  }
  let topic = process.env.SK_TOPIC;
  if (!topic) {
    const href = await firstLink(page, '/streams', `/clusters/${cluster}/stream?`);
    topic = href && new URL(href, BASE).searchParams.get('name');
  }
  let group = process.env.SK_GROUP;
  if (!group) {
    const href = await firstLink(page, `/clusters/${cluster}`, `/clusters/${cluster}/group?`);
    group = href && new URL(href, BASE).searchParams.get('name');
  }
  const q = (params) => new URLSearchParams(params).toString();
  const list = [
    ['home', '/'],
    ['streams', '/streams'],
    ['clusters', '/clusters'],
    ['cluster', `/clusters/${cluster}`],
    ['flags', '/flags?scope=all'],
    ['schemas', '/schemas'],
    ['review inbox', '/review'],
    ['lineage search', '/lineage'],
    ['pilot', '/pilot'],
    ['account', '/account'],
    ['settings: users', '/settings/users'],
    ['settings: teams', '/settings/teams'],
    ['settings: clusters', '/settings/clusters'],
    ['settings: review', '/settings/review'],
    ['settings: routines', '/settings/routines'],
    ['settings: audit', '/settings/audit'],
  ];
  let connect = process.env.SK_CONNECT;
  if (!connect) {
    const href = await firstLink(page, `/clusters/${cluster}`, `/clusters/${cluster}/connect?`);
    connect = href && new URL(href, BASE).searchParams.get('name');
  }
  if (connect) {
    list.push(
      ['connectors', `/clusters/${cluster}/connect?${q({ name: connect })}`],
      ['connector draft', `/clusters/${cluster}/connect/draft?${q({ name: connect })}`],
    );
  }
  if (topic) {
    list.push(
      ['stream', `/clusters/${cluster}/stream?${q({ name: topic })}`],
      ['check a change', `/clusters/${cluster}/stream/check?${q({ name: topic })}`],
      ['lineage graph', `/lineage/graph?${q({ topic, cluster_id: cluster })}`],
      ['lineage impact', `/lineage/impact?${q({ topic, cluster_id: cluster })}`],
    );
  }
  if (group) list.push(['group', `/clusters/${cluster}/group?${q({ name: group })}`]);
  const flag = await firstLink(page, '/flags?scope=all', '/flags/');
  if (flag) list.push(['flag', flag]);
  const item = await firstLink(page, '/review?scope=all', '/review/');
  if (item) list.push(['review item', item]);
  return list;
}

/** The navigation's timings, as the browser took them. */
async function timings(page) {
  return page.evaluate(() => {
    const [n] = performance.getEntriesByType('navigation');
    return {
      bytes: n.decodedBodySize,
      gzip: n.encodedBodySize,
      ttfb: Math.round(n.responseStart - n.startTime),
      dcl: Math.round(n.domContentLoadedEventEnd - n.startTime),
      islands: document.querySelectorAll('leptos-island').length,
    };
  });
}

test(`${MODE}: the main pages have no serious accessibility violation, and their timings`, { skip: !ADMIN && 'no admin' }, async () => {
  const problems = [];
  const { context, page } = await signedInAs(browser, problems, '/', ADMIN, PW);
  const walk = await pages(page);
  const figures = [];
  const violations = [];
  for (const [name, path] of walk) {
    const response = await page.goto(BASE + path);
    assert.equal(response.status(), 200, `${name} (${path}) answers 200`);
    // The group's catch-up line: its time to catch up, or why there is none.
    if (name === 'group') {
      assert.match(await page.textContent('[data-testid="group-trend"]'),
        /^Catch-up: (caught up|not catching up|not known|–)/);
    }
    await hydrated(page);
    const t = await timings(page);
    // Hydrated: how long after the navigation began the islands were.
    if (JS && t.islands > 0) t.interactive = Math.round(await page.evaluate(() => performance.now()));
    figures.push({ name, path, ...t });
    if (JS) {
      await page.evaluate(`${AXE}\n;0`);
      const result = await page.evaluate(() => axe.run(document, {
        runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
      }));
      for (const v of result.violations) {
        const line = `${name} (${path}): ${v.impact} ${v.id} — ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`;
        if (BLOCKING.has(v.impact)) violations.push(line);
        else console.log(`# note: ${line}`);
      }
    }
  }
  await context.close();
  console.log(`# ${MODE}: page, HTML bytes (on the wire), TTFB ms, DOMContentLoaded ms${JS ? ', hydrated ms' : ''}`);
  for (const f of figures) {
    console.log(`# ${f.name.padEnd(20)} ${String(f.bytes).padStart(8)} (${f.gzip}) ${String(f.ttfb).padStart(5)} ${String(f.dcl).padStart(6)}${f.interactive ? ` ${String(f.interactive).padStart(6)}` : ''}`);
  }
  if (process.env.SK_PAGES_OUT) {
    writeFileSync(process.env.SK_PAGES_OUT.replace(/(\.json)?$/, `-${MODE}.json`), JSON.stringify(figures, null, 2));
  }
  assert.ok(walk.length >= 18, `walked ${walk.length} pages`);
  assert.deepEqual(violations, [], 'no serious or critical accessibility violations');
  assert.deepEqual(problems, []);
});

test(`${MODE}: every page fits a phone's width, the audit log fits a laptop's window, and each title names its page`, { skip: !ADMIN && 'no admin' }, async () => {
  const problems = [];
  const { context, page } = await signedInAs(browser, problems, '/', ADMIN, PW);
  const walk = await pages(page);
  // Where the address names the page's thing: its title starts with it.
  const named = {
    stream: 'name',
    group: 'name',
    'check a change': 'name',
    connectors: 'name',
    'lineage graph': 'topic',
    'lineage impact': 'topic',
  };
  const wide = [];
  const titles = [];
  await page.setViewportSize({ width: 390, height: 844 });
  for (const [name, path] of walk) {
    await page.goto(BASE + path);
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    if (width > 390) wide.push(`${name} (${path}) is ${width} px wide at 390`);
    const title = await page.title();
    if (!title.endsWith(' · Streamkeeper')) titles.push(`${name}: ${title}`);
    const thing = named[name] && new URL(path, BASE).searchParams.get(named[name]);
    if (thing && !title.startsWith(`${thing} · `)) titles.push(`${name}: ${title}, not named ${thing}`);
  }
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto(`${BASE}/settings/audit`);
  const audit = await page.evaluate(() => document.documentElement.scrollWidth);
  await context.close();
  assert.deepEqual(wide, [], 'no page wider than a phone');
  assert.ok(audit <= 1280, `the audit log is ${audit} px wide at 1280`);
  assert.deepEqual(titles, [], 'each title names its page');
  assert.deepEqual(problems, []);
});
