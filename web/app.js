// SPDX-License-Identifier: Apache-2.0
// The page: it takes files, folders and URLs, hands each to the worker (worker.js, which
// runs stguard's WebAssembly build), and shows each result.
//
// Everything that comes from a file (names, metadata, messages) is attacker input: it is
// set as text (textContent, setAttribute), never parsed as HTML.
//
// Each result is an element with class "result" and data-file (the URL, resolved against
// the page, or the path within a dropped folder, or a chosen file's name), and, once
// judged, data-format, data-verdict (valid, invalid, refused, error) and, when not valid,
// data-code (the error code's name). The tensors table has one tr per tensor with
// data-name. <html data-pending> counts the checks not yet answered (tests wait for 0).
'use strict';

// Tensor rows drawn at first; a file with more shows the rest on request, so that a
// file listing a million tensors cannot stall the page before anyone asks.
const FIRST_TENSOR_ROWS = 2000;
// Metadata values longer than this are cut, with a note saying how much was left out.
const MAX_VALUE_CHARS = 4096;
// A dropped folder with more files than this is not walked further (a home directory
// dropped by mistake); the result says so.
const MAX_FOLDER_FILES = 100000;

let worker = null;
let nextJobId = 1;
const pendingJobs = new Map();  // job id -> {section, prefix}

// ---------------------------------------------------------------------------------------
// Small DOM helpers: text only.

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function cell(row, text, className) {
  const node = element('td', className, text);
  row.appendChild(node);
  return node;
}

function headerRow(table, names) {
  const head = table.createTHead();
  const row = head.insertRow();
  for (const [name, className] of names) row.appendChild(element('th', className, name));
}

function formatCount(n) {
  return typeof n === 'number' ? n.toLocaleString('en-US') : String(n);
}

// counted says "1 tensor", "2 tensors".
function counted(n, noun) {
  return `${formatCount(n)} ${noun}${n === 1 ? '' : 's'}`;
}

function formatBytes(n) {
  if (typeof n !== 'number' || !Number.isFinite(n)) return String(n);
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${formatCount(n)} bytes` : `${value.toFixed(1)} ${units[unit]}`;
}

function cut(text) {
  if (text.length <= MAX_VALUE_CHARS) return text;
  return `${text.slice(0, MAX_VALUE_CHARS)}… (${formatCount(text.length - MAX_VALUE_CHARS)} ` +
         `more characters not shown)`;
}

function valueText(value) {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function setPending() {
  document.documentElement.dataset.pending = String(pendingJobs.size);
}

// ---------------------------------------------------------------------------------------
// Results

// newResult adds a result element for something being checked, before its verdict.
function newResult(file, title, parent) {
  const section = element('section', 'result');
  section.setAttribute('data-file', file);
  section.dataset.state = 'pending';
  section.appendChild(element(parent ? 'h3' : 'h2', 'name', title));
  section.appendChild(element('p', 'verdict', 'checking…'));
  (parent || document.getElementById('results')).appendChild(section);
  return section;
}

// showProgress shows how far a check has read: for a file or URL `progress` is {read,
// total, requests} (bytes); for a folder {read, total, files, totalFiles, current}: the
// bar counts the files opened, the text the bytes read beside the folder's size (its
// safetensors shards are read for their headers only, while a file the library maps is
// copied whole, so the bytes read may be far below the size or above it).
function showProgress(section, progress) {
  let line = section.querySelector(':scope > .progress-line');
  if (!line) {
    line = element('p', 'progress-line');
    line.appendChild(document.createElement('progress'));
    line.appendChild(element('span'));
    section.querySelector(':scope > .verdict').after(line);
  }
  const bar = line.querySelector('progress');
  const {read, total} = progress;
  let text;
  if (typeof progress.totalFiles === 'number') {
    bar.max = Math.max(progress.totalFiles, 1);
    bar.value = Math.min(progress.files, progress.totalFiles);
    text = `opened ${formatCount(progress.files)} of ${counted(progress.totalFiles, 'file')}, ` +
           `read ${formatBytes(read)} (the folder holds ${formatBytes(total)})` +
           (progress.current ? ` (reading ${progress.current})` : '');
  } else {
    bar.max = Math.max(total, 1);
    bar.value = Math.min(read, total);
    text = `read ${formatBytes(read)} of ${formatBytes(total)} in ` +
           counted(progress.requests, 'request');
  }
  line.querySelector('span').textContent = text;
}

function showVerdict(section, result) {
  const verdict = result.verdict || 'error';
  section.setAttribute('data-format', result.format || 'unknown');
  section.setAttribute('data-verdict', verdict);
  if (verdict !== 'valid') section.setAttribute('data-code', result.code || '');
  section.dataset.state = 'done';
  const line = section.querySelector(':scope > .verdict');
  line.className = `verdict verdict-${verdict}`;
  line.textContent = `${verdict} · ${result.format || 'unknown'}`;
  // The sentence comes with the result, written by the library (stguard/verdict.h).
  line.after(element('p', 'verdict-sentence', result.sentence || ''));
}

function showError(section, result) {
  if (result.verdict === 'valid') return;
  const list = element('dl', 'error-detail');
  const add = (term, value) => {
    if (value === undefined || value === null || value === '') return;
    list.appendChild(element('dt', null, term));
    list.appendChild(element('dd', null, value));
  };
  add('code', result.code);
  add('message', result.message);
  add('in file', result.member);
  add('at byte', typeof result.offset === 'number' ? formatCount(result.offset) : result.offset);
  add('tensor', result.tensor);
  section.appendChild(list);
}

// showNotes lists the notes (checks skipped, and why) and the warnings.
function showNotes(section, notes) {
  if (notes.length === 0) return;
  const list = element('ul', 'notes');
  for (const note of notes) {
    const text = typeof note === 'string'
        ? note
        : [note.kind, note.file, note.tensor && `tensor ${note.tensor}`, note.message]
              .filter(Boolean).join(': ');
    list.appendChild(element('li', null, text));
  }
  section.appendChild(list);
}

function showStats(section, stats) {
  const line = section.querySelector(':scope > .progress-line');
  if (!stats) {
    if (line) line.remove();
    return;
  }
  showProgress(section, {...stats, total: stats.size, current: ''});
}

function showMetadata(section, metadata) {
  if (!Array.isArray(metadata) || metadata.length === 0) return;
  const details = element('details');
  details.open = metadata.length <= 50;
  details.appendChild(element('summary', null, `Metadata (${formatCount(metadata.length)})`));
  const table = element('table', 'metadata');
  headerRow(table, [['key'], ['value']]);
  const body = table.createTBody();
  for (const pair of metadata) {
    const row = body.insertRow();
    cell(row, valueText(pair[0]), 'mono');
    cell(row, cut(valueText(pair[1])), 'mono');
  }
  details.appendChild(table);
  section.appendChild(details);
}

function shapeText(tensor) {
  const shape = tensor.shape || tensor.ne;
  return Array.isArray(shape) ? `[${shape.join(', ')}]` : valueText(shape ?? '');
}

function elementCount(tensor) {
  const shape = tensor.shape || tensor.ne;
  if (!Array.isArray(shape)) return 0;
  return shape.reduce((product, n) => product * Number(n), 1);
}

function tensorRow(body, tensor) {
  const row = body.insertRow();
  row.setAttribute('data-name', String(tensor.name));
  cell(row, tensor.name, 'name');
  cell(row, tensor.dtype ?? tensor.type ?? '', 'mono');
  cell(row, shapeText(tensor), 'mono');
  cell(row, formatCount(tensor.begin ?? tensor.offset ?? ''), 'number');
  cell(row, formatCount(tensor.end ?? ''), 'number');
  cell(row, formatCount(tensor.bytes ?? ''), 'number');
}

function showTensors(section, tensors) {
  if (!Array.isArray(tensors) || tensors.length === 0) return;
  const details = element('details');
  details.open = true;
  details.appendChild(element('summary', null, `Tensors (${formatCount(tensors.length)})`));
  const table = element('table', 'tensors');
  headerRow(table, [['name'], ['dtype'], ['shape'], ['begin', 'number'], ['end', 'number'],
                    ['bytes', 'number']]);
  const body = table.createTBody();
  for (const tensor of tensors.slice(0, FIRST_TENSOR_ROWS)) tensorRow(body, tensor);
  const totals = table.createTFoot().insertRow();
  const bytes = tensors.reduce((sum, t) => sum + (Number(t.bytes) || 0), 0);
  const parameters = tensors.reduce((sum, t) => sum + elementCount(t), 0);
  cell(totals, counted(tensors.length, 'tensor'));
  cell(totals, '');
  cell(totals, counted(parameters, 'element'), 'mono');
  cell(totals, '');
  cell(totals, '');
  cell(totals, formatBytes(bytes), 'number');
  details.appendChild(table);
  if (tensors.length > FIRST_TENSOR_ROWS) {
    const more = element('button', 'more',
                         `Show the other ${formatCount(tensors.length - FIRST_TENSOR_ROWS)} tensors`);
    more.addEventListener('click', () => {
      for (const tensor of tensors.slice(FIRST_TENSOR_ROWS)) tensorRow(body, tensor);
      more.remove();
    });
    details.appendChild(more);
  }
  section.appendChild(details);
}

function showFindings(section, findings) {
  if (!Array.isArray(findings) || findings.length === 0) return;
  const details = element('details', 'lint');
  details.open = true;
  details.appendChild(element('summary', null,
                              `Lint findings against config.json (${formatCount(findings.length)})`));
  const table = element('table', 'findings');
  headerRow(table, [['severity'], ['rule'], ['file'], ['tensor'], ['expected'], ['found'],
                    ['message']]);
  const body = table.createTBody();
  for (const finding of findings) {
    const row = body.insertRow();
    row.setAttribute('data-rule', String(finding.rule ?? ''));
    row.setAttribute('data-severity', String(finding.severity ?? ''));
    cell(row, finding.severity ?? '', `severity-${finding.severity}`);
    cell(row, finding.rule ?? '', 'mono');
    cell(row, finding.file ?? '', 'mono');
    cell(row, finding.tensor ?? '', 'name');
    cell(row, valueText(finding.expected ?? ''), 'mono');
    cell(row, valueText(finding.found ?? ''), 'mono');
    cell(row, finding.message ?? '');
  }
  details.appendChild(table);
  section.appendChild(details);
}

// folderMemberPath gives a folder member's path within the folder, whatever prefix the
// worker's mount put before it.
function folderMemberPath(file, prefix) {
  const text = String(file ?? '');
  return prefix && text.startsWith(prefix) ? text.slice(prefix.length) : text;
}

function showFiles(section, files, prefix) {
  if (!Array.isArray(files) || files.length === 0) return;
  const details = element('details', 'files');
  details.open = true;
  details.appendChild(element('summary', null, `Files (${formatCount(files.length)})`));
  section.appendChild(details);
  for (const file of files) {
    const path = folderMemberPath(file.file, prefix);
    const member = newResult(path, path, details);
    fillResult(member, file, null, prefix);
  }
}

// showSummary says what was found in a few words ("GGUF v3, 2 tensors (F32), 5 keys"), or
// else the counts, when the check gave them.
function showSummary(section, result) {
  const parts = [];
  if (result.detail) {
    parts.push(result.detail);
  } else {
    if (result.tensors_count) parts.push(counted(result.tensors_count, 'tensor'));
    if (result.data_bytes) parts.push(`${formatBytes(result.data_bytes)} of tensor data`);
  }
  if (parts.length > 0) section.appendChild(element('p', 'summary', parts.join(' · ')));
}

// showLint shows lint's verdict on a folder with config.json and its findings.
function showLint(section, lint) {
  if (!lint) return;
  const line = element('p', 'lint-verdict');
  if (lint.error) {
    line.textContent = `lint could not run: ${lint.code || ''} ${lint.error}`;
    section.appendChild(line);
    return;
  }
  line.textContent = `lint against config.json (${lint.family || 'unknown family'}): ` +
                     `${lint.verdict}, ${counted(lint.errors ?? 0, 'error')}, ` +
                     counted(lint.warnings ?? 0, 'warning');
  line.setAttribute('data-lint-verdict', String(lint.verdict ?? ''));
  section.appendChild(line);
  showFindings(section, lint.findings);
}

function fillResult(section, result, stats, prefix) {
  // The contents (tensors, metadata, notes) are under "contents" (web/GLUE.md); a folder's
  // files have none.
  const contents = result.contents || {};
  showVerdict(section, result);
  showStats(section, stats);
  showError(section, result);
  showSummary(section, result);
  showNotes(section, [].concat(contents.notes || [], result.warnings || []));
  showMetadata(section, contents.metadata);
  showTensors(section, contents.tensors);
  showLint(section, result.lint);
  showFiles(section, result.files, prefix);
}

// ---------------------------------------------------------------------------------------
// Jobs

function failAll(message) {
  for (const [id, job] of pendingJobs) {
    fillResult(job.section, {format: 'unknown', verdict: 'error', code: 'IoError', message},
               null, '');
    pendingJobs.delete(id);
  }
  setPending();
}

function startWorker() {
  worker = new Worker('worker.js');
  worker.onmessage = (event) => {
    const message = event.data;
    if (message.kind === 'ready' || message.kind === 'failed') {
      setStatus(message.kind === 'ready' ? '' : `stguard could not start: ${message.message}`);
      return;
    }
    const job = pendingJobs.get(message.id);
    if (!job) return;
    if (message.kind === 'progress') {
      showProgress(job.section, message);
    } else if (message.kind === 'done') {
      pendingJobs.delete(message.id);
      fillResult(job.section, message.result, message.stats, message.prefix || '');
      setPending();
    }
  };
  worker.onerror = (event) => {
    failAll(`the checker stopped: ${event.message || 'an error in the worker'}`);
    setStatus('The checker stopped; reload the page to start it again.');
  };
}

function setStatus(text) {
  document.getElementById('status').textContent = text;
}

function submit(message, section) {
  const id = nextJobId++;
  pendingJobs.set(id, {section});
  setPending();
  worker.postMessage({...message, id});
}

function checkFile(file) {
  submit({kind: 'file', file}, newResult(file.name, file.name));
}

// checkUrl checks a URL given by the user or by the page's ?url= parameters, resolved
// against the page.
function checkUrl(given) {
  let url;
  try {
    url = new URL(given, document.baseURI);
  } catch (error) {
    const section = newResult(given, given);
    fillResult(section, {format: 'unknown', verdict: 'error', code: 'IoError',
                         message: 'this is not a URL'}, null, '');
    return;
  }
  const section = newResult(url.href, url.href);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    fillResult(section, {format: 'unknown', verdict: 'error', code: 'IoError',
                         message: 'only http: and https: URLs can be read'}, null, '');
    return;
  }
  submit({kind: 'url', url: url.href}, section);
}

// checkFolders checks the files of one or more folders: entries are {path, file} with
// paths starting with the folder's name ("model/config.json"); each top folder is one
// check, and loose files (no folder) are checked one by one.
function checkFolders(entries) {
  const folders = new Map();
  for (const entry of entries) {
    const slash = entry.path.indexOf('/');
    if (slash < 0) {
      checkFile(entry.file);
      continue;
    }
    const name = entry.path.slice(0, slash);
    if (!folders.has(name)) folders.set(name, []);
    folders.get(name).push(entry);
  }
  for (const [name, members] of folders) {
    const section = newResult(name, `${name}/ (${counted(members.length, 'file')})`);
    submit({kind: 'folder', name, entries: members}, section);
  }
}

// ---------------------------------------------------------------------------------------
// Inputs

// walkEntry collects the files under a dropped FileSystemEntry with their paths.
async function walkEntry(entry, into) {
  if (into.length >= MAX_FOLDER_FILES) throw new Error(`more than ${MAX_FOLDER_FILES} files`);
  if (entry.isFile) {
    const file = await new Promise((resolve, reject) => entry.file(resolve, reject));
    into.push({path: entry.fullPath.replace(/^\/+/, ''), file});
    return;
  }
  if (!entry.isDirectory) return;
  const reader = entry.createReader();
  for (;;) {
    // readEntries answers in batches; an empty batch ends the folder.
    const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
    if (batch.length === 0) return;
    for (const child of batch) await walkEntry(child, into);
  }
}

async function onDrop(event) {
  event.preventDefault();
  document.getElementById('drop-zone').classList.remove('dragging');
  const transfer = event.dataTransfer;
  // The entries must be taken before the first await: the DataTransfer empties after.
  const items = Array.from(transfer.items || []);
  const entries = items.map((item) => item.webkitGetAsEntry && item.webkitGetAsEntry());
  if (entries.length === 0 || entries.some((entry) => !entry)) {
    for (const file of Array.from(transfer.files)) checkFile(file);
    return;
  }
  for (const entry of entries) {
    if (entry.isFile) {
      const file = await new Promise((resolve, reject) => entry.file(resolve, reject));
      checkFile(file);
      continue;
    }
    const collected = [];
    try {
      await walkEntry(entry, collected);
    } catch (error) {
      const section = newResult(entry.name, `${entry.name}/`);
      fillResult(section, {format: 'folder', verdict: 'error', code: 'IoError',
                           message: `cannot read the folder: ${error.message || error}`},
                 null, '');
      continue;
    }
    checkFolders(collected);
  }
}

function setUpInputs() {
  const fileInput = document.getElementById('file-input');
  fileInput.addEventListener('change', () => {
    for (const file of Array.from(fileInput.files)) checkFile(file);
    fileInput.value = '';
  });
  const folderInput = document.getElementById('folder-input');
  folderInput.addEventListener('change', () => {
    const files = Array.from(folderInput.files);
    if (files.length > MAX_FOLDER_FILES) {
      setStatus(`That folder holds more than ${formatCount(MAX_FOLDER_FILES)} files; ` +
                `choose the model's own folder.`);
    } else {
      checkFolders(files.map((file) => ({path: file.webkitRelativePath || file.name, file})));
    }
    folderInput.value = '';
  });
  const zone = document.getElementById('drop-zone');
  zone.addEventListener('dragover', (event) => {
    event.preventDefault();
    zone.classList.add('dragging');
  });
  zone.addEventListener('dragleave', () => zone.classList.remove('dragging'));
  zone.addEventListener('drop', onDrop);
  // A file dropped beside the zone would make the browser open it in place of the page.
  window.addEventListener('dragover', (event) => event.preventDefault());
  window.addEventListener('drop', (event) => {
    if (!zone.contains(event.target)) onDrop(event);
  });
  document.getElementById('url-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const input = document.getElementById('url-input');
    checkUrl(input.value.trim());
    rememberUrl(input.value.trim());
    input.value = '';
  });
}

// rememberUrl adds a checked URL to the address bar, so that the page's own URL can be
// shared to check the same files again.
function rememberUrl(url) {
  const address = new URL(location.href);
  address.searchParams.append('url', url);
  history.replaceState(null, '', address.href);
}

function main() {
  setPending();
  startWorker();
  setUpInputs();
  setStatus('Starting stguard…');
  for (const url of new URLSearchParams(location.search).getAll('url')) checkUrl(url);
}

main();
