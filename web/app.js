// SPDX-License-Identifier: Apache-2.0
// The page: it takes files, folders and URLs, hands each to a worker (worker.js, which
// runs stguard's WebAssembly build), and shows each result.
//
// Everything that comes from a file (names, metadata, messages) is attacker input: it is
// set as text (textContent, setAttribute), never parsed as HTML, with its control and
// bidirectional characters escaped as the CLI escapes them (printable) and cut past
// MAX_SHOWN_CHARS with a "show all" control (safeText).
//
// Each result is an element with class "result" and data-file (the URL, or the path
// within a dropped folder, or a chosen file's name), data-state (queued, pending, done,
// cancelled), and, once judged, data-format, data-verdict (valid, invalid, refused,
// error) and, when not valid, data-code (the error code's name). Its tensor table is
// virtualised: only the rows in view are drawn (tr with data-name); the element
// .tensor-view carries the whole list as the property `tensors`. Elements showing file
// text (.safe) carry the unescaped, uncut text as the property `fullText`.
// <html data-pending> counts the checks not yet answered (tests wait for 0).
'use strict';

// Names, keys, values and messages longer than this are cut, with a "show all" control.
const MAX_SHOWN_CHARS = 200;
// A dropped folder with more files than this is not walked further (a home directory
// dropped by mistake); the result says so.
const MAX_FOLDER_FILES = 100000;
// Checks run at once, each in its own worker: a stalled server holds one worker only.
const MAX_WORKERS = 3;
// The tensor table draws only the rows in view: each is this tall (style.css agrees),
// plus OVERSCAN_ROWS above and below.
const ROW_PX = 24;
const OVERSCAN_ROWS = 10;

// What a refused pickle's globals do, for those that are plainly dangerous: shown beside
// the global's row (a refused file's other globals are highlighted without a sentence).
const GLOBAL_EFFECTS = {
  'os.system': 'runs a shell command',
  'posix.system': 'runs a shell command',
  'nt.system': 'runs a shell command',
  'os.popen': 'runs a shell command',
  'posix.popen': 'runs a shell command',
  'subprocess.Popen': 'starts another program',
  'subprocess.run': 'starts another program',
  'subprocess.call': 'starts another program',
  'subprocess.check_call': 'starts another program',
  'subprocess.check_output': 'starts another program',
  'builtins.eval': 'runs Python code given as text',
  'builtins.exec': 'runs Python code given as text',
  'builtins.compile': 'compiles Python code given as text',
  '__builtin__.eval': 'runs Python code given as text',
  'builtins.__import__': 'imports any module',
  'importlib.import_module': 'imports any module',
  'builtins.getattr': 'reaches any attribute of any object, and so any function',
  'builtins.open': 'opens a file on your machine',
  'io.open': 'opens a file on your machine',
  'shutil.rmtree': 'deletes a folder',
  'os.remove': 'deletes a file',
  'runpy.run_path': 'runs a Python file',
  'runpy.run_module': 'runs a Python module',
  'webbrowser.open': 'opens a web page',
  'socket.socket': 'opens a network connection',
  'pickle.loads': 'unpickles more data, with the same dangers',
  'marshal.loads': 'loads compiled Python code',
};

// The fields of `stguard check --json`'s envelope, in its order: "Copy JSON" and
// "Download report" give these; "unchecked" (the checks a remote read left out) only
// when it lists any.
const ENVELOPE_KEYS = ['schema_version', 'file', 'format', 'verdict', 'code', 'message',
                       'offset', 'member', 'tensor', 'unchecked', 'warnings'];

// ---------------------------------------------------------------------------------------
// Small DOM helpers: text only.

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
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
  if (unit === 0) return n === 1 ? '1 byte' : `${formatCount(n)} bytes`;
  return `${value.toFixed(1)} ${units[unit]}`;
}

function valueText(value) {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

// The characters stguard's PrintableText escapes (include/stguard/error.h): C0 controls
// and DEL as \xNN; C1 controls, bidirectional controls and the line and paragraph
// separators as \u{NNNN}; a lone surrogate (a JavaScript string may hold one) likewise.
const UNPRINTABLE = new RegExp(
    '[\\x00-\\x1f\\x7f]|[\\u0080-\\u009f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069' +
    '\\u2028\\u2029]|\\p{Cs}', 'gu');

function printable(text) {
  return String(text).replace(UNPRINTABLE, (ch) => {
    const code = ch.codePointAt(0);
    return code < 0x80 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
  });
}

// shortText is `text` escaped and cut to MAX_SHOWN_CHARS: {text, cut}.
function shortText(text) {
  const raw = String(text);
  // Escaping never shortens, so the first MAX_SHOWN_CHARS characters are enough.
  const head = printable(raw.slice(0, MAX_SHOWN_CHARS + 1));
  if (head.length <= MAX_SHOWN_CHARS && raw.length <= MAX_SHOWN_CHARS) {
    return {text: head, cut: false};
  }
  return {text: `${head.slice(0, MAX_SHOWN_CHARS)}…`, cut: true};
}

// breakable sets `text` into `node` with a line-break opportunity after each `.` and `/`,
// so that a narrow screen breaks "model.layers.0.weight" between its parts rather than
// every few characters (past MAX_BREAKS parts it is left to the browser).
const MAX_BREAKS = 1000;
function breakable(node, text) {
  const parts = text.split(/(?<=[./])/);
  if (parts.length < 2 || parts.length > MAX_BREAKS) {
    node.textContent = text;
    return;
  }
  node.replaceChildren();
  parts.forEach((part, i) => {
    if (i > 0) node.appendChild(document.createElement('wbr'));
    node.appendChild(document.createTextNode(part));
  });
}

// safeText is an element showing file text: escaped, cut with a "show all" button when
// long. Its property fullText is the text as given.
function safeText(text, tag = 'span') {
  const raw = String(text ?? '');
  const node = element(tag, 'safe');
  node.fullText = raw;
  const shown = shortText(raw);
  const span = element('span');
  breakable(span, shown.text);
  node.appendChild(span);
  if (shown.cut) {
    const all = element('button', 'show-all', `show all (${formatCount(raw.length)} characters)`);
    all.type = 'button';
    all.addEventListener('click', () => {
      breakable(span, printable(raw));
      all.remove();
    });
    node.appendChild(all);
  }
  return node;
}

function cell(row, text, className) {
  const node = element('td', className);
  node.appendChild(safeText(text));
  row.appendChild(node);
  return node;
}

// ---------------------------------------------------------------------------------------
// Results

let scrollToNext = false;  // the next top-level result is scrolled into view

// newResult adds a result element for something being checked, before its verdict.
function newResult(file, title, parent) {
  const section = element('section', 'result');
  section.setAttribute('data-file', file);
  section.dataset.state = 'pending';
  section.appendChild(safeText(title, parent ? 'h3' : 'h2')).classList.add('name');
  section.appendChild(element('p', 'verdict', 'checking…'));
  (parent || document.getElementById('results')).appendChild(section);
  if (!parent && scrollToNext) {
    scrollToNext = false;
    section.scrollIntoView({block: 'nearest'});
  }
  return section;
}

function progressLine(section) {
  let line = section.querySelector(':scope > .progress-line');
  if (!line) {
    line = element('p', 'progress-line');
    line.appendChild(document.createElement('progress'));
    line.appendChild(element('span'));
    section.querySelector(':scope > .verdict').after(line);
  }
  return line;
}

// showProgress shows how far a check has read: for a file or URL `progress` is {read,
// total, requests} (bytes); for a folder {read, total, files, totalFiles, current}: the
// bar counts the files opened, the text the bytes read beside the folder's size (its
// safetensors shards are read for their headers only, while a file the library maps is
// copied whole, so the bytes read may be far below the size or above it). `done` ends
// the bar at 100%: a verdict often needs a small part of the file.
function showProgress(section, progress, done = false) {
  const line = progressLine(section);
  const bar = line.querySelector('progress');
  const {read, total} = progress;
  let text;
  if (typeof progress.totalFiles === 'number') {
    bar.max = Math.max(progress.totalFiles, 1);
    bar.value = done ? bar.max : Math.min(progress.files, progress.totalFiles);
    text = `opened ${formatCount(progress.files)} of ${counted(progress.totalFiles, 'file')}, ` +
           `read ${formatBytes(read)} (the folder holds ${formatBytes(total)})` +
           (progress.current ? ` (reading ${progress.current})` : '');
  } else {
    bar.max = Math.max(total, 1);
    bar.value = done ? bar.max : Math.min(read, total);
    text = `${done ? 'read' : 'reading'} ${formatBytes(read)} of ${formatBytes(total)} in ` +
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
  // The format as the library named it, "unknown" included: the page does not branch on it.
  const format = result.format ? ` · ${result.format}` : '';
  // The verdict line is the library's: "valid (remote: 3 storage checksums not read)".
  line.textContent = `${result.verdict_line || verdict}${format}`;
  // The sentence comes with the result, written by the library (stguard/verdict.h).
  line.after(element('p', 'verdict-sentence', result.sentence || ''));
}

function showError(section, result) {
  if (result.verdict === 'valid') return;
  const list = element('dl', 'error-detail');
  const add = (term, value) => {
    if (value === undefined || value === null || value === '') return;
    list.appendChild(element('dt', null, term));
    list.appendChild(element('dd')).appendChild(safeText(value));
  };
  if (result.code) {
    // Each code links to its explanation, generated from the library's list of codes
    // (errors.html, made by tools/build-web.sh from error_codes.def).
    list.appendChild(element('dt', null, 'code'));
    const link = element('a', 'code-link', result.code);
    link.href = `errors.html#${encodeURIComponent(result.code)}`;
    link.target = '_blank';
    link.rel = 'noopener';
    link.title = 'what this code means';
    list.appendChild(element('dd')).appendChild(link);
  }
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
    list.appendChild(element('li')).appendChild(safeText(text));
  }
  section.appendChild(list);
}

function showStats(section, stats) {
  const line = section.querySelector(':scope > .progress-line');
  if (!stats) {
    if (line) line.remove();
    return;
  }
  showProgress(section, {...stats, total: stats.size, current: ''}, true);
}

// globalEffect says what a pickle global does when it is plainly dangerous, else ''.
// Python 2's module __builtin__ is Python 3's builtins (pickle maps one to the other).
function globalEffect(name) {
  const dotted = String(name).replace(/\s+/g, '.').replace(/^__builtin__\./, 'builtins.');
  return GLOBAL_EFFECTS[dotted] || '';
}

// refusedGlobal is the global a PickleGlobalRefused result names ("global not in the
// allowlist: posix.system"), else ''.
function refusedGlobal(result) {
  if (result.code !== 'PickleGlobalRefused') return '';
  const match = /: ([^\s:]+)$/.exec(String(result.message ?? ''));
  return match ? match[1] : '';
}

function showMetadata(section, metadata, refused, cause = '') {
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
    const value = cell(row, valueText(pair[1]), 'mono');
    // A refused pickle's globals are what it would call: each is highlighted, with what
    // it does when that is known.
    if (refused && pair[0] === 'global') {
      row.classList.add('refused-global');
      // The one the verdict names stands out from the file's other globals.
      if (cause && String(pair[1]).replace(/\s+/g, '.') === cause) {
        row.classList.add('refused-global-cause');
      }
      const effect = globalEffect(pair[1]);
      if (effect) value.appendChild(element('span', 'global-effect', ` ${effect}`));
    }
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

// dtypeTotals says, per dtype, the parameters, tensors and bytes: "F32: 1,024 parameters
// in 2 tensors (4.0 KiB)".
function dtypeTotals(rows) {
  const totals = new Map();
  for (const row of rows) {
    const total = totals.get(row.dtype) || {tensors: 0, elements: 0, bytes: 0};
    total.tensors += 1;
    total.elements += row.elements;
    total.bytes += row.bytes;
    totals.set(row.dtype, total);
  }
  return [...totals].sort((a, b) => b[1].elements - a[1].elements).map(([dtype, t]) =>
      `${printable(dtype || '?')}: ${counted(t.elements, 'parameter')} in ` +
      `${counted(t.tensors, 'tensor')} (${formatBytes(t.bytes)})`);
}

function hasOffsets(tensor) {
  return Number(tensor.begin ?? tensor.offset) > 0 || Number(tensor.end) > 0;
}

const SORTS = {
  name: (a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
  dtype: (a, b) => (a.dtype < b.dtype ? -1 : a.dtype > b.dtype ? 1 : 0) || a.index - b.index,
  shape: (a, b) => a.elements - b.elements || a.index - b.index,
  size: (a, b) => a.bytes - b.bytes || a.index - b.index,
  shard: (a, b) => (a.shard < b.shard ? -1 : a.shard > b.shard ? 1 : 0) || a.index - b.index,
};

// TensorTable is a result's tensor list: a substring filter on the names, a sort by any
// column, and a virtualised body that draws only the rows in view, so that a file of a
// million tensors costs a few dozen rows. A row clicked shows its whole name below.
class TensorTable {
  constructor(tensors) {
    this.rows = tensors.map((tensor, index) => {
      const name = String(tensor.name ?? '');
      return {tensor, index, name, lower: name.toLowerCase(),
              dtype: String(tensor.dtype ?? tensor.type ?? ''), shape: shapeText(tensor),
              elements: elementCount(tensor), bytes: Number(tensor.bytes) || 0,
              shard: String(tensor.shard ?? '')};
    });
    // A sharded folder's tensors say which shard holds each.
    this.shards = tensors.some((tensor) => tensor.shard !== undefined);
    // Offsets only where the file has them: begin and end 0 mean none (a compressed npz
    // member, a PyTorch view that is not one run of its storage's bytes).
    this.offsets = tensors.some(hasOffsets);
    this.sorted = this.rows;
    this.shown = this.rows;
    this.sortKey = null;
    this.ascending = true;
    this.query = '';
    this.frame = 0;
  }

  build(tensors) {
    const details = element('details', 'tensors-block');
    details.open = true;
    details.appendChild(element('summary', null, `Tensors (${formatCount(tensors.length)})`));
    const totals = element('ul', 'dtype-totals');
    for (const line of dtypeTotals(this.rows)) totals.appendChild(element('li', null, line));
    details.appendChild(totals);
    this.filter = element('input', 'tensor-filter');
    this.filter.type = 'search';
    this.filter.placeholder = 'filter tensors by name';
    this.filter.setAttribute('aria-label', 'filter tensors by name');
    this.filter.addEventListener('input', () => this.applyFilter(this.filter.value));
    this.count = element('span', 'filter-count');
    const controls = element('p', 'tensor-controls');
    controls.append(this.filter, this.count);
    details.appendChild(controls);
    this.view = element('div', 'tensor-view');
    this.view.tensors = tensors;
    this.view.tabIndex = 0;
    this.table = element('table', 'tensors');
    this.head();
    this.body = this.table.createTBody();
    this.body.addEventListener('click', (event) => this.select(event.target.closest('tr')));
    this.view.appendChild(this.table);
    this.view.addEventListener('scroll', () => this.schedule(), {passive: true});
    details.appendChild(this.view);
    this.detail = element('div', 'tensor-detail');
    details.appendChild(this.detail);
    return details;
  }

  columns() {
    const columns = [['name', 'name'], ['dtype', 'dtype'], ['shape', 'shape']];
    if (this.offsets) columns.push(['begin', null, 'number'], ['end', null, 'number']);
    columns.push(['bytes', 'size', 'number']);
    if (this.shards) columns.push(['shard', 'shard']);
    return columns;
  }

  head() {
    const row = this.table.createTHead().insertRow();
    for (const [label, key, className] of this.columns()) {
      const th = element('th', `col-${label}${className ? ` ${className}` : ''}`);
      if (key) {
        const button = element('button', 'sort', label);
        button.type = 'button';
        button.addEventListener('click', () => this.sortBy(key, th));
        th.appendChild(button);
      } else {
        th.textContent = label;
      }
      row.appendChild(th);
    }
  }

  sortBy(key, th) {
    this.ascending = this.sortKey === key ? !this.ascending : true;
    this.sortKey = key;
    const order = SORTS[key];
    this.sorted = this.rows.slice().sort(this.ascending ? order : (a, b) => order(b, a));
    for (const other of this.table.tHead.rows[0].cells) other.removeAttribute('aria-sort');
    th.setAttribute('aria-sort', this.ascending ? 'ascending' : 'descending');
    this.applyFilter(this.query);
  }

  applyFilter(query) {
    this.query = query;
    const needle = query.toLowerCase();
    this.shown = needle ? this.sorted.filter((row) => row.lower.includes(needle)) : this.sorted;
    this.count.textContent = needle ? `${formatCount(this.shown.length)} of ` +
                                      counted(this.rows.length, 'tensor') : '';
    this.view.scrollTop = 0;
    this.render();
  }

  schedule() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.render();
    });
  }

  spacer(rows) {
    const row = element('tr', 'spacer');
    row.setAttribute('aria-hidden', 'true');
    const td = element('td');
    td.colSpan = this.columns().length;
    td.style.height = `${rows * ROW_PX}px`;
    row.appendChild(td);
    return row;
  }

  render() {
    const total = this.shown.length;
    const height = this.view.clientHeight || 20 * ROW_PX;
    const first = Math.max(0, Math.floor(this.view.scrollTop / ROW_PX) - OVERSCAN_ROWS);
    const last = Math.min(total, first + Math.ceil(height / ROW_PX) + 2 * OVERSCAN_ROWS);
    const rows = document.createDocumentFragment();
    if (first > 0) rows.appendChild(this.spacer(first));
    for (let i = first; i < last; i += 1) rows.appendChild(this.row(this.shown[i]));
    if (last < total) rows.appendChild(this.spacer(total - last));
    this.body.replaceChildren(rows);
  }

  row(entry) {
    const row = element('tr');
    row.setAttribute('data-name', entry.name);
    row.dataset.index = String(entry.index);
    const tensor = entry.tensor;
    const add = (text, className) => {
      const shown = shortText(text);
      const td = element('td', className, shown.text);
      row.appendChild(td);
    };
    add(entry.name, 'name');
    add(entry.dtype, 'mono');
    add(entry.shape, 'mono');
    if (this.offsets) {
      const placed = hasOffsets(tensor);
      add(placed ? formatCount(tensor.begin ?? tensor.offset ?? '') : '', 'number');
      add(placed ? formatCount(tensor.end ?? '') : '', 'number');
    }
    add(formatCount(tensor.bytes ?? ''), 'number');
    if (this.shards) add(entry.shard, 'shard');
    return row;
  }

  // select shows a clicked row's whole name (escaped, with "show all") below the table.
  select(row) {
    if (!row || row.dataset.index === undefined) return;
    const entry = this.rows[Number(row.dataset.index)];
    const line = element('p');
    line.append(safeText(entry.name), ` · ${printable(entry.dtype)} · ${entry.shape} · ` +
                                      formatBytes(entry.bytes));
    if (this.shards) line.append(' · in ', safeText(entry.shard));
    this.detail.replaceChildren(line);
  }
}

function showTensors(section, tensors) {
  if (!Array.isArray(tensors) || tensors.length === 0) return;
  const table = new TensorTable(tensors);
  section.appendChild(table.build(tensors));
  const parameters = table.rows.reduce((sum, r) => sum + r.elements, 0);
  const bytes = table.rows.reduce((sum, r) => sum + r.bytes, 0);
  const total = element('p', 'tensor-total', `${counted(tensors.length, 'tensor')}, ` +
                        `${counted(parameters, 'parameter')}, ${formatBytes(bytes)}`);
  table.view.after(total);
  table.render();
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
    // A shape is an array of numbers, any other expectation text ("BF16", "absent").
    cell(row, shapeText({shape: finding.expected}), 'mono');
    cell(row, shapeText({shape: finding.found}), 'mono');
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

// isShardIndex says whether a file checked alone is a sharded checkpoint's index, which
// only means something beside its shards.
function isShardIndex(result) {
  return result.format !== 'folder' && /\.index\.json$/i.test(String(result.file ?? ''));
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
  if (isShardIndex(result)) {
    section.appendChild(element('p', 'shard-index',
                                'This is a shard index: drop the whole folder (the index ' +
                                'with its shards) to check the checkpoint.'));
  }
}

// showLint shows lint's verdict on a folder with config.json and its findings.
function showLint(section, lint) {
  if (!lint) return;
  const line = element('p', 'lint-verdict');
  // The object is `stguard lint --json`'s: without findings, lint did not run.
  if (!Array.isArray(lint.findings)) {
    const why = lint.error ? `${lint.error.message}: ${lint.error.context}` : lint.message;
    line.append(`lint could not run: ${lint.code || ''} `, safeText(why));
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

// envelope is the result as `stguard check --json` gives it.
function envelope(result) {
  const out = {};
  for (const key of ENVELOPE_KEYS) {
    if (result[key] === undefined || result[key] === null) continue;
    if (key === 'unchecked' && result[key].length === 0) continue;
    out[key] = result[key];
  }
  return out;
}

function reportFileName(result) {
  const base = String(result.file ?? 'result').split(/[/\\]/).filter(Boolean).pop() || 'result';
  return `${base.replace(/[^\w.-]+/g, '_').slice(0, 100)}.stguard.json`;
}

function download(name, text) {
  const link = element('a');
  link.href = URL.createObjectURL(new Blob([text], {type: 'application/json'}));
  link.download = name;
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 60000);
}

// showReport adds "Copy JSON" and "Download report": the result's envelope.
function showReport(section, result) {
  const text = `${JSON.stringify(envelope(result))}\n`;
  section.reportJson = text;
  const line = element('p', 'report');
  const copy = element('button', 'copy-json', 'Copy JSON');
  copy.type = 'button';
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(text);
      copy.textContent = 'Copied';
    } catch (error) {
      copy.textContent = 'Copy failed: use Download';
    }
  });
  const save = element('button', 'download-report', 'Download report');
  save.type = 'button';
  save.addEventListener('click', () => download(reportFileName(result), text));
  line.append(copy, save);
  // A URL check can be shared: this page with ?url= checks it again on load.
  const url = section.dataset.url;
  if (url) {
    const share = new URL(location.pathname, location.href);
    share.searchParams.set('url', url);
    const link = element('a', 'share-link', 'Link to this check');
    link.href = share.href;
    line.append(' ', link);
  }
  section.querySelector(':scope > .verdict-sentence').after(line);
}

function fillResult(section, result, stats, prefix) {
  // The contents (tensors, metadata, notes) are under "contents" (web/GLUE.md); a folder's
  // files have none.
  const contents = result.contents || {};
  showVerdict(section, result);
  if (!section.parentElement.closest('.result')) showReport(section, result);
  showStats(section, stats);
  showError(section, result);
  showSummary(section, result);
  showNotes(section, [].concat(contents.notes || [], result.warnings || []));
  showMetadata(section, contents.metadata, result.verdict === 'refused', refusedGlobal(result));
  showTensors(section, contents.tensors);
  showLint(section, result.lint);
  showFiles(section, result.files, prefix);
}

// ---------------------------------------------------------------------------------------
// Jobs: each check is a job, run by one of at most MAX_WORKERS workers; the others wait
// in `queue`. Cancelling a running job ends its worker (a synchronous read inside
// WebAssembly cannot be interrupted otherwise) and starts a fresh one.

const jobs = new Map();  // job id -> {id, message, section, slot}, until answered
const queue = [];        // the jobs waiting for a worker, in order
const slots = [];        // {worker, job}
let nextJobId = 1;
let started = false;     // a worker said 'ready'

function setPending() {
  document.documentElement.dataset.pending = String(jobs.size);
  showSummaryLine();
}

// showSummaryLine counts the top-level results by verdict: "12 valid, 1 refused, 2 queued".
function showSummaryLine() {
  const counts = new Map();
  for (const section of document.querySelectorAll('#results > .result')) {
    const state = section.dataset.state;
    const key = state === 'done' ? section.getAttribute('data-verdict')
                                 : state === 'pending' ? 'checking' : state;
    counts.set(key, (counts.get(key) || 0) + 1);
  }
  const order = ['valid', 'invalid', 'refused', 'error', 'checking', 'queued', 'cancelled'];
  const parts = order.filter((key) => counts.has(key))
                     .map((key) => `${formatCount(counts.get(key))} ${key}`);
  document.getElementById('summary').textContent = parts.join(', ');
  document.getElementById('clear').hidden = counts.size === 0;
  document.getElementById('download-all').hidden = counts.size === 0;
}

function newSlot() {
  const slot = {worker: null, job: null};
  startWorker(slot);
  slots.push(slot);
  return slot;
}

function startWorker(slot) {
  const worker = new Worker('worker.js');
  slot.worker = worker;
  worker.onmessage = (event) => {
    if (slot.worker !== worker) return;
    const message = event.data;
    if (message.kind === 'ready' || message.kind === 'failed') {
      if (message.kind === 'ready' && !started) {
        started = true;
        setStatus('');
      }
      if (message.kind === 'failed') setStatus(`stguard could not start: ${message.message}`);
      return;
    }
    const job = slot.job;
    if (!job || job.id !== message.id) return;
    if (message.kind === 'progress') {
      showProgress(job.section, message);
    } else if (message.kind === 'done') {
      finish(job);
      fillResult(job.section, message.result, message.stats, message.prefix || '');
      setPending();
    }
  };
  worker.onerror = (event) => {
    if (slot.worker !== worker) return;
    const job = slot.job;
    restartWorker(slot);
    if (job) {
      finish(job);
      const message = `the checker stopped: ${event.message || 'an error in the worker'}`;
      fillResult(job.section, {file: job.section.getAttribute('data-file'), format: 'unknown',
                               verdict: 'error', code: 'IoError', message}, null, '');
      setPending();
    }
    dispatch();
  };
}

function restartWorker(slot) {
  slot.worker.terminate();
  slot.job = null;
  startWorker(slot);
}

// finish forgets an answered or cancelled job and frees its worker for the next.
function finish(job) {
  jobs.delete(job.id);
  const waiting = queue.indexOf(job);
  if (waiting >= 0) queue.splice(waiting, 1);
  if (job.slot && job.slot.job === job) job.slot.job = null;
  const cancel = job.section.querySelector(':scope > .cancel');
  if (cancel) cancel.remove();
  queueMicrotask(dispatch);
}

function dispatch() {
  while (queue.length > 0) {
    const slot = slots.find((s) => !s.job) || (slots.length < MAX_WORKERS ? newSlot() : null);
    if (!slot) break;
    const job = queue.shift();
    slot.job = job;
    job.slot = slot;
    job.section.dataset.state = 'pending';
    job.section.querySelector(':scope > .verdict').textContent = 'checking…';
    slot.worker.postMessage({...job.message, id: job.id});
  }
  showSummaryLine();
}

function cancel(job) {
  if (!jobs.has(job.id)) return;
  if (job.slot && job.slot.job === job) restartWorker(job.slot);
  finish(job);
  job.section.dataset.state = 'cancelled';
  job.section.querySelector(':scope > .verdict').textContent = 'cancelled';
  const line = job.section.querySelector(':scope > .progress-line');
  if (line) line.remove();
  setPending();
}

// downloadAll saves every finished top-level result's envelope, one JSON line each, as
// `stguard check --json` prints them for several files.
function downloadAll() {
  const lines = Array.from(document.querySelectorAll('#results > .result'))
                     .map((section) => section.reportJson).filter(Boolean);
  download('stguard-report.jsonl', lines.join(''));
}

function clearResults() {
  for (const job of [...jobs.values()]) cancel(job);
  document.getElementById('results').replaceChildren();
  setPending();
}

function setStatus(text) {
  document.getElementById('status').textContent = text;
}

function submit(message, section) {
  const job = {id: nextJobId++, message, section, slot: null};
  jobs.set(job.id, job);
  section.dataset.state = 'queued';
  section.querySelector(':scope > .verdict').textContent = 'queued';
  const button = element('button', 'cancel', 'Cancel');
  button.type = 'button';
  button.addEventListener('click', () => cancel(job));
  section.querySelector(':scope > .verdict').after(button);
  queue.push(job);
  setPending();
  dispatch();
}

function checkFile(file) {
  submit({kind: 'file', file}, newResult(file.name, file.name));
}

function refuse(given, message) {
  fillResult(newResult(given, given), {file: given, format: 'unknown', verdict: 'error',
                                       code: 'IoError', message}, null, '');
}

// checkUrl checks a URL given by the user or by the page's ?url= parameters: only an
// absolute http(s) URL of another origin. A link to this page must not make it request
// its own site (with the visitor's cookies), and text without a scheme ("hf.co/x") is
// not a path on this site.
function checkUrl(given) {
  let url;
  try {
    url = new URL(given);
  } catch (error) {
    refuse(given, /^(\/|\.\.?\/)/.test(given)
        ? 'a relative path: this page checks absolute URLs of other sites only, such as ' +
          'https://example.org/model.safetensors'
        : 'not a URL: give an absolute URL, such as https://example.org/model.safetensors');
    return;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    refuse(given, 'only http: and https: URLs can be read');
    return;
  }
  if (url.origin === location.origin) {
    refuse(given, `this page does not read URLs of its own site (${location.origin}): ` +
                  'only files on other sites are checked by URL');
    return;
  }
  const section = newResult(url.href, url.href);
  section.dataset.url = url.href;
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
  scrollToNext = true;
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
    scrollToNext = true;
    for (const file of Array.from(fileInput.files)) checkFile(file);
    fileInput.value = '';
  });
  const folderInput = document.getElementById('folder-input');
  folderInput.addEventListener('change', () => {
    scrollToNext = true;
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
  // The zone is focusable: Enter or Space there opens the file chooser.
  zone.addEventListener('keydown', (event) => {
    if (event.target !== zone || (event.key !== 'Enter' && event.key !== ' ')) return;
    event.preventDefault();
    fileInput.click();
  });
  document.getElementById('clear').addEventListener('click', clearResults);
  document.getElementById('download-all').addEventListener('click', downloadAll);
  // A file dropped beside the zone would make the browser open it in place of the page.
  window.addEventListener('dragover', (event) => event.preventDefault());
  window.addEventListener('drop', (event) => {
    if (!zone.contains(event.target)) onDrop(event);
  });
  document.getElementById('url-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const input = document.getElementById('url-input');
    scrollToNext = true;
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
  newSlot();
  setUpInputs();
  setStatus('Starting stguard…');
  for (const url of new URLSearchParams(location.search).getAll('url')) checkUrl(url);
}

main();
