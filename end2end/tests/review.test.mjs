// The review inbox, end to end, with two people in two browser contexts.
// The author (an owner) proposes a compatible Avro change to a stream from
// its check page and lands on the review item, in review. The approver
// finds it waiting in their inbox, opens it, is refused with a wrong
// password, approves with the right one (bound to the content hash the page
// showed), and — the domain being at act_after_approval with a registry
// configured — the change is applied. The author reloads and sees it
// applied, with the version the registry gave it.
//
// scripts/test prepares, per run (SK_JS=off and SK_JS=on):
//   SK_REVIEW_TOPIC   a stream in SK_CLUSTER whose recorded schema is the
//                     Order record below (id, amount), in a domain at
//                     act_after_approval that requires one approval and
//                     names SK_APPROVER_USER; the cluster has a Schema
//                     Registry (the double) the apply registers into.
//   SK_OWNER_USER / SK_OWNER_PASSWORD        the author (may propose).
//   SK_APPROVER_USER / SK_APPROVER_PASSWORD  a user with the approver role.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { MODE, flash, hydrated, launch, post, signedInAs } from '../support.mjs';

const AUTHOR = process.env.SK_OWNER_USER;
const AUTHOR_PW = process.env.SK_OWNER_PASSWORD;
const APPROVER = process.env.SK_APPROVER_USER;
const APPROVER_PW = process.env.SK_APPROVER_PASSWORD;
const CLUSTER = process.env.SK_CLUSTER;
const TOPIC = process.env.SK_REVIEW_TOPIC;

// The stream's schema plus an optional field with a default: every reader
// of the old schema can read it, and it can read the old data.
const PROPOSED = JSON.stringify({
  type: 'record', name: 'Order',
  fields: [
    { name: 'id', type: 'string' },
    { name: 'amount', type: 'double' },
    { name: 'note', type: ['null', 'string'], default: null },
  ],
});

let browser;
before(async () => {
  browser = await launch();
});
after(async () => browser?.close());

const problems = [];

// A new browser context for one person, signed in at `path`.
const signedIn = (path, username, password) =>
  signedInAs(browser, problems, path, username, password);

// Submits a form of the item page: a page load (a redirect back to the
// item) in both runs.
const submit = (page, form) => post(page, `form[data-testid="${form}"] button[type="submit"]`);

async function itemState(page) {
  return (await page.textContent('[data-testid="item-state"]')).trim();
}

// Waits until the item shows `want`, reloading now and then (the apply may
// finish just after the approval answers).
async function waitForState(page, want) {
  for (let i = 0; i < 40; i += 1) {
    if (await itemState(page) === want) return;
    await page.waitForTimeout(500);
    if (i % 4 === 3) {
      await page.reload();
      await hydrated(page);
    }
  }
  assert.equal(await itemState(page), want);
}

test(`${MODE}: an author proposes a change, an approver approves it with their password, and it is applied`,
  { skip: !(TOPIC && APPROVER) && 'no review fixture' }, async (t) => {
    const check = `/clusters/${CLUSTER}/stream/check?name=${encodeURIComponent(TOPIC)}`;

    // A, the author: paste the change and propose it for review.
    const { context: ca, page: a } = await signedIn(check, AUTHOR, AUTHOR_PW);
    assert.equal(new URL(a.url()).pathname, `/clusters/${CLUSTER}/stream/check`);
    // The editor starts from the stream's current schema.
    assert.match(await a.inputValue('form[data-testid="check-form"] textarea[name="schema"]'), /"amount"/);
    await a.selectOption('form[data-testid="check-form"] select[name="schema_type"]', 'AVRO');
    await a.fill('form[data-testid="check-form"] textarea[name="schema"]', PROPOSED);
    await a.fill('form[data-testid="check-form"] input[name="title"]', `Orders get a note (${MODE})`);
    await Promise.all([
      a.waitForURL(/\/review\/\d+$/),
      a.click('form[data-testid="check-form"] button[data-testid="propose-review"]'),
    ]);
    await hydrated(a);
    const id = new URL(a.url()).pathname.split('/').pop();
    assert.equal(await itemState(a), 'in review');
    assert.match(await a.textContent('h1'), new RegExp(`Orders get a note \\(${MODE}\\)`), 'the title given');
    assert.equal(await a.locator('[data-testid="flash"]').count(), 1, 'one success note');
    assert.match(await flash(a), new RegExp(`Proposed for review as item ${id}`));
    // The item page's weight (BENCHMARKS.md, "Hydrated wasm").
    const html = await (await a.request.get(a.url())).body();
    t.diagnostic(`/review/${id}: ${html.length} bytes of HTML`);
    const hash = (await a.textContent('[data-testid="content-hash"]')).trim();
    assert.match(hash, /^[0-9a-f]{64}$/, 'the full content hash is shown');
    assert.match(await a.textContent('[data-testid="diff"]'), /note/, 'the diff shows the new field');
    // Checked at once; adding an optional field breaks no reader (whether
    // it says COMPATIBLE or UNDECIDED depends on what history is known).
    assert.notEqual((await a.textContent('[data-testid="item-check"] [data-testid="verdict"]')).trim(), 'INCOMPATIBLE');
    // Nobody approves their own change: no form, at most the reason why.
    assert.equal(await a.locator('form[data-testid="approve-form"]').count(), 0);
    if (await a.locator('[data-testid="approve-refusal"]').count() > 0) {
      assert.match(await a.textContent('[data-testid="approve-refusal"]'), /You proposed this change/);
    }

    // B, the approver: the item waits in their inbox (the default tab).
    const { context: cb, page: b } = await signedIn('/review', APPROVER, APPROVER_PW);
    assert.equal(new URL(b.url()).pathname, '/review');
    assert.equal(await b.locator('[data-testid="tab-waiting"][aria-current="page"]').count(), 1);
    assert.ok(await b.isVisible('[data-testid="inbox-badge"]'), 'the header counts what waits for them');
    const row = b.locator(`table[data-testid="review-items"] tr[data-item="${id}"]`);
    assert.equal(await row.count(), 1, 'the proposal is waiting for the approver');
    const rowText = await row.textContent();
    assert.match(rowText, new RegExp(TOPIC));
    assert.match(rowText, /in review/);
    assert.match(rowText, /0 of 1/);
    await Promise.all([b.waitForURL(new RegExp(`/review/${id}$`)), row.locator('a').first().click()]);
    await hydrated(b);
    assert.equal(await itemState(b), 'in review');
    assert.equal((await b.textContent('[data-testid="content-hash"]')).trim(), hash);
    // The approval is bound to exactly the content the page shows.
    const approve = 'form[data-testid="approve-form"]';
    assert.equal(await b.getAttribute(`${approve} input[name="content_hash"]`, 'value'), hash);

    // The decision comes after the diff; approve and reject apart.
    const after = await b.evaluate(() => {
      const diff = document.querySelector('[data-testid="diff"]');
      const decide = document.querySelector('[data-testid="decide"]');
      return Boolean(diff.compareDocumentPosition(decide) & Node.DOCUMENT_POSITION_FOLLOWING);
    });
    assert.ok(after, 'the decision form is after the diff');
    assert.equal(await b.locator('[data-testid="approve-box"] form[data-testid="reject-form"]').count(), 0);
    assert.equal(await b.locator('[data-testid="reject-box"] form[data-testid="reject-form"]').count(), 1);

    // A wrong password is refused at the field, and nothing is approved.
    await b.fill(`${approve} input[name="password"]`, 'certainly-not-the-password');
    await submit(b, 'approve-form');
    await b.waitForSelector(`${approve} [data-testid="password-error"]`, { timeout: 15000 });
    assert.match(await b.textContent(`${approve} [data-testid="password-error"]`), /Confirm the approval with your password/);
    assert.equal(await b.getAttribute(`${approve} input[name="password"]`, 'aria-invalid'), 'true');
    assert.equal(await b.locator('[data-testid="action-notes"] .error').count(), 0, 'not repeated at the top');
    assert.equal(await b.inputValue(`${approve} input[name="password"]`), '', 'a password is never sent back');
    assert.equal(await itemState(b), 'in review');
    assert.match(await b.textContent('[data-testid="approvals"]'), /Nobody has approved it yet/);

    // The right password approves; at act_after_approval it is applied.
    await b.fill(`${approve} input[name="password"]`, APPROVER_PW);
    await submit(b, 'approve-form');
    assert.equal(new URL(b.url()).pathname, `/review/${id}`);
    assert.equal(await b.locator('[data-testid="flash"]').count(), 1, 'one success note');
    assert.match(await flash(b), /You approved revision 1/);
    assert.equal(await b.locator('[data-testid="password-error"]').count(), 0);
    await waitForState(b, 'applied');
    assert.match(await b.textContent('[data-testid="applied-version"]'), /^\d+$/);
    assert.equal(await b.locator(approve).count(), 0, 'an applied item takes no more approvals');
    assert.match(await b.textContent('[data-testid="approvals"]'), /counts/);

    // A sees it applied, with the registry's version.
    await a.reload();
    await hydrated(a);
    assert.equal(await itemState(a), 'applied');
    assert.match(await a.textContent('[data-testid="applied-version"]'), /^\d+$/);

    await ca.close();
    await cb.close();
    assert.deepEqual(problems, []);
  });

test(`${MODE}: a checked schema is proposed from its report, with a title, without pasting it again`,
  { skip: !(TOPIC && APPROVER) && 'no review fixture' }, async () => {
    const check = `/clusters/${CLUSTER}/stream/check?name=${encodeURIComponent(TOPIC)}`;
    const { context, page: a } = await signedIn(check, AUTHOR, AUTHOR_PW);
    // Another optional field on top of whatever the stream holds now.
    const current = JSON.parse(await a.inputValue('form[data-testid="check-form"] textarea[name="schema"]'));
    current.fields.push({ name: 'channel', type: ['null', 'string'], default: null });
    await a.fill('form[data-testid="check-form"] textarea[name="schema"]', JSON.stringify(current));
    await Promise.all([
      a.waitForURL(/\/schema-checks\/\d+$/),
      a.click('form[data-testid="check-form"] button[type="submit"]:not([name])'),
    ]);
    await hydrated(a);
    const form = 'form[data-testid="propose-checked-form"]';
    await a.fill(`${form} input[name="title"]`, `Orders get a channel (${MODE})`);
    await Promise.all([a.waitForURL(/\/review\/\d+$/), a.click(`${form} button[type="submit"]`)]);
    await hydrated(a);
    assert.equal(await itemState(a), 'in review');
    assert.match(await a.textContent('h1'), new RegExp(`Orders get a channel \\(${MODE}\\)`));
    assert.match(await a.textContent('[data-testid="proposed-schema"]'), /channel/, 'exactly the checked schema');
    assert.equal(await a.locator('[data-testid="flash"]').count(), 1, 'one success note');
    // Leave nothing waiting: the author withdraws it.
    await submit(a, 'withdraw-form');
    assert.equal(await itemState(a), 'withdrawn');
    await context.close();
    assert.deepEqual(problems, []);
  });
