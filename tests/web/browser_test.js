// SPDX-License-Identifier: Apache-2.0
// The page in a real browser: Debian's chromium, headless, driven by puppeteer-core,
// against loopback servers with range support (range_server.py) that count the bytes
// they send. Run through run_browser_tests.sh, which skips when a tool is missing.
//
// Cases:
// - corpus files chosen through the file input, and the same files as URLs: each gets
//   the verdict, format and error code of the native `stguard check --json`;
// - a 16 GiB safetensors URL is valid with under 1 MB sent, and so is a 64 MiB PyTorch
//   checkpoint URL (its ZIP records only);
// - a folder chosen through the folder input is checked and linted like the native
//   `check` and `lint`;
// - a folder whose check reads a 48 MiB file shows its progress while it runs (files
//   opened, bytes read), and a final count once done;
// - tensor names holding <script> are shown as text, and no script runs;
// - a URL on a second origin works with CORS headers, and is reported clearly without
//   them (no Allow-Origin; no Expose-Headers: Content-Range);
// - a server without range support is reported, and the transfer stopped.
//
// Environment: STGUARD_PUPPETEER_DIR (where puppeteer-core is installed), STGUARD_CHROMIUM,
// STGUARD_WEB_DIR (the built page, build-web/), STGUARD_CLI (the native stguard),
// STGUARD_WEB_CASES (comma-separated case names, to run only some).
'use strict';

const assert = require('node:assert/strict');
const childProcess = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');

const REPO = path.resolve(__dirname, '..', '..');
const PUPPETEER_DIR = process.env.STGUARD_PUPPETEER_DIR || '/root/.cache/stguard-web';
const CHROMIUM = process.env.STGUARD_CHROMIUM || '/usr/bin/chromium';
const WEB_DIR = path.resolve(process.env.STGUARD_WEB_DIR || path.join(REPO, 'build-web'));
const CLI = path.resolve(process.env.STGUARD_CLI || path.join(REPO, 'build', 'stguard'));
const PYTHON = '/usr/bin/python3';
const puppeteer = require(path.join(PUPPETEER_DIR, 'node_modules', 'puppeteer-core'));

// The 16 GiB file must be judged with less than this sent.
const BIG_FILE_BUDGET = 1000 * 1000;
// A server without range support starts sending the whole 16 GiB; the page must stop it
// long before (the socket buffers let a few megabytes through).
const NO_RANGE_BUDGET = 256 * 1024 * 1024;
const CHECK_TIMEOUT_MS = 120 * 1000;

// The corpora compared with the native CLI: every file chosen through the file input;
// as URLs (slower: a few requests each), every file of the small corpora and every k-th
// file (in name order) of the large fuzz corpora.
const CORPORA = [
  {dir: 'corpus/valid', every: 1},
  {dir: 'corpus/invalid', every: 1},
  {dir: 'corpus/gguf/refuse', every: 1},
  {dir: 'corpus/torch/valid', every: 1},
  {dir: 'corpus/torch/torch2', every: 1},
  {dir: 'corpus/torch/refuse', every: 1},
  {dir: 'corpus/fuzz_gguf', every: 1},
  {dir: 'corpus/fuzz_header', every: 4},
  {dir: 'corpus/fuzz_npy', every: 4},
  {dir: 'corpus/fuzz_npz', every: 4},
  {dir: 'corpus/fuzz_torch_checkpoint', every: 8},
  {dir: 'corpus/fuzz_zip', every: 4},
  {dir: 'corpus/fuzz_pickle', every: 8},
];

const log = (...args) => console.log('[web]', ...args);

// ---------------------------------------------------------------------------------------
// Fixtures, servers, the native reference

function makeFixtures(dir) {
  const out = childProcess.execFileSync(PYTHON, [path.join(__dirname, 'make_fixtures.py'), dir]);
  return JSON.parse(out.toString());
}

// startServers runs range_server.py over a root holding the page (app/), the corpora
// (corpus/) and the fixtures (fixtures/), one server per origin.
async function startServers(root) {
  const origins = {main: 'plain', cors: 'cors', nocors: 'plain', noexpose: 'cors-noexpose',
                   norange: 'norange,cors'};
  const args = [path.join(__dirname, 'range_server.py'), '--root', root];
  for (const [name, flags] of Object.entries(origins)) args.push('--origin', `${name}=${flags}`);
  const server = childProcess.spawn(PYTHON, args, {stdio: ['pipe', 'pipe', 'inherit']});
  const firstLine = await new Promise((resolve, reject) => {
    readline.createInterface({input: server.stdout}).once('line', resolve);
    server.once('exit', (code) => reject(new Error(`range_server.py exited (${code})`)));
  });
  const ports = JSON.parse(firstLine);
  const urls = {};
  for (const name of Object.keys(origins)) urls[name] = `http://127.0.0.1:${ports[name]}`;
  return {process: server, urls};
}

async function serverStats(origin) {
  const response = await fetch(`${origin}/__stats`);
  return response.json();
}

async function resetServer(origin) {
  await fetch(`${origin}/__reset`);
}

// nativeResults runs `stguard check --json` over the files: {path: envelope}.
function nativeResults(files) {
  const run = childProcess.spawnSync(CLI, ['check', '--json', '--', ...files],
                                     {maxBuffer: 256 * 1024 * 1024});
  if (run.error) throw run.error;
  const results = {};
  for (const line of run.stdout.toString().split('\n')) {
    if (line.trim() === '') continue;
    const envelope = JSON.parse(line);
    results[envelope.file] = envelope;
  }
  for (const file of files) assert.ok(results[file], `no native result for ${file}`);
  return results;
}

// corpusFiles returns [{dir, files: [names]}]; `sampled` takes every k-th file only.
function corpusFiles(sampled) {
  const groups = [];
  for (const {dir, every: k} of CORPORA) {
    const every = sampled ? k : 1;
    const full = path.join(REPO, dir);
    if (!fs.existsSync(full)) continue;
    const names = fs.readdirSync(full).filter((n) => fs.statSync(path.join(full, n)).isFile())
                      .sort();
    groups.push({dir, files: names.filter((_, i) => i % every === 0)});
  }
  return groups;
}

// ---------------------------------------------------------------------------------------
// The page

async function openPage(browser, url) {
  const page = await browser.newPage();
  page.errors = [];
  page.on('pageerror', (error) => page.errors.push(String(error)));
  page.on('console', (message) => {
    if (message.type() === 'error') page.errors.push(message.text());
  });
  await page.goto(url, {waitUntil: 'load'});
  return page;
}

// waitForResults waits until the page shows at least `count` results and has no check
// pending.
async function waitForResults(page, count) {
  await page.waitForFunction(
      (n) => document.querySelectorAll('#results > .result').length >= n &&
             document.documentElement.dataset.pending === '0' &&
             !document.querySelector('.result[data-state="pending"]'),
      {timeout: CHECK_TIMEOUT_MS, polling: 100}, count);
}

// readResults returns what the page shows for each top-level result.
function readResults(page) {
  return page.$$eval('#results > .result', (sections) => sections.map((section) => {
    const detail = {};
    for (const dt of section.querySelectorAll(':scope > .error-detail > dt')) {
      detail[dt.textContent] = dt.nextElementSibling.textContent;
    }
    const members = Array.from(section.querySelectorAll(':scope .files .result'));
    return {
      file: section.getAttribute('data-file'),
      format: section.getAttribute('data-format'),
      verdict: section.getAttribute('data-verdict'),
      code: section.getAttribute('data-code'),
      message: detail.message || '',
      notes: Array.from(section.querySelectorAll(':scope > .notes li')).map((li) => li.textContent),
      tensors: Array.from(section.querySelectorAll(':scope > details > table.tensors tbody tr'))
                   .map((tr) => tr.getAttribute('data-name')),
      findings: Array.from(section.querySelectorAll('table.findings tbody tr')).map((tr) => ({
        rule: tr.getAttribute('data-rule'),
        tensor: tr.querySelector('td.name').textContent,
      })),
      members: members.map((m) => ({file: m.getAttribute('data-file'),
                                    verdict: m.getAttribute('data-verdict')})),
    };
  }));
}

function pageUrl(servers, urls) {
  const query = urls.map((u) => `url=${encodeURIComponent(u)}`).join('&');
  return `${servers.urls.main}/app/index.html${query ? `?${query}` : ''}`;
}

// Reading by ranges skips checks that need bytes a verdict otherwise does not read (the
// library's CheckSource documents which): where the native CLI fails a file for such a
// check, the page may find it valid or failing a rule checked later, but only if one of its
// notes says the check was skipped. Error code -> what the note must say.
const SKIPPED_CHECKS = {
  ZipChecksum: /CRC/i,
  ZipFormat: /local headers/i,
  ZipLayout: /local headers/i,
  ZipHeaderMismatch: /local headers/i,
  GgufNonZeroPadding: /padding/i,
  DeflateData: /stream up to its \.npy header only/i,
};

// compare checks that the page's result matches the native envelope: format, verdict
// and code; a skipped check the page names in a note is counted in `skipped`.
function compare(label, shown, native, mismatches, skipped) {
  const want = {format: native.format, verdict: native.verdict,
                code: native.verdict === 'valid' ? null : native.code};
  const got = {format: shown.format, verdict: shown.verdict, code: shown.code};
  if (JSON.stringify(want) === JSON.stringify(got)) return;
  const note = SKIPPED_CHECKS[native.code];
  if (shown.format === native.format && note && shown.code !== native.code &&
      shown.notes.some((n) => note.test(n))) {
    skipped[native.code] = (skipped[native.code] || 0) + 1;
    return;
  }
  mismatches.push(`${label}: page ${JSON.stringify(got)} (${shown.message}), ` +
                  `native ${JSON.stringify(want)} (${native.message || ''})`);
}

function skippedText(skipped) {
  const entries = Object.entries(skipped);
  if (entries.length === 0) return '';
  return `; judged past a check the page's note says was skipped: ` +
         entries.map(([code, n]) => `${n} ${code}`).join(', ');
}

function failOnMismatches(mismatches, what) {
  if (mismatches.length === 0) return;
  throw new Error(`${mismatches.length} ${what} differ from the native CLI:\n  ` +
                  mismatches.join('\n  '));
}

// ---------------------------------------------------------------------------------------
// Cases

const CASES = {};

CASES.corpus_files = async ({browser, servers}) => {
  const mismatches = [];
  const skipped = {};
  let count = 0;
  const page = await openPage(browser, pageUrl(servers, []));
  for (const group of corpusFiles(false)) {
    const files = group.files.map((n) => path.join(REPO, group.dir, n));
    const native = nativeResults(files);
    await page.evaluate(() => document.getElementById('results').replaceChildren());
    const input = await page.$('#file-input');
    await input.uploadFile(...files);
    await waitForResults(page, files.length);
    const shown = new Map((await readResults(page)).map((r) => [r.file, r]));
    for (const file of files) {
      const result = shown.get(path.basename(file));
      if (!result) {
        mismatches.push(`${file}: no result on the page`);
        continue;
      }
      compare(path.relative(REPO, file), result, native[file], mismatches, skipped);
      count += 1;
    }
  }
  assert.deepEqual(page.errors, [], 'the page logged errors');
  await page.close();
  failOnMismatches(mismatches, 'files');
  return `${count} corpus files chosen through the file input match the native CLI` +
         skippedText(skipped);
};

CASES.corpus_urls = async ({browser, servers}) => {
  const mismatches = [];
  const skipped = {};
  let count = 0;
  for (const group of corpusFiles(true)) {
    const files = group.files.map((n) => path.join(REPO, group.dir, n));
    const native = nativeResults(files);
    // Relative to the page, as a link beside it would name them.
    const urls = group.files.map((n) => `../${group.dir}/${encodeURIComponent(n)}`);
    const page = await openPage(browser, pageUrl(servers, urls));
    await waitForResults(page, urls.length);
    const shown = new Map((await readResults(page)).map((r) => [r.file, r]));
    group.files.forEach((name, i) => {
      const absolute = new URL(urls[i], `${servers.urls.main}/app/index.html`).href;
      const result = shown.get(absolute);
      if (!result) {
        mismatches.push(`${absolute}: no result on the page`);
        return;
      }
      compare(absolute, result, native[files[i]], mismatches, skipped);
      count += 1;
    });
    assert.deepEqual(page.errors, [], 'the page logged errors');
    await page.close();
  }
  failOnMismatches(mismatches, 'URLs');
  return `${count} corpus files read as URLs match the native CLI` + skippedText(skipped);
};

CASES.big_url = async ({browser, servers}) => {
  await resetServer(servers.urls.main);
  const page = await openPage(browser, pageUrl(servers, ['../fixtures/big.safetensors']));
  await waitForResults(page, 1);
  const [result] = await readResults(page);
  await page.close();
  const stats = await serverStats(servers.urls.main);
  const sent = stats.by_path['/fixtures/big.safetensors'] || 0;
  const requests = stats.requests.filter(([p]) => p === '/fixtures/big.safetensors').length;
  assert.equal(result.verdict, 'valid', `16 GiB file: ${result.message}`);
  assert.equal(result.format, 'safetensors');
  assert.deepEqual(result.tensors, ['w']);
  assert.ok(sent < BIG_FILE_BUDGET, `16 GiB file: ${sent} bytes sent`);
  return `16 GiB safetensors URL valid with ${sent} bytes sent in ${requests} request(s)`;
};

CASES.folder_lint = async ({browser, servers, fixtures}) => {
  const folder = path.join(fixtures, 'lintmodel');
  const native = nativeResults([folder])[folder];
  const lint = JSON.parse(childProcess.spawnSync(CLI, ['lint', '--json', folder]).stdout);
  const page = await openPage(browser, pageUrl(servers, []));
  const input = await page.$('#folder-input');
  await input.uploadFile(folder);
  await waitForResults(page, 1);
  const [result] = await readResults(page);
  assert.deepEqual(page.errors, [], 'the page logged errors');
  await page.close();
  assert.equal(result.file, 'lintmodel');
  assert.equal(result.format, 'folder');
  assert.equal(result.verdict, native.verdict, `folder: ${result.message}`);
  const want = lint.findings.map((f) => ({rule: f.rule, tensor: f.tensor}));
  assert.ok(want.length > 0, 'the native lint has no findings to compare');
  assert.deepEqual(result.findings, want, 'lint findings differ from the native CLI');
  // The folder check lists the files it examined besides the shards, by their path in
  // the folder.
  assert.deepEqual(result.members, [{file: 'extra/bias.npy', verdict: 'valid'}]);
  return `folder chosen through the folder input: ${result.verdict}, ` +
         `${result.findings.length} lint findings as native`;
};

// watchProgress records, in the page, each text the progress line of a pending result
// shows, as the page draws it.
async function watchProgress(page) {
  await page.evaluate(() => {
    window.__progressSeen = [];
    new MutationObserver(() => {
      for (const line of document.querySelectorAll('.result[data-state="pending"] > .progress-line')) {
        const text = line.textContent;
        if (window.__progressSeen.at(-1) !== text) window.__progressSeen.push(text);
      }
    }).observe(document.getElementById('results'),
               {subtree: true, childList: true, characterData: true, attributes: true});
  });
}

CASES.folder_progress = async ({browser, servers, fixtures}) => {
  const folder = path.join(fixtures, 'bigfolder');
  const native = nativeResults([folder])[folder];
  const page = await openPage(browser, pageUrl(servers, []));
  await watchProgress(page);
  await (await page.$('#folder-input')).uploadFile(folder);
  await waitForResults(page, 1);
  const [result] = await readResults(page);
  const seen = await page.evaluate(() => window.__progressSeen);
  const final = await page.$eval('#results > .result > .progress-line', (line) => ({
    text: line.textContent,
    value: line.querySelector('progress').value,
    max: line.querySelector('progress').max,
  }));
  assert.deepEqual(page.errors, [], 'the page logged errors');
  await page.close();
  assert.equal(result.verdict, native.verdict, `folder: ${result.message}`);
  // While pending: the files opened and bytes read, growing, and the file being read.
  const reading = seen.filter((text) => /reading extra\/blob\.bin/.test(text));
  assert.ok(reading.length >= 2, `the copy of the 48 MiB file showed no progress: ${seen}`);
  // Once done: every file opened, no file being read, and the bytes read counted.
  assert.equal(final.value, final.max, `final progress ${final.value} of ${final.max}`);
  assert.match(final.text, /^opened 2 of 2 files, read [\d.]+ MiB \(the folder holds 48\.0 MiB\)$/);
  return `folder with a 48 MiB file: ${seen.length} progress texts while pending, ` +
         `then "${final.text}"`;
};

// A safetensors URL costs at most 3 requests: the prefix, the header, the size.
const SAFETENSORS_REQUESTS = 3;

CASES.large_files = async ({browser, servers, fixtures, large}) => {
  const files = large.map((name) => path.join(fixtures, 'large', name));
  const native = nativeResults(files);
  // As URLs on the second origin (CORS), so that the reads after the first (synchronous
  // range requests from inside the WebAssembly reader) cross origins too.
  const urls = large.map((name) => `${servers.urls.cors}/fixtures/large/${name}`);
  await resetServer(servers.urls.cors);
  const page = await openPage(browser, pageUrl(servers, urls));
  await (await page.$('#file-input')).uploadFile(...files);
  await waitForResults(page, 2 * files.length);
  const shown = new Map((await readResults(page)).map((r) => [r.file, r]));
  assert.deepEqual(page.errors, [], 'the page logged errors');
  await page.close();
  const stats = await serverStats(servers.urls.cors);
  const mismatches = [];
  const skipped = {};
  const costs = [];
  large.forEach((name, i) => {
    for (const key of [name, urls[i]]) {
      const result = shown.get(key);
      if (!result) mismatches.push(`${key}: no result on the page`);
      else compare(key, result, native[files[i]], mismatches, skipped);
    }
    const urlPath = `/fixtures/large/${name}`;
    const requests = stats.requests.filter(([p]) => p === urlPath).length;
    const size = fs.statSync(files[i]).size;
    costs.push(`${name} ${stats.by_path[urlPath] || 0} of ${size} bytes in ${requests}`);
    if (name.endsWith('.safetensors') && requests > SAFETENSORS_REQUESTS) {
      mismatches.push(`${name}: ${requests} requests, over the budget of ${SAFETENSORS_REQUESTS}`);
    }
    // A PyTorch ZIP is judged from its end records, central directory and data.pkl.
    const sent = stats.by_path[urlPath] || 0;
    if (name === 'big_state.pt' && sent >= BIG_FILE_BUDGET) {
      mismatches.push(`${name}: ${sent} bytes sent, over the budget of ${BIG_FILE_BUDGET}`);
    }
  });
  failOnMismatches(mismatches, 'large files');
  return `${large.length} files larger than the first read, as files and as cross-origin ` +
         `URLs, match the native CLI${skippedText(skipped)}; sent: ${costs.join('; ')}`;
};

// dropFiles drops paths (files or folders) on the page's drop zone as the OS would, so
// the page sees DataTransfer items and reads folders through webkitGetAsEntry.
async function dropFiles(page, paths) {
  const zone = await page.$('#drop-zone');
  const box = await zone.boundingBox();
  const session = await page.target().createCDPSession();
  const data = {items: [], files: paths, dragOperationsMask: 1};
  for (const type of ['dragEnter', 'dragOver', 'drop']) {
    await session.send('Input.dispatchDragEvent',
                       {type, x: box.x + box.width / 2, y: box.y + box.height / 2, data});
  }
  await session.detach();
}

CASES.drop_folder = async ({browser, servers, fixtures}) => {
  const folder = path.join(fixtures, 'lintmodel');
  const file = path.join(fixtures, 'script_names.safetensors');
  const native = nativeResults([folder, file]);
  const page = await openPage(browser, pageUrl(servers, []));
  await dropFiles(page, [folder, file]);
  await waitForResults(page, 2);
  const results = new Map((await readResults(page)).map((r) => [r.file, r]));
  assert.deepEqual(page.errors, [], 'the page logged errors');
  await page.close();
  assert.deepEqual([...results.keys()].sort(), ['lintmodel', 'script_names.safetensors']);
  const dropped = results.get('lintmodel');
  assert.equal(dropped.format, 'folder');
  assert.equal(dropped.verdict, native[folder].verdict, `folder: ${dropped.message}`);
  assert.ok(dropped.findings.length > 0, 'the dropped folder was not linted');
  assert.equal(results.get('script_names.safetensors').verdict, native[file].verdict);
  return 'a folder and a file dropped on the page: the folder walked and linted, the file checked';
};

CASES.script_names = async ({browser, servers, fixtures, names}) => {
  const file = path.join(fixtures, 'script_names.safetensors');
  const page = await openPage(browser, pageUrl(servers, ['../fixtures/script_names.safetensors']));
  await (await page.$('#file-input')).uploadFile(file);
  await waitForResults(page, 2);
  const results = await readResults(page);
  const seen = await page.evaluate(() => ({
    injected: window.__stguardInjected,
    elements: document.querySelectorAll('#results script, #results img, #results b').length,
    cells: Array.from(document.querySelectorAll('table.tensors td.name'))
               .map((td) => td.textContent),
    text: document.getElementById('results').innerText,
  }));
  assert.deepEqual(page.errors, [], 'the page logged errors');
  await page.close();
  assert.equal(results.length, 2);
  for (const result of results) {
    assert.equal(result.verdict, 'valid', `${result.file}: ${result.message}`);
    assert.deepEqual(result.tensors, names, 'data-name differs from the tensor names');
  }
  assert.equal(seen.injected, undefined, 'a script from the file ran');
  assert.equal(seen.elements, 0, 'the file\'s text became elements');
  assert.deepEqual(seen.cells, [...names, ...names]);
  for (const name of names) assert.ok(seen.text.includes(name), `${name} is not visible`);
  assert.ok(seen.text.includes('<b>note</b>'), 'the metadata key is not shown as text');
  return 'tensor names holding <script> are shown as text, as file and as URL; nothing ran';
};

CASES.cross_origin = async ({browser, servers}) => {
  const pathname = '/corpus/valid/worked_example.safetensors';
  const urls = [servers.urls.cors + pathname, servers.urls.nocors + pathname,
                servers.urls.noexpose + pathname];
  const page = await openPage(browser, pageUrl(servers, urls));
  await waitForResults(page, 3);
  const results = new Map((await readResults(page)).map((r) => [r.file, r]));
  await page.close();
  const allowed = results.get(urls[0]);
  assert.equal(allowed.verdict, 'valid', `with CORS: ${allowed.message}`);
  assert.deepEqual(allowed.tensors, ['w']);
  const refused = results.get(urls[1]);
  assert.equal(refused.verdict, 'error');
  assert.equal(refused.code, 'IoError');
  assert.match(refused.message, /CORS/);
  assert.match(refused.message, /Access-Control-Allow-Origin/);
  const hidden = results.get(urls[2]);
  assert.equal(hidden.verdict, 'error');
  assert.match(hidden.message, /Access-Control-Expose-Headers: Content-Range/);
  return 'second origin: valid with CORS; without Allow-Origin or without Expose-Headers ' +
         'reported as such';
};

CASES.no_range = async ({browser, servers}) => {
  await resetServer(servers.urls.norange);
  const url = `${servers.urls.norange}/fixtures/big.safetensors`;
  const page = await openPage(browser, pageUrl(servers, [url]));
  await waitForResults(page, 1);
  const [result] = await readResults(page);
  await page.close();
  await new Promise((resolve) => setTimeout(resolve, 500));  // let the server notice
  const sent = (await serverStats(servers.urls.norange)).bytes_sent;
  assert.equal(result.verdict, 'error');
  assert.equal(result.code, 'IoError');
  assert.match(result.message, /does not support range requests/);
  assert.ok(sent < NO_RANGE_BUDGET, `${sent} bytes of the 16 GiB sent before the stop`);
  return `a server without range support is reported; ${sent} bytes sent before the stop`;
};

// ---------------------------------------------------------------------------------------

async function main() {
  const selected = process.env.STGUARD_WEB_CASES ? process.env.STGUARD_WEB_CASES.split(',')
                                                 : Object.keys(CASES);
  const temp = fs.mkdtempSync(path.join(os.tmpdir(), 'stguard-web-'));
  const root = path.join(temp, 'root');
  const fixtures = path.join(temp, 'fixtures');
  fs.mkdirSync(root);
  const made = makeFixtures(fixtures);
  fs.symlinkSync(WEB_DIR, path.join(root, 'app'));
  fs.symlinkSync(path.join(REPO, 'corpus'), path.join(root, 'corpus'));
  fs.symlinkSync(fixtures, path.join(root, 'fixtures'));
  const servers = await startServers(root);
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  let failures = 0;
  try {
    for (const name of selected) {
      const started = Date.now();
      try {
        const summary = await CASES[name]({browser, servers, fixtures, names: made.script_names,
                                           large: made.large});
        log(`PASS ${name}: ${summary} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
      } catch (error) {
        failures += 1;
        log(`FAIL ${name}: ${error.message}`);
      }
    }
  } finally {
    await browser.close();
    servers.process.kill();
    fs.rmSync(temp, {recursive: true, force: true});
  }
  log(failures === 0 ? `all ${selected.length} cases passed`
                     : `${failures} of ${selected.length} cases failed`);
  process.exit(failures === 0 ? 0 : 1);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
