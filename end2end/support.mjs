// What every end-to-end spec shares: the browser (the Chromium scripts/test
// installs, headless, quiet), whether this run has JavaScript (SK_JS; on,
// the pages' islands are hydrated), the wait for hydration, a form post,
// and a person's own browser context signed in with a password.
import { chromium } from 'playwright-core';

export const BASE = process.env.SK_URL;
export const JS = process.env.SK_JS !== 'off';
export const MODE = JS ? 'js' : 'nojs';

export function launch() {
  return chromium.launch({
    executablePath: process.env.SK_CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/**
 * Waits until the page's islands are hydrated: at once with JavaScript off
 * or on a page without an island (it loads no wasm).
 */
export async function hydrated(page) {
  if (JS && (await page.locator('leptos-island').count()) > 0) {
    await page.waitForSelector('body[data-hydrated="true"]', { timeout: 15000 });
  }
}

/**
 * Posts a form by clicking `button`, and waits for the page it leads to.
 * The same in both runs: islands hydrate no form, so every form is a
 * plain post answered by a redirect.
 */
export async function post(page, button) {
  await Promise.all([page.waitForNavigation(), page.click(button)]);
  await hydrated(page);
}

/** The success note the page after a form post shows (ui::flash). */
export async function flash(page) {
  return (await page.textContent('[data-testid="flash"]')).trim();
}

/** Collects the `.wasm` files `page` requests from now on. */
export function wasmRequests(page) {
  const seen = [];
  page.on('request', (r) => {
    if (new URL(r.url()).pathname.endsWith('.wasm')) seen.push(r.url());
  });
  return seen;
}

/**
 * A new browser context for one person: opens `path`, which sends a
 * visitor without a session to sign in and back, and signs in there with
 * the password. Page errors and console errors (but a refused server
 * function's 4xx) go into `problems`, each naming the person and the page.
 */
export async function signedInAs(browser, problems, path, username, password, options = {}) {
  const context = await browser.newContext({ javaScriptEnabled: JS, ...options });
  const page = await context.newPage();
  page.on('pageerror', (e) => problems.push(`${username} on ${page.url()}: page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().includes('status of 4')) {
      problems.push(`${username} on ${page.url()}: console: ${m.text().split('\n')[0]}`);
    }
  });
  await page.goto(BASE + path);
  await page.fill('input[name="username"]', username);
  await page.fill('input[name="password"]', password);
  await Promise.all([page.waitForNavigation(), page.click('form[action="/login"] button[type="submit"]')]);
  await hydrated(page);
  return { context, page };
}
