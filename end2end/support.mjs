// What every end-to-end spec shares: the browser (the Chromium scripts/test
// installs, headless, quiet), whether this run is hydrated (SK_JS), the wait
// for hydration, and a person's own browser context signed in with a
// password.
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

/** Waits until the page's wasm has hydrated it (at once with JavaScript off). */
export async function hydrated(page) {
  if (JS) await page.waitForSelector('body[data-hydrated="true"]', { timeout: 15000 });
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
