// SPDX-License-Identifier: Apache-2.0
// checkFolder under node: folders copied into the module's in-memory file system get the
// same verdict, code and member as the native `stguard check --json DIR`, list the file
// that decided with that verdict, and, when they hold config.json, the same lint verdict and
// findings as `stguard lint --json DIR`. (A browser's dropped folder is WORKERFS instead;
// the page's browser tests cover that mount.)
//   node --no-experimental-fetch tests/web/node_folder_test.js BUILD_WEB NATIVE_CLI CORPUS
'use strict';
const assert = require('assert');
const childProcess = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const [buildWeb, nativeCli, corpus] = process.argv.slice(2);
const createStguard = require(path.resolve(buildWeb, 'stguard.js'));

// The folders: [name, {file in the folder: corpus file or literal text}].
const LLAMA_CONFIG = JSON.stringify({model_type: 'llama', hidden_size: 64,
                                     num_hidden_layers: 1, num_attention_heads: 4,
                                     intermediate_size: 128, vocab_size: 32});
const FOLDERS = [
  ['safetensors_alone', {'model.safetensors': 'sample.safetensors'}],
  ['torch_sharded', {
    'pytorch_model-00001-of-00002.bin': 'torch/valid/sharded/pytorch_model-00001-of-00002.bin',
    'pytorch_model-00002-of-00002.bin': 'torch/valid/sharded/pytorch_model-00002-of-00002.bin',
    'pytorch_model.bin.index.json': 'torch/valid/sharded/pytorch_model.bin.index.json'}],
  ['refused_pickle_beside_weights', {
    'model.safetensors': 'sample.safetensors',
    'sub/extra.pt': 'torch/refuse/PickleGlobalRefused__raw_os_system.pt'}],
  ['lint_llama_mismatch', {'model.safetensors': 'sample.safetensors',
                           'config.json': {text: LLAMA_CONFIG}}],
  ['lint_no_family', {'model.safetensors': 'sample.safetensors',
                      'config.json': {text: '{"architectures": []}'}}],
];

function materialize(root, files) {
  for (const [name, from] of Object.entries(files)) {
    const target = path.join(root, name);
    fs.mkdirSync(path.dirname(target), {recursive: true});
    if (typeof from === 'string') fs.copyFileSync(path.join(corpus, from), target);
    else fs.writeFileSync(target, from.text);
  }
}

function copyIntoMemfs(FS, from, to) {
  FS.mkdir(to);
  for (const entry of fs.readdirSync(from, {withFileTypes: true})) {
    if (entry.isDirectory()) copyIntoMemfs(FS, path.join(from, entry.name), `${to}/${entry.name}`);
    else FS.writeFile(`${to}/${entry.name}`, fs.readFileSync(path.join(from, entry.name)));
  }
}

function native(command, folder) {
  const run = childProcess.spawnSync(nativeCli, [command, '--json', folder], {encoding: 'utf8'});
  return JSON.parse(run.stdout.trim().split('\n').pop());
}

const pick = (result) => ({verdict: result.verdict, code: result.code, member: result.member,
                           tensor: result.tensor});

// A folder holding a 16 GB sparse shard, read through emscripten's file system over the
// real one (stguard_web_node): there a mapping is a copy, and one of 16 GB cannot be made
// in a 4 GB memory, so the folder is valid only if every file's format is sniffed by
// ranges and the shard's header read alone.
function testSparseShardFolder() {
  const nodeBuild = path.resolve(buildWeb, 'cmake', 'stguard_web_node.js');
  if (!fs.existsSync(nodeBuild)) {
    console.log(`SKIPPED sparse_shard_folder: ${nodeBuild} is missing (tools/build-web.sh)`);
    return 0;
  }
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'stguard-web-sparse-'));
  const total = 16 * 1024 ** 3;
  const headerLength = 128;
  const dataLength = total - 8 - headerLength;
  const header = JSON.stringify({w: {dtype: 'U8', shape: [dataLength],
                                     data_offsets: [0, dataLength]}}).padEnd(headerLength, ' ');
  const prefix = Buffer.alloc(8);
  prefix.writeBigUInt64LE(BigInt(headerLength));
  const shard = path.join(folder, 'model.safetensors');
  fs.writeFileSync(shard, Buffer.concat([prefix, Buffer.from(header, 'latin1')]));
  fs.truncateSync(shard, total);
  const run = childProcess.spawnSync(process.execPath, ['--no-experimental-fetch', '-e', `
      require(${JSON.stringify(nodeBuild)})().then((Module) => {
        const checkFolder = Module.cwrap('stguard_check_folder', 'string', ['string']);
        process.stdout.write(checkFolder(${JSON.stringify(folder)}));
      });`], {encoding: 'utf8'});
  fs.rmSync(folder, {recursive: true});
  try {
    const result = JSON.parse(run.stdout);
    // Valid: were the shard mapped (copied) to learn its format, it would be unreadable,
    // and an unreadable file in a folder is refused.
    assert.strictEqual(result.verdict, 'valid', run.stdout);
    assert.strictEqual(result.tensors_count, 1, run.stdout);
    console.log('sparse_shard_folder: a folder with a 16 GB shard is valid, its shard ' +
                'read by ranges');
    return 0;
  } catch (error) {
    console.log(`FAIL sparse_shard_folder: ${error.message} ${run.stderr}`);
    return 1;
  }
}

createStguard({stguardRead: () => { throw new Error('no byte source here'); },
               print: () => {}, printErr: (text) => console.error(text)}).then((Module) => {
  const checkFolder = Module.cwrap('stguard_check_folder', 'string', ['string']);
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'stguard-web-folders-'));
  let failures = 0;
  for (const [name, files] of FOLDERS) {
    const folder = path.join(scratch, name);
    materialize(folder, files);
    copyIntoMemfs(Module.FS, folder, `/${name}`);
    try {
      const wasm = JSON.parse(checkFolder(`/${name}`));
      const expected = native('check', folder);
      assert.deepStrictEqual(pick(wasm), pick(expected));
      assert.strictEqual(wasm.format, 'folder');
      // The file that decided is listed with the folder's verdict.
      assert.ok(Array.isArray(wasm.files), 'files listed');
      if (wasm.member) {
        const decider = wasm.files.find((file) => file.file.endsWith(wasm.member));
        assert.ok(decider && decider.verdict === wasm.verdict, JSON.stringify(wasm.files));
      }
      if (files['config.json'] && expected.verdict === 'valid') {
        const lint = native('lint', folder);
        assert.ok(wasm.lint, 'lint result expected');
        assert.deepStrictEqual(pick(wasm.lint), pick(lint));
        assert.strictEqual(wasm.lint.errors, lint.errors);
        assert.strictEqual(wasm.lint.warnings, lint.warnings);
        assert.deepStrictEqual(wasm.lint.findings.map((f) => `${f.rule}:${f.tensor}`),
                               lint.findings.map((f) => `${f.rule}:${f.tensor}`));
      } else {
        assert.strictEqual(wasm.lint, null);
      }
      console.log(`${name}: ${wasm.verdict}${wasm.code ? ' ' + wasm.code : ''}` +
                  (wasm.lint ? `, lint ${wasm.lint.verdict} (${wasm.lint.errors} errors, ` +
                               `${wasm.lint.warnings} warnings)` : '') + ' as native');
    } catch (error) {
      failures += 1;
      console.log(`FAIL ${name}: ${error.message}`);
    }
  }
  fs.rmSync(scratch, {recursive: true});
  failures += testSparseShardFolder();
  console.log(failures === 0 ? 'node_folder_test: passed' : 'node_folder_test: FAILED');
  process.exit(failures === 0 ? 0 : 1);
});
