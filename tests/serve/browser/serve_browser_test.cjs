// kvsweep serve in a real browser: Debian's Chromium driven by puppeteer-core (installed into
// the build tree by install.sh; it never downloads a browser). Every page loads without a
// console message, its charts have the expected series, its links answer; the running page
// follows a real `kvsweep run` on the embedded fleet; the live page draws the sim's /metrics
// next to a stored baseline, a dead URL shown stale. Screenshots at 1400 and 800 px go to
// OUT/screenshots for a person to look at.
//   node serve_browser_test.cjs KVSWEEP_BINARY SOURCE_DIR NODE_MODULES_DIR OUT_DIR
'use strict';

const {spawn, spawnSync} = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const [kvsweep, sourceDir, nodeModules, outDir] = process.argv.slice(2);
const puppeteer = require(path.join(nodeModules, 'puppeteer-core'));

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
  '--no-first-run', '--disable-background-networking', '--disable-component-update',
  '--disable-sync'];
const STEP_LIMIT_MS = 45000;  // the longest any single wait may take

let failures = 0;
let passes = 0;
function check(condition, what) {
  if (condition) {
    passes++;
  } else {
    failures++;
    console.log('FAIL: ' + what);
  }
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'kvsweep-serve-browser-'));
const db = path.join(work, 'kvsweep.db');
const children = [];

// A child in its own process group, killed (with its descendants) at the end.
function start(args, name) {
  const child = spawn(kvsweep, args, {detached: true, stdio: ['ignore', 'pipe', 'pipe']});
  child.output = '';
  child.stdout.on('data', (d) => { child.output += d; });
  child.stderr.on('data', (d) => { child.output += d; });
  child.name = name;
  children.push(child);
  return child;
}

// Whether the child has exited and no process of its group is left, within limitMs.
async function groupGone(child, limitMs) {
  const until = Date.now() + limitMs;
  for (;;) {
    let alive = child.exitCode === null && child.signalCode === null;
    if (!alive) {
      try { process.kill(-child.pid, 0); alive = true; } catch (e) { alive = e.code !== 'ESRCH'; }
    }
    if (!alive) return true;
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function waitFor(what, predicate, limitMs = STEP_LIMIT_MS) {
  const until = Date.now() + limitMs;
  for (;;) {
    const value = await predicate();
    if (value) return value;
    if (Date.now() > until) throw new Error('timed out waiting for ' + what);
    await new Promise((r) => setTimeout(r, 200));
  }
}

function runToEnd(args) {
  const r = spawnSync(kvsweep, args, {encoding: 'utf8', timeout: 120000});
  if (r.status !== 0) throw new Error('kvsweep ' + args.join(' ') + ' exited ' + r.status + ':\n' + r.stdout + r.stderr);
}

// A loopback port nothing listens on.
async function refusedPort() {
  const server = net.createServer();
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const port = server.address().port;
  await new Promise((r) => server.close(r));
  return port;
}

// Opens a page, counting every console message, page error, failed request and HTTP error.
async function open(browser, url, width) {
  const page = await browser.newPage();
  await page.setViewport({width, height: 900});
  page.problems = [];
  page.on('console', (m) => page.problems.push('console ' + m.type() + ': ' + m.text()));
  page.on('pageerror', (e) => page.problems.push('page error: ' + e.message));
  page.on('requestfailed', (r) => {
    // A stream or refresh cut short by closing the page is not the page's fault.
    if (!/ERR_ABORTED/.test(r.failure().errorText)) page.problems.push('request failed: ' + r.url());
  });
  page.on('response', (r) => {
    if (r.status() >= 400) page.problems.push('HTTP ' + r.status() + ': ' + r.url());
  });
  const response = await page.goto(url, {waitUntil: 'load', timeout: STEP_LIMIT_MS});
  check(response.status() === 200, url + ' answers 200 (got ' + response.status() + ')');
  return page;
}

// Every chart's title and the names in its legend.
function charts(page) {
  return page.$$eval('svg.chart', (svgs) => svgs.map((svg) => ({
    title: svg.getAttribute('aria-label'),
    lines: svg.querySelectorAll('polyline.series').length,
    markers: svg.querySelectorAll('g.series.markers').length,
    bars: svg.querySelectorAll('rect.bar').length,
    legend: [...svg.querySelectorAll('g.legend text')].map((t) => t.textContent),
    noData: svg.querySelector('.no-data') !== null,
  })));
}

async function screenshot(page, name) {
  fs.mkdirSync(path.join(outDir, 'screenshots'), {recursive: true});
  for (const width of [1400, 800]) {
    await page.setViewport({width, height: 900});
    await page.screenshot({path: path.join(outDir, 'screenshots', name + '-' + width + '.png'), fullPage: true});
  }
}

// Every same-origin link of the page answers 200.
async function checkLinks(page, base) {
  const hrefs = await page.$$eval('a[href]', (as) => as.map((a) => a.href));
  const local = [...new Set(hrefs.filter((h) => h.startsWith(base)))];
  check(local.length > 0, page.url() + ' has links');
  for (const href of local) {
    const status = await page.evaluate(async (u) => (await fetch(u, {method: 'GET'})).status, href);
    check(status === 200, 'link ' + href + ' from ' + page.url() + ' answers 200 (got ' + status + ')');
  }
}

function noProblems(page, name) {
  check(page.problems.length === 0, name + ' has no console message or failed load: ' + page.problems.join(' | '));
}

async function storedPages(browser, base) {
  // The experiment list.
  let page = await open(browser, base, 1400);
  const rows = await page.$$eval('table.experiments tbody tr', (trs) => trs.length);
  check(rows === 2, 'the list shows both stored experiments (' + rows + ')');
  const headline = await page.$eval('td.headline', (td) => td.textContent);
  check(/Concurrency 4/.test(headline), 'the list shows the headline at the highest level: ' + headline);
  await checkLinks(page, base);
  noProblems(page, 'experiments');
  await screenshot(page, 'experiments');
  await page.close();

  // One experiment: the report's charts and the cells table.
  page = await open(browser, base + 'experiments/1', 1400);
  let c = await charts(page);
  check(c.length === 6, 'the experiment page has the report\'s 6 charts (' + c.length + ')');
  const ttft = c.find((x) => x.title === 'Mean TTFT vs concurrency');
  check(ttft && ttft.lines === 2 && ttft.legend.join() === 'random,prefix-hash',
      'mean TTFT chart: a line per strategy: ' + JSON.stringify(ttft));
  const cells = await page.$$eval('table.cells tbody tr', (trs) => trs.length);
  check(cells === 4, 'the experiment page lists its 4 cells (' + cells + ')');
  await checkLinks(page, base);
  noProblems(page, 'experiment');
  await screenshot(page, 'experiment');
  await page.close();

  // A cell's drill-down: CDF, per replica, commands.
  page = await open(browser, base + 'experiments/1/cells/1', 1400);
  c = await charts(page);
  check(c.length === 2 && c[0].title === 'TTFT CDF' && c[0].lines === 1 && !c[0].noData,
      'the cell page draws its TTFT CDF: ' + JSON.stringify(c[0]));
  check(c[1] && c[1].legend.join() === 'share of requests,cache hit (client)' && c[1].bars >= 2,
      'the cell page draws share and hit per replica: ' + JSON.stringify(c[1]));
  const commands = await page.$$eval('h3 code', (cs) => cs.map((x) => x.textContent));
  check(commands.some((t) => /\/admin\/strategy/.test(t)), 'the first cell lists what was run for it (the fleet\'s strategy set): ' + commands.join(' | '));
  await checkLinks(page, base);
  noProblems(page, 'cell');
  await screenshot(page, 'cell');
  await page.close();

  // Compare: verdicts and intervals.
  page = await open(browser, base + 'compare?a=1&b=2', 1400);
  const verdicts = await page.$$eval('table.compare td span.badge', (bs) => bs.map((b) => b.textContent));
  check(verdicts.length === 4 * 5, 'compare shows a verdict per level and metric (' + verdicts.length + ')');
  check(verdicts.every((v) => ['no change', 'improvement', 'regression', 'insufficient data'].includes(v)),
      'compare verdicts are compare\'s words: ' + [...new Set(verdicts)].join(', '));
  const intervals = await page.$$eval('table.compare tbody tr td:nth-child(6)', (tds) => tds.filter((t) => /^\[/.test(t.textContent)).length);
  check(intervals > 0, 'compare shows bootstrap intervals (' + intervals + ')');
  noProblems(page, 'compare');
  await screenshot(page, 'compare');
  await page.close();

  // History: one chart per level, a line and a rolling median per strategy.
  page = await open(browser, base + 'history?scenario=serve-baseline&metric=ttft_p95_ms', 1400);
  c = await charts(page);
  check(c.length === 2, 'history draws a chart per concurrency level (' + c.length + ')');
  check(c[0] && c[0].lines === 4 && c[0].legend.includes('random rolling median'),
      'history: each strategy\'s line and its rolling median: ' + JSON.stringify(c[0]));
  await checkLinks(page, base);
  noProblems(page, 'history');
  await screenshot(page, 'history');
  await page.close();

  // Unknown ids: a 404 page, still without console errors of its own.
  const missing = await browser.newPage();
  const r = await missing.goto(base + 'experiments/999');
  check(r.status() === 404, 'an unknown experiment is a 404 page');
  check(/no experiment 999/.test(await missing.content()), 'the 404 page says what is missing');
  await missing.close();
}

async function runningPage(browser, base) {
  const sweep = start(['--db', db, 'run', path.join(sourceDir, 'tests/fixtures/serve_running.yaml'), '--no-print', '-o', work], 'run');
  const page = await open(browser, base + 'running', 1400);
  const read = () => page.evaluate(() => {
    const n = (sel) => { const el = document.querySelector(sel); return el ? Number(el.textContent) : null; };
    return {done: n('.requests-done'), cells: n('.cells-done'), lines: document.querySelectorAll('#running svg.chart polyline.series').length,
      finished: document.querySelectorAll('#running ul.finished .badge.done').length};
  });
  const first = await waitFor('the running page to show requests done', async () => {
    const s = await read();
    return s.done !== null && s.done > 0 ? s : null;
  });
  const later = await waitFor('the request count to rise', async () => {
    const s = await read();
    return s.done !== null && s.done > first.done ? s : null;
  });
  check(later.done > first.done, 'the running page\'s request count rose (' + first.done + ' -> ' + later.done + ') without a reload');
  check(later.lines === 2, 'the running page draws the cell\'s TTFT p50 and p95 over time (' + later.lines + ' lines)');
  await screenshot(page, 'running');
  const finished = await waitFor('a cell to finish', async () => {
    const s = await read();
    return s.finished >= 1 ? s : null;
  });
  check(finished.cells >= 1, 'the running page shows a finished cell (' + finished.cells + ' done)');
  noProblems(page, 'running');
  await page.close();
  await waitFor('the sweep to end', async () => sweep.exitCode !== null, 60000);
  check(sweep.exitCode === 0, 'the watched sweep ended well: ' + sweep.output.slice(-400));
}

async function livePage(browser, base) {
  const fleet = start(['sim', 'serve', '--port', '0', '--replicas', '2', '--health-interval', '0'], 'sim');
  const urls = await waitFor('the simulated fleet to start', async () => {
    const replicas = [...fleet.output.matchAll(/replica\s+(http:\/\/127\.0\.0\.1:\d+)/g)].map((m) => m[1]);
    const router = /router\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(fleet.output);
    return replicas.length === 2 && router ? {router: router[1], replicas} : null;
  });
  start(['--db', path.join(work, 'load.db'), '-q', 'load', '--url', urls.router, '--model', 'sim-model',
    '--concurrency', '4', '--duration', '40s', '--max-tokens', '8'], 'load');
  const dead = 'http://127.0.0.1:' + (await refusedPort()) + '/metrics';
  const metrics = urls.replicas.map((u) => u + '/metrics').concat([dead]);
  const query = 'baseline=1&arm=random&concurrency=4&urls=' + encodeURIComponent(metrics.join('\n'));
  const page = await open(browser, base + 'live?' + query, 1400);
  const state = () => page.evaluate(() => {
    const svg = document.querySelector('figure[data-svg="svg_ttft"] svg');
    const series = svg ? [...svg.querySelectorAll('polyline.series')].map((p) => ({
      dashed: p.hasAttribute('stroke-dasharray'), points: p.getAttribute('points').split(' ').length})) : [];
    return {series, legend: svg ? [...svg.querySelectorAll('g.legend text')].map((t) => t.textContent) : [],
      events: Number(document.getElementById('live').dataset.events || 0),
      stale: [...document.querySelectorAll('tbody[data-sources] tr')].map((tr) => tr.textContent),
      p50: document.querySelector('[data-field="latest.ttft_p50_ms"]').textContent};
  });
  const drawn = await waitFor('a live TTFT line of 2 points or more', async () => {
    const s = await state();
    const live = s.series.filter((x) => !x.dashed);
    return live.length === 2 && live[0].points >= 2 ? s : null;
  });
  check(drawn.series.filter((x) => x.dashed).length === 2, 'the baseline p50 and p95 are drawn dashed beside the live lines: ' + JSON.stringify(drawn.series));
  check(drawn.legend.some((t) => /^baseline p50 \(random @ 4/.test(t)), 'the legend names the baseline: ' + drawn.legend.join(' | '));
  check(drawn.events >= 2, 'the page follows the server-sent events (' + drawn.events + ')');
  check(/^\d/.test(drawn.p50), 'the live TTFT p50 figure is a number: ' + drawn.p50);
  check(drawn.stale.length === 3 && drawn.stale.filter((t) => /stale/.test(t)).length === 1 &&
      /stale/.test(drawn.stale[2]), 'the dead URL, and only it, shows as stale: ' + drawn.stale.join(' | '));
  noProblems(page, 'live');
  await screenshot(page, 'live');
  await page.close();
}

async function main() {
  runToEnd(['--db', db, '-q', 'run', path.join(sourceDir, 'tests/fixtures/serve_baseline.yaml'), '--no-print', '-o', work]);
  runToEnd(['--db', db, '-q', 'run', path.join(sourceDir, 'tests/fixtures/serve_baseline.yaml'), '--no-print', '-o', work]);
  const server = start(['--db', db, 'serve', '--port', '0', '--scrape-interval', '1', '--window', '10'], 'serve');
  const base = await waitFor('kvsweep serve to print its URL', async () => {
    const m = /kvsweep serve: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(server.output);
    return m ? m[1] : null;
  }, 10000);
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_FLAGS.concat(['--user-data-dir=' + path.join(work, 'chromium-profile')]),
  });
  try {
    await storedPages(browser, base);
    await runningPage(browser, base);
    await livePage(browser, base);
  } finally {
    await browser.close();
  }
}

main().catch((e) => {
  failures++;
  console.log('FAIL: ' + (e.stack || e));
}).finally(async () => {
  for (const child of children) {
    try { process.kill(-child.pid, 'SIGTERM'); } catch (e) { /* already gone */ }
  }
  // The temp directory goes only once every child's process group has gone: a killed child
  // (or its descendants) still closing the store or writing a report would otherwise make
  // rmSync fail with ENOTEMPTY. A group that ignores SIGTERM gets SIGKILL.
  for (const child of children) {
    if (!(await groupGone(child, 15000))) {
      try { process.kill(-child.pid, 'SIGKILL'); } catch (e) { /* gone meanwhile */ }
      if (!(await groupGone(child, 15000))) console.log('note: ' + child.name + ' outlived SIGKILL');
    }
  }
  for (const child of children) {
    if (failures > 0) console.log('--- ' + child.name + ' output (tail):\n' + child.output.slice(-1500));
  }
  fs.rmSync(work, {recursive: true, force: true, maxRetries: 10, retryDelay: 200});
  console.log(passes + ' passed, ' + failures + ' failed');
  process.exit(failures === 0 ? 0 : 1);
});
