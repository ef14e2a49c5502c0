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
// - a server without range support is reported, and the transfer stopped;
// - names shown escaped (bidi controls as \u{202e}) and cut past 200 characters with
//   "show all", so a 1 MB tensor name leaves the page small (safe_names);
// - ?url= links to the page's own origin, relative paths and text without a scheme are
//   refused and never requested (own_origin_url);
// - a 20,000-tensor table drawn virtualised, filtered, sorted, scrolled (tensor_table);
// - stalled URLs hold one worker each, later checks run or wait "queued", cancel and
//   "clear results" work (concurrency);
// - keyboard-only use, a 390 px viewport without sideways scroll (keyboard_mobile);
// - "Copy JSON" and "Download report" give check --json's envelope (report);
// - plurals, a shard index alone, refused globals explained (the one the verdict names
//   marked out), no offsets where a format has none, progress ending full (plain_words);
// - the remote-read policy: a 2 GiB URL under a server that answers well, ignores Range,
//   honours it once, sends 206 with the whole body, names other bytes, changes the total,
//   sends a short body (honest or lying headers) or 404: each an error saying what
//   happened, none costing the budget, every request counted (remote_policy);
// - a checkpoint that arrived whole gets every check by URL (a bad CRC refused); one read
//   partly says which checks it left out on the verdict line and in the report
//   (remote_unchecked);
// - each error code links to its explanation, generated from error_codes.def
//   (error_explanations); a sharded folder's tensor table names each tensor's shard
//   (folder_shards); a 2 GiB .bin in a dropped folder is judged, not OutOfMemory
//   (folder_2g_bin: about 10-30 s, most of it the CRC-32 of 2 GiB).
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
// The page's budget for one URL (web/worker.js REMOTE_BUDGET_BYTES): whatever the server
// does, it sends less than this (a server without range support starts sending the whole
// 16 GiB; the page stops it after the range asked, the socket buffers let a few MB through).
const NO_RANGE_BUDGET = 64 * 1024 * 1024;
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
                   norange: 'norange,cors', stall: 'stall,cors'};
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
    // File text is shown escaped and cut; .safe elements keep it whole as fullText.
    const detail = {};
    for (const dt of section.querySelectorAll(':scope > .error-detail > dt')) {
      const safe = dt.nextElementSibling.querySelector('.safe');
      detail[dt.textContent] = safe ? safe.fullText : dt.nextElementSibling.textContent;
    }
    const view = section.querySelector(':scope > details > .tensor-view');
    const members = Array.from(section.querySelectorAll(':scope .files .result'));
    return {
      file: section.getAttribute('data-file'),
      format: section.getAttribute('data-format'),
      verdict: section.getAttribute('data-verdict'),
      verdictLine: section.querySelector(':scope > .verdict').textContent,
      progress: section.querySelector(':scope > .progress-line span')?.textContent || '',
      code: section.getAttribute('data-code'),
      message: detail.message || '',
      notes: Array.from(section.querySelectorAll(':scope > .notes li .safe'))
                 .map((li) => li.fullText),
      tensors: view ? view.tensors.map((t) => String(t.name)) : [],
      findings: Array.from(section.querySelectorAll('table.findings tbody tr')).map((tr) => ({
        rule: tr.getAttribute('data-rule'),
        tensor: tr.querySelector('td.name .safe').fullText,
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
  // A check skipped remotely is on the verdict line too ("valid (remote: ... not read)").
  if (shown.format === native.format && note && shown.code !== native.code &&
      shown.notes.some((n) => note.test(n)) && /\(remote: .+ not read\)/.test(shown.verdictLine)) {
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
    // On the second origin: the page reads no URL of its own.
    const urls = group.files.map((n) => `${servers.urls.cors}/${group.dir}/${encodeURIComponent(n)}`);
    const page = await openPage(browser, pageUrl(servers, urls));
    await waitForResults(page, urls.length);
    const shown = new Map((await readResults(page)).map((r) => [r.file, r]));
    group.files.forEach((name, i) => {
      const absolute = new URL(urls[i]).href;
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
  await resetServer(servers.urls.cors);
  const page = await openPage(browser, pageUrl(servers, [`${servers.urls.cors}/fixtures/big.safetensors`]));
  await waitForResults(page, 1);
  const [result] = await readResults(page);
  await page.close();
  const stats = await serverStats(servers.urls.cors);
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
  const page = await openPage(browser,
                              pageUrl(servers, [`${servers.urls.cors}/fixtures/script_names.safetensors`]));
  await (await page.$('#file-input')).uploadFile(file);
  await waitForResults(page, 2);
  const results = await readResults(page);
  const seen = await page.evaluate(() => ({
    injected: window.__stguardInjected,
    elements: document.querySelectorAll('#results script, #results img, #results b').length,
    cells: Array.from(document.querySelectorAll('table.tensors tr[data-name] td.name'))
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
  assert.match(result.message, /does not honour range requests \(the server sent the whole file instead of the range asked for\)/);
  assert.ok(sent < NO_RANGE_BUDGET, `${sent} bytes of the 16 GiB sent before the stop`);
  return `a server without range support is reported; ${sent} bytes sent before the stop`;
};

// The remote-read policy's server modes on a 2 GiB file whose header needs a second
// request: each is an error naming what happened (never a verdict on the file), and none
// costs more than the budget, counted by the server and by the page's progress line.
const REMOTE_MODES = {
  ok: null,
  ignore: /does not honour range requests \(the server sent the whole file instead of the range asked for\)/,
  once: /does not honour range requests \(the server sent the whole file instead of the range asked for\)/,
  whole206: /does not honour range requests \(it answered bytes 0-2147483647 where 0-65535 were asked\)/,
  otherbytes: /the server's Content-Range names other bytes \(1-65536\) than the range asked for \(0-65535\)/,
  growing: /the file's total size changed between requests: 2147483648 bytes, then 2147483649/,
  short: /the server's Content-Length \(32768\) and Content-Range \(0-65535\) disagree/,
  shortlie: /the connection closed early, after \d+ bytes of the body/,
  404: /the server answered 404/,
};

CASES.remote_policy = async ({browser, servers}) => {
  const origin = servers.urls.cors;
  const urlOf = (mode) => mode === '404' ? `${origin}/fixtures/missing.safetensors`
                                         : `${origin}/fixtures/remote2g.safetensors?mode=${mode}`;
  const modes = Object.keys(REMOTE_MODES);
  await resetServer(origin);
  const page = await openPage(browser, pageUrl(servers, modes.map(urlOf)));
  await waitForResults(page, modes.length);
  const shown = new Map((await readResults(page)).map((r) => [r.file, r]));
  assert.deepEqual(page.errors.filter((e) => !/404/.test(e)), [], 'the page logged errors');
  await page.close();
  await new Promise((resolve) => setTimeout(resolve, 300));  // let the server notice
  const stats = await serverStats(origin);
  const costs = [];
  for (const mode of modes) {
    const result = shown.get(urlOf(mode));
    assert.ok(result, `${mode}: no result`);
    const url = new URL(urlOf(mode));
    const sent = stats.by_path[url.pathname + url.search] || 0;
    const requests = stats.requests.filter(([p]) => p === url.pathname + url.search).length;
    const read = /^read ([\d.]+ \S+) of .* in (\d+) requests?$/.exec(result.progress);
    assert.ok(read, `${mode}: progress line "${result.progress}"`);
    assert.equal(Number(read[2]), requests, `${mode}: the page counts ${read[2]} requests`);
    assert.ok(sent < NO_RANGE_BUDGET, `${mode}: ${sent} bytes sent, over the budget`);
    if (REMOTE_MODES[mode] === null) {
      assert.equal(result.verdict, 'valid', `${mode}: ${result.message}`);
      assert.ok(sent < 1000 * 1000, `${mode}: ${sent} bytes sent`);
    } else {
      assert.equal(result.verdict, 'error', `${mode}: ${result.verdict} ${result.message}`);
      assert.equal(result.code, 'IoError');
      assert.match(result.message, REMOTE_MODES[mode], `${mode}: ${result.message}`);
    }
    costs.push(`${mode} ${sent} B/${requests} req (page: ${read[1]})`);
  }
  return `2 GiB URL under ${modes.length} server modes, sent: ${costs.join(', ')}`;
};

// A PyTorch checkpoint with a flipped storage byte: refused locally; by URL, whole in the
// first request (the corpus's 747-byte one) the same; larger than the budget read (2 MB),
// valid with its storage checksums named unchecked on the verdict line and in the report.
CASES.remote_unchecked = async ({browser, servers, fixtures}) => {
  const small = path.join(REPO, 'corpus/torch/refuse/ZipChecksum__bad_crc.pt');
  const flipped = path.join(fixtures, 'flipped_state.pt');
  if (!fs.existsSync(flipped)) return 'SKIPPED: no torch to write flipped_state.pt';
  const native = nativeResults([small, flipped]);
  assert.equal(native[flipped].code, 'ZipChecksum');
  const urls = [`${servers.urls.cors}/corpus/torch/refuse/ZipChecksum__bad_crc.pt`,
                `${servers.urls.cors}/fixtures/flipped_state.pt`];
  const page = await openPage(browser, pageUrl(servers, urls));
  await waitForResults(page, 2);
  const shown = new Map((await readResults(page)).map((r) => [r.file, r]));
  const report = await page.$eval(`#results > .result[data-file="${urls[1]}"]`,
                                  (section) => JSON.parse(section.reportJson));
  await page.close();
  const whole = shown.get(urls[0]);
  assert.deepEqual([whole.verdict, whole.code, whole.verdictLine.split(' ·')[0]],
                   ['refused', 'ZipChecksum', 'refused']);
  const partial = shown.get(urls[1]);
  assert.equal(partial.verdict, 'valid');
  assert.equal(partial.verdictLine, 'valid (remote: 8 storage checksums not read) · pytorch-zip');
  assert.deepEqual(report && report.unchecked, ['8 storage checksums']);
  return `747-byte .bin with a bad CRC refused by URL; a 2 MB one "${partial.verdictLine}"`;
};

// ---------------------------------------------------------------------------------------
// The page for people: safe names, links, the tensor table, concurrency, keyboard, reports

// writeSafetensors writes a safetensors file of F32 tensors, each of shape [1] with its
// 4 bytes in order; `overrun` names one whose data_offsets run past the data (invalid).
function writeSafetensors(file, names, {metadata, overrun} = {}) {
  const header = {};
  if (metadata) header.__metadata__ = metadata;
  names.forEach((name, i) => {
    const end = name === overrun ? 4 * names.length + 4 : 4 * (i + 1);
    header[name] = {dtype: 'F32', shape: [1], data_offsets: [4 * i, end]};
  });
  let text = JSON.stringify(header);
  text += ' '.repeat((8 - (Buffer.byteLength(text) % 8)) % 8);
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(Buffer.byteLength(text)));
  fs.writeFileSync(file, Buffer.concat([length, Buffer.from(text), Buffer.alloc(4 * names.length)]));
  return file;
}

// shot saves a screenshot of the page as NAME.jpg in $STGUARD_WEB_SCREENSHOTS, when set
// (web/README.md shows them).
async function shot(page, name) {
  const dir = process.env.STGUARD_WEB_SCREENSHOTS;
  if (dir) await page.screenshot({path: path.join(dir, `${name}.jpg`), type: 'jpeg', quality: 70,
                                 fullPage: true});
}

// A page is "small" below this height (px): a 1 MB name once made it 301,441 px tall.
const SMALL_PAGE_PX = 4000;

function pageSize(page) {
  return page.evaluate(() => ({height: document.documentElement.scrollHeight,
                               width: document.documentElement.scrollWidth,
                               viewport: window.innerWidth}));
}

CASES.safe_names = async ({browser, servers, fixtures}) => {
  const dir = path.join(fixtures, 'names');
  fs.mkdirSync(dir, {recursive: true});
  const bidiTensor = 'model\u202egnp.exe\u202c.weight';
  const longName = 'a'.repeat(1000 * 1000);
  const bidiFile = writeSafetensors(path.join(dir, 'evil\u202egnp.safetensors'), [bidiTensor, 'b'],
                                    {metadata: {['k'.repeat(300)]: 'tab\there'}});
  const longFile = writeSafetensors(path.join(dir, 'long.safetensors'), [longName]);
  const badFile = writeSafetensors(path.join(dir, 'long_bad.safetensors'), ['x', longName],
                                   {overrun: longName});
  const native = nativeResults([bidiFile, longFile, badFile]);
  const page = await openPage(browser, pageUrl(servers, []));
  await (await page.$('#file-input')).uploadFile(bidiFile, longFile, badFile);
  await waitForResults(page, 3);
  const results = new Map((await readResults(page)).map((r) => [r.file, r]));
  const shown = await page.evaluate(() => {
    const byFile = {};
    for (const section of document.querySelectorAll('#results > .result')) {
      byFile[section.getAttribute('data-file')] = {
        title: section.querySelector(':scope > .name').textContent,
        names: Array.from(section.querySelectorAll('table.tensors tr[data-name] td.name'))
                   .map((td) => td.textContent),
        tensor: Array.from(section.querySelectorAll('.error-detail dt'))
                    .filter((dt) => dt.textContent === 'tensor')
                    .map((dt) => dt.nextElementSibling.textContent)[0] || '',
        metadata: Array.from(section.querySelectorAll('table.metadata td'))
                      .map((td) => td.textContent),
      };
    }
    return byFile;
  });
  const before = await pageSize(page);
  await shot(page, 'safe_names');
  // "show all" shows a cut key whole.
  await page.click('table.metadata .show-all');
  const keyShown = await page.$eval('table.metadata td', (td) => td.textContent);
  assert.deepEqual(page.errors, [], 'the page logged errors');
  await page.close();
  for (const [file, result] of results) {
    const want = native[path.join(dir, file)];
    assert.equal(result.verdict, want.verdict, `${JSON.stringify(file)}: ${result.message}`);
    assert.equal(result.code, want.verdict === 'valid' ? null : want.code);
  }
  const bidi = shown['evil\u202egnp.safetensors'];
  assert.equal(bidi.title, 'evil\\u{202e}gnp.safetensors');
  assert.deepEqual(bidi.names, ['model\\u{202e}gnp.exe\\u{202c}.weight', 'b']);
  assert.ok(bidi.metadata[0].startsWith(`${'k'.repeat(200)}…show all (300 characters)`),
            `a 300-character key: ${bidi.metadata[0].slice(0, 240)}`);
  assert.equal(bidi.metadata[1], 'tab\\x09here');
  assert.equal(keyShown, 'k'.repeat(300), 'show all did not show the whole key');
  const long = shown['long.safetensors'];
  assert.deepEqual(long.names, [`${'a'.repeat(200)}…`]);
  const bad = shown['long_bad.safetensors'];
  assert.equal(results.get('long_bad.safetensors').verdict, 'invalid');
  assert.equal(bad.tensor, `${'a'.repeat(200)}…show all (1,000,000 characters)`);
  assert.ok(before.height < SMALL_PAGE_PX, `the page is ${before.height} px tall`);
  return `bidi file and tensor names shown escaped; a 1 MB tensor name cut in the table ` +
         `and in the error (page ${before.height} px tall); "show all" works`;
};

CASES.own_origin_url = async ({browser, servers}) => {
  await resetServer(servers.urls.main);
  const own = `${servers.urls.main}/fixtures/script_names.safetensors`;
  const given = ['/__stats', '../fixtures/script_names.safetensors', own, 'hf.co/x',
                 `${servers.urls.cors}/corpus/valid/worked_example.safetensors`];
  const page = await openPage(browser, pageUrl(servers, given));
  await waitForResults(page, given.length);
  const results = new Map((await readResults(page)).map((r) => [r.file, r]));
  assert.deepEqual(page.errors, [], 'the page logged errors');
  await page.close();
  const stats = await serverStats(servers.urls.main);
  const asked = stats.requests.map(([p]) => p).filter((p) => !p.startsWith('/app/'));
  assert.deepEqual(asked, [], 'the page requested its own origin');
  for (const text of given.slice(0, 4)) {
    assert.equal(results.get(text).verdict, 'error', text);
  }
  assert.match(results.get('/__stats').message, /relative path/);
  assert.match(results.get('../fixtures/script_names.safetensors').message, /relative path/);
  assert.match(results.get(own).message, /own site/);
  assert.match(results.get('hf.co/x').message, /^not a URL/);
  assert.equal(results.get(given[4]).verdict, 'valid');
  return 'relative paths and the page\'s own origin refused and not requested; "hf.co/x" ' +
         'is not a URL; another origin is checked';
};

CASES.tensor_table = async ({browser, servers, fixtures}) => {
  const names = Array.from({length: 20000}, (_, i) => `model.layers.${i}.weight`);
  const file = writeSafetensors(path.join(fixtures, 'many.safetensors'), names);
  const page = await openPage(browser, pageUrl(servers, []));
  await (await page.$('#file-input')).uploadFile(file);
  await waitForResults(page, 1);
  const seen = await page.evaluate(() => {
    const view = document.querySelector('.tensor-view');
    const filter = document.querySelector('.tensor-filter');
    const rowNames = () => Array.from(view.querySelectorAll('tr[data-name]'))
                                .map((tr) => tr.getAttribute('data-name'));
    const drawn = rowNames().length;
    // Filtering: the input event redraws synchronously. Each time is the least of five
    // (the machine running the tests may be busy).
    const timed = (value) => {
      let least = Infinity;
      for (let i = 0; i < 5; i += 1) {
        const started = performance.now();
        filter.value = value;
        filter.dispatchEvent(new Event('input'));
        least = Math.min(least, performance.now() - started);
      }
      return least;
    };
    const filterMs = timed('LAYERS.1234.');
    const filtered = rowNames();
    filter.value = 'layers.1234';
    filter.dispatchEvent(new Event('input'));
    const filtered2 = rowNames();
    const allMs = timed('');
    // Sorting by name, twice: descending.
    const sort = document.querySelector('.tensor-view th.col-name button');
    sort.click();
    sort.click();
    const descending = rowNames()[0];
    // Scrolled to the end, the last rows are drawn.
    view.scrollTop = view.scrollHeight;
    view.dispatchEvent(new Event('scroll'));
    return {drawn, filterMs, filtered, filtered2, allMs, descending,
            count: document.querySelector('.filter-count').textContent,
            totals: document.querySelector('.dtype-totals').textContent,
            height: document.documentElement.scrollHeight};
  });
  await new Promise((resolve) => setTimeout(resolve, 200));  // the scroll redraws next frame
  const last = await page.$$eval('.tensor-view tr[data-name]', (rows) => rows.at(-1).getAttribute('data-name'));
  await page.evaluate(() => {
    const filter = document.querySelector('.tensor-filter');
    filter.value = 'layers.12';
    filter.dispatchEvent(new Event('input'));
  });
  await shot(page, 'tensor_table');
  assert.deepEqual(page.errors, [], 'the page logged errors');
  await page.close();
  assert.ok(seen.drawn < 100, `${seen.drawn} rows drawn of 20,000`);
  assert.deepEqual(seen.filtered, ['model.layers.1234.weight']);
  assert.equal(seen.filtered2.length, 11);
  assert.ok(seen.filterMs < 1000, `filtering took ${seen.filterMs} ms`);
  assert.ok(seen.allMs < 100, `drawing the unfiltered list took ${seen.allMs} ms`);
  assert.equal(seen.descending, 'model.layers.9999.weight');
  assert.equal(last, 'model.layers.0.weight');
  assert.match(seen.totals, /^F32: 20,000 parameters in 20,000 tensors \(78\.1 KiB\)$/);
  assert.ok(seen.height < SMALL_PAGE_PX, `the page is ${seen.height} px tall`);
  return `20,000 tensors: ${seen.drawn} rows drawn, filtered in ${seen.filterMs.toFixed(1)} ms, ` +
         `redrawn in ${seen.allMs.toFixed(1)} ms, sorted, scrolled; page ${seen.height} px tall`;
};

// stateOf reads each top-level result's state and verdict, by data-file.
function statesOf(page) {
  return page.$$eval('#results > .result', (sections) => Object.fromEntries(sections.map((s) =>
      [s.getAttribute('data-file'), `${s.dataset.state}${s.dataset.verdict ? ` ${s.dataset.verdict}` : ''}`])));
}

CASES.concurrency = async ({browser, servers}) => {
  const stalled = (n) => `${servers.urls.stall}/fixtures/big.safetensors?${n}`;
  const good = (n) => `${servers.urls.cors}/corpus/valid/worked_example.safetensors?${n}`;
  // Three workers: stall 1, good 1 and stall 2 start; good 1 ends and stall 3 starts;
  // good 2 waits.
  const urls = [stalled(1), good(1), stalled(2), stalled(3), good(2)];
  const page = await openPage(browser, pageUrl(servers, urls));
  const state = (url) => `document.querySelector('#results > .result[data-file="${url}"]')`;
  await page.waitForFunction(`${state(good(1))}.dataset.verdict === 'valid'`, {timeout: 30000});
  await page.waitForFunction(`${state(stalled(3))}.dataset.state === 'pending'`, {timeout: 30000});
  const during = await statesOf(page);
  const summary = await page.$eval('#summary', (s) => s.textContent);
  await shot(page, 'concurrency');
  // Cancelling stall 1 lets good 2 run.
  await page.click(`#results > .result[data-file="${stalled(1)}"] .cancel`);
  await page.waitForFunction(`${state(good(2))}.dataset.verdict === 'valid'`, {timeout: 30000});
  const after = await statesOf(page);
  await page.click('#clear');
  const cleared = await page.evaluate(() => ({
    results: document.querySelectorAll('#results > .result').length,
    pending: document.documentElement.dataset.pending}));
  assert.deepEqual(page.errors, [], 'the page logged errors');
  await page.close();
  assert.deepEqual(during, {[stalled(1)]: 'pending', [good(1)]: 'done valid', [stalled(2)]: 'pending',
                            [stalled(3)]: 'pending', [good(2)]: 'queued'});
  assert.equal(summary, '1 valid, 3 checking, 1 queued');
  assert.equal(after[stalled(1)], 'cancelled');
  assert.equal(after[good(2)], 'done valid');
  assert.deepEqual(cleared, {results: 0, pending: '0'});
  return 'stalled URLs hold one worker each; a second URL is judged meanwhile, a fourth ' +
         'waits "queued"; cancel frees its worker; "clear results" ends the rest';
};

CASES.keyboard_mobile = async ({browser, servers, fixtures}) => {
  const names = Array.from({length: 40}, (_, i) =>
      `model.encoder.layers.${i}.self_attention.query_key_value.weight_with_a_long_suffix`);
  const file = writeSafetensors(path.join(fixtures, 'narrow.safetensors'), names);
  const page = await openPage(browser, pageUrl(servers, []));
  await page.setViewport({width: 390, height: 844});
  // The page acts as focused, as a window the user types in is (a file chooser opens only
  // from a focused page).
  await page.bringToFront();
  await page.emulateFocusedPage(true);
  // Keyboard only: Tab to the drop zone, then Enter, then Space, each opens the chooser.
  let tabs = 0;
  while (await page.evaluate(() => document.activeElement.id) !== 'drop-zone' && tabs < 10) {
    await page.keyboard.press('Tab');
    tabs += 1;
  }
  for (const key of ['Enter', 'Space']) {
    const waiting = page.waitForFileChooser({timeout: 10000}).catch((error) => {
      throw new Error(`${key} on the drop zone opened no file chooser: ${error.message}`);
    });
    // Interception is switched on by a message of its own: let it arrive first.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await page.keyboard.press(key);
    await (await waiting).accept([file]);
  }
  await waitForResults(page, 2);
  await shot(page, 'mobile');
  const seen = await page.evaluate(() => {
    // The second check's result was scrolled into view when it appeared.
    const first = Array.from(document.querySelectorAll('#results > .result')).at(-1)
                      .getBoundingClientRect();
    return {width: document.documentElement.scrollWidth, viewport: window.innerWidth,
            firstTop: first.top, firstBottom: first.bottom, innerHeight: window.innerHeight};
  });
  assert.deepEqual(page.errors, [], 'the page logged errors');
  await page.close();
  assert.ok(tabs < 10, 'Tab never reached the drop zone');
  assert.ok(seen.width <= seen.viewport, `the page is ${seen.width} px wide at ${seen.viewport} px`);
  assert.ok(seen.firstTop < seen.innerHeight && seen.firstBottom > 0,
            `the new result is out of view (${seen.firstTop} px)`);
  return `keyboard only (${tabs} Tab, Enter, Space) checked two files; at 390 px the page ` +
         `is ${seen.width} px wide and the result was scrolled into view`;
};

CASES.report = async ({browser, servers, fixtures}) => {
  const file = path.join(REPO, 'corpus/invalid', fs.readdirSync(path.join(REPO, 'corpus/invalid')).sort()[0]);
  const native = nativeResults([file])[file];
  const downloads = fs.mkdtempSync(path.join(fixtures, 'downloads-'));
  const page = await openPage(browser, pageUrl(servers, []));
  const session = await page.target().createCDPSession();
  await session.send('Browser.setDownloadBehavior', {behavior: 'allow', downloadPath: downloads});
  await page.evaluate(() => {
    navigator.clipboard.writeText = async (text) => { window.__copied = text; };
  });
  await (await page.$('#file-input')).uploadFile(file);
  await waitForResults(page, 1);
  await page.click('#results > .result .copy-json');
  await page.click('#results > .result .download-report');
  const url = `${servers.urls.cors}/corpus/valid/worked_example.safetensors`;
  await page.type('#url-input', url);
  await page.keyboard.press('Enter');
  await waitForResults(page, 2);
  const share = await page.$eval('#results > .result:nth-child(2) .share-link', (a) => a.href);
  const copied = await page.waitForFunction(() => window.__copied).then((h) => h.jsonValue());
  await page.click('#download-all');
  const downloaded = async (suffix) => {
    for (let i = 0; i < 50; i += 1) {
      const names = fs.readdirSync(downloads).filter((n) => n.endsWith(suffix));
      if (names.length > 0) return names;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return [];
  };
  const saved = await downloaded('.stguard.json');
  const [all] = await downloaded('.jsonl');
  assert.deepEqual(page.errors, [], 'the page logged errors');
  await page.close();
  assert.equal(saved.length, 1, 'no report was downloaded');
  const report = JSON.parse(fs.readFileSync(path.join(downloads, saved[0])));
  const lines = fs.readFileSync(path.join(downloads, all), 'utf8').trim().split('\n').map(JSON.parse);
  assert.deepEqual(lines.map((l) => [l.file, l.verdict]),
                   [[report.file, report.verdict], [url, 'valid']], 'the report of all results');
  assert.equal(new URL(share).searchParams.get('url'), url, `the link to the check: ${share}`);
  // The envelope's fields, as check --json gives them (it adds a few of its own).
  assert.deepEqual(JSON.parse(copied), report, 'Copy JSON differs from the report');
  for (const key of ['schema_version', 'format', 'verdict', 'code', 'message']) {
    assert.ok(key in report, `the report has no ${key}`);
  }
  for (const [key, value] of Object.entries(report)) {
    assert.deepEqual(key === 'file' ? path.join(path.dirname(file), value) : value, native[key],
                     `the report's ${key}`);
  }
  return `Copy JSON and Download report (${saved[0]}) give check --json's envelope ` +
         `(${native.verdict} ${native.code}); "Download all reports" gives one line per ` +
         'result; a URL check links to itself';
};

CASES.plain_words = async ({browser, servers, fixtures}) => {
  const dir = path.join(fixtures, 'words');
  fs.mkdirSync(dir, {recursive: true});
  const one = writeSafetensors(path.join(dir, 'one.safetensors'), ['w']);
  const index = path.join(dir, 'model.safetensors.index.json');
  fs.writeFileSync(index, JSON.stringify({metadata: {total_size: 4},
                                          weight_map: {w: 'model-00001-of-00001.safetensors'}}));
  const refused = path.join(REPO, 'corpus/torch/refuse/PickleGlobalRefused__raw_os_system.pt');
  const npz = path.join(dir, 'compressed.npz');
  childProcess.execFileSync(PYTHON, ['-c', 'import numpy, sys; numpy.savez_compressed(' +
                                     'sys.argv[1], a=numpy.zeros(4, "f4"))', npz]);
  const url = `${servers.urls.cors}/fixtures/big.safetensors`;
  const page = await openPage(browser, pageUrl(servers, [url]));
  await (await page.$('#file-input')).uploadFile(one, index, refused, npz);
  await waitForResults(page, 5);
  await page.setViewport({width: 900, height: 2400});
  await shot(page, 'plain_words');
  const seen = await page.evaluate(() => {
    const byFile = {};
    for (const section of document.querySelectorAll('#results > .result')) {
      const bar = section.querySelector(':scope > .progress-line progress');
      byFile[section.getAttribute('data-file')] = {
        verdict: section.querySelector(':scope > .verdict').textContent,
        total: section.querySelector('.tensor-total')?.textContent || '',
        offsets: !!section.querySelector('.tensor-view th.col-begin'),
        index: section.querySelector('.shard-index')?.textContent || '',
        globals: Array.from(section.querySelectorAll('.refused-global'))
                     .map((row) => row.textContent),
        cause: Array.from(section.querySelectorAll('.refused-global-cause'))
                   .map((row) => row.textContent),
        bar: bar ? [bar.value, bar.max] : null,
      };
    }
    return byFile;
  });
  assert.deepEqual(page.errors, [], 'the page logged errors');
  await page.close();
  assert.equal(seen['one.safetensors'].total, '1 tensor, 1 parameter, 4 bytes');
  assert.ok(seen['one.safetensors'].offsets, 'safetensors offsets are not shown');
  assert.match(seen['model.safetensors.index.json'].index, /shard index: drop the whole folder/);
  assert.equal(seen['one.safetensors'].index, '');
  const globals = seen[path.basename(refused)].globals;
  assert.ok(globals.some((text) => /system.*runs a shell command/.test(text)),
            `the refused global is not explained: ${JSON.stringify(globals)}`);
  // The global the verdict names is marked out, with what it does.
  assert.deepEqual(seen[path.basename(refused)].cause, ['globalposix.system runs a shell command']);
  assert.equal(seen['compressed.npz'].offsets, false, 'a compressed npz shows offsets');
  const [value, max] = seen[url].bar;
  assert.equal(value, max, 'the progress bar of a finished URL check is not full');
  assert.ok(!/unknown/.test(seen['model.safetensors.index.json'].verdict));
  return `"1 tensor"; an index alone says to drop the folder; ${globals.length} refused ` +
         'global(s) highlighted and explained; no offsets for a compressed npz; progress ends full';
};

// Each error code links to its explanation in errors.html, which tools/build-web.sh
// generates from include/stguard/error_codes.def: every code of the list has an entry,
// and an entry says what the comment above its row says.
CASES.error_explanations = async ({browser, servers}) => {
  const def = fs.readFileSync(path.join(REPO, 'include/stguard/error_codes.def'), 'utf8')
                  .split('\n');
  const comments = {};
  def.forEach((line, i) => {
    const row = /^STGUARD_ERROR_CODE\((\w+),/.exec(line);
    if (!row || row[1] === 'Ok') return;
    // The comment lines right above the row (a section title is not one of them).
    const lines = [];
    for (let j = i - 1; j >= 0 && /^\/\/(?! ==)/.test(def[j]); j -= 1) {
      lines.unshift(def[j].replace(/^\/\/\s*/, ''));
    }
    comments[row[1]] = lines.join(' ');
  });
  const file = path.join(REPO, 'corpus/torch/refuse/ZipChecksum__bad_crc.pt');
  const page = await openPage(browser, pageUrl(servers, []));
  await (await page.$('#file-input')).uploadFile(file);
  await waitForResults(page, 1);
  const href = await page.$eval('#results > .result .error-detail a.code-link', (a) => a.href);
  const entries = await page.evaluate(async (url) => {
    const text = await (await fetch(url)).text();
    const doc = new DOMParser().parseFromString(text, 'text/html');
    return Array.from(doc.querySelectorAll('dl.error-codes > dt')).map((dt) => [
      dt.id, dt.nextElementSibling.textContent]);
  }, href);
  assert.deepEqual(page.errors, [], 'the page logged errors');
  await page.close();
  assert.equal(new URL(href).hash, '#ZipChecksum');
  const shown = Object.fromEntries(entries);
  assert.deepEqual(Object.keys(shown).sort(), Object.keys(comments).sort(),
                   'errors.html does not list exactly the codes of error_codes.def');
  for (const [code, comment] of Object.entries(comments)) {
    assert.equal(shown[code].toLowerCase(), `${comment}.`.toLowerCase(), code);
  }
  return `the code links to ${new URL(href).pathname}${new URL(href).hash}; its ` +
         `${entries.length} entries are error_codes.def's rows and comments`;
};

// A sharded folder's tensor table says which shard holds each tensor (a column, sortable).
CASES.folder_shards = async ({browser, servers, fixtures}) => {
  const folder = path.join(fixtures, 'sharded');
  fs.mkdirSync(folder, {recursive: true});
  const shards = {'model-00001-of-00002.safetensors': ['a.weight', 'c.weight'],
                  'model-00002-of-00002.safetensors': ['b.weight']};
  const weightMap = {};
  for (const [shard, names] of Object.entries(shards)) {
    writeSafetensors(path.join(folder, shard), names);
    for (const name of names) weightMap[name] = shard;
  }
  fs.writeFileSync(path.join(folder, 'model.safetensors.index.json'),
                   JSON.stringify({metadata: {total_size: 12}, weight_map: weightMap}));
  const page = await openPage(browser, pageUrl(servers, []));
  await (await page.$('#folder-input')).uploadFile(folder);
  await waitForResults(page, 1);
  const seen = await page.$eval('#results > .result', (section) => ({
    verdict: section.getAttribute('data-verdict'),
    head: Array.from(section.querySelectorAll('.tensor-view thead th')).map((th) => th.textContent),
    rows: Array.from(section.querySelectorAll('.tensor-view tbody tr:not(.spacer)')).map((tr) =>
        [tr.getAttribute('data-name'), tr.querySelector('td.shard').textContent]),
  }));
  assert.deepEqual(page.errors, [], 'the page logged errors');
  await page.close();
  assert.equal(seen.verdict, 'valid');
  assert.ok(seen.head.includes('shard'), `no shard column: ${seen.head}`);
  assert.deepEqual(Object.fromEntries(seen.rows), weightMap);
  return `${seen.rows.length} tensors of 2 shards, each with its shard`;
};

// A 2 GiB PyTorch checkpoint in a dropped folder is read by ranges of its File, never
// copied into wasm memory (4 GB at most, where a mapping is a copy): judged as natively,
// not OutOfMemory. Written sparse in a temporary folder, deleted after.
CASES.folder_2g_bin = async ({browser, servers}) => {
  const temp = fs.mkdtempSync(path.join(os.tmpdir(), 'stguard-2g-'));
  const folder = path.join(temp, 'model2g');
  fs.mkdirSync(folder);
  const bin = path.join(folder, 'pytorch_model.bin');
  try {
    const made = childProcess.spawnSync(PYTHON, [path.join(__dirname, 'make_sparse_checkpoint.py'),
                                                 bin]);
    if (made.status !== 0) return `SKIPPED: the checkpoint could not be written: ${made.stderr}`;
    const size = fs.statSync(bin).size;
    assert.ok(size > 2 ** 31 - 4096, `${size} bytes`);
    // Valid natively (stguard check): not run here, it reads the 2 GiB too.
    const page = await openPage(browser, pageUrl(servers, []));
    const started = Date.now();
    await (await page.$('#folder-input')).uploadFile(folder);
    await waitForResults(page, 1);
    const seconds = (Date.now() - started) / 1000;
    const [result] = await readResults(page);
    assert.deepEqual(page.errors, [], 'the page logged errors');
    await page.close();
    assert.equal(result.verdict, 'valid', `${result.code}: ${result.message}`);
    return `a ${size}-byte .bin in a dropped folder: ${result.verdict} in ` +
           `${seconds.toFixed(1)} s (${result.progress})`;
  } finally {
    fs.rmSync(temp, {recursive: true, force: true});
  }
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
