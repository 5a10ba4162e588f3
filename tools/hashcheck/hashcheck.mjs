#!/usr/bin/env node
// hashcheck: recompute every id and hash of a traceforge snapshot folder in
// JavaScript — RFC 8785 canonical JSON from the `canonicalize` package,
// SHA-256 from node:crypto — independently of the Go implementation.
//
//   node hashcheck.mjs [--verbose] FOLDER...
//
// Format 1.1.0 (manifest.json + <provider>/<id>.json), per DESIGN §4/§11/§12.2:
//   request key = sha256(JCS({provider, endpoint, request, headers?})), endpoint
//                 = the record's "endpoint" field (format 1.0.0 records have
//                 none: it is derived from the body, see endpoint100), with the
//                 key-only normalization (drop stream/stream_options, renumber
//                 tool-call ids call_1, call_2, … in order of first appearance,
//                 Anthropic string content/system → one text block);
//   id          = first 12 hex characters of the key (= the file name);
//   lineage     = the id of the request cut before its last assistant message,
//                 turn = assistant messages + 1;
//   record hash = "sha256:" + sha256(JCS(record without "hash"));
//   file hash   = "sha256:" + sha256(JCS({version, snapshots: [record hashes]}));
//   manifest    = "sha256:" + sha256(JCS(manifest without "hash")), and each
//                 entry's hash is its file's hash.
// Format 0.9.0 (snapshots.json): record hash = bare hex sha256(JCS(record
// without "hash")).
//
// Exit status: 0 every value agrees, 1 something differs (each difference is
// printed), 2 usage or unreadable input.

import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import canonicalize from 'canonicalize';

const PROVIDERS = ['anthropic', 'gemini', 'ollama', 'openai'];
const ID_FILE = /^[0-9a-f]{12}\.json$/;

const sha256hex = (text) => createHash('sha256').update(text, 'utf8').digest('hex');
const prefixed = (value) => 'sha256:' + sha256hex(canonicalize(value));
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const has = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
// Copies an object without one member, never through assignment (a key such
// as "__proto__" must stay an ordinary member).
const without = (o, key) => Object.fromEntries(Object.entries(o).filter(([k]) => k !== key));
const withMember = (o, key, value) => Object.fromEntries([...Object.entries(o).filter(([k]) => k !== key), [key, value]]);
const textBlocks = (s) => [{ type: 'text', text: s }];

// endpoint100 is the key endpoint of a format 1.0.0 record, derived from its
// body (DESIGN §11 "Keys and lookups").
export function endpoint100(provider, request) {
  if (provider === 'anthropic') return '/v1/messages';
  if (!has(request, 'messages') && has(request, 'prompt')) return '/v1/completions';
  return '/v1/chat/completions';
}

// Responses input items whose "id" the key renumbers item_1, item_2, …
const CHAINED_ITEM_TYPES = new Set(['item_reference', 'message', 'reasoning', 'function_call']);

// responsesKeyRequest is the Responses key-only normalization (DESIGN §12.2,
// §12.9 item 5): call_id of function_call / function_call_output items →
// call_N and the id of item_reference / message / reasoning / function_call
// items → item_N, in order of first appearance; last, a string
// previous_response_id → "snapshot:<parent>" when the record has lineage.
function responsesKeyRequest(r, parent) {
  if (Array.isArray(r.input)) {
    const calls = new Map();
    const items = new Map();
    const renumber = (ids, prefix, id) => {
      if (typeof id !== 'string') return id;
      if (!ids.has(id)) ids.set(id, `${prefix}${ids.size + 1}`);
      return ids.get(id);
    };
    r = withMember(r, 'input', r.input.map((it) => {
      if (!isObject(it)) return it;
      let c = { ...it };
      if (has(c, 'id') && CHAINED_ITEM_TYPES.has(c.type)) c = withMember(c, 'id', renumber(items, 'item_', c.id));
      if (has(c, 'call_id') && (c.type === 'function_call' || c.type === 'function_call_output')) c = withMember(c, 'call_id', renumber(calls, 'call_', c.call_id));
      return c;
    }));
  }
  if (typeof r.previous_response_id === 'string' && typeof parent === 'string') r = withMember(r, 'previous_response_id', `snapshot:${parent}`);
  return r;
}

export function keyRequest(provider, request, endpoint, parent) {
  if (provider === 'gemini') return request; // no key-only rules: streaming is in the path
  let r = Object.fromEntries(Object.entries(request).filter(([k]) => k !== 'stream' && k !== 'stream_options'));
  if (endpoint === '/v1/responses') return responsesKeyRequest(r, parent);
  if (provider === 'anthropic' && typeof r.system === 'string') r = withMember(r, 'system', textBlocks(r.system));
  if (!Array.isArray(r.messages)) return r;
  const ids = new Map();
  const renumber = (id) => {
    if (typeof id !== 'string') return id;
    if (!ids.has(id)) ids.set(id, `call_${ids.size + 1}`);
    return ids.get(id);
  };
  const messages = r.messages.map((m) => {
    if (!isObject(m)) return m;
    let c = { ...m };
    if (provider === 'anthropic') {
      if (typeof c.content === 'string') {
        c = withMember(c, 'content', textBlocks(c.content));
      } else if (Array.isArray(c.content)) {
        c = withMember(c, 'content', c.content.map((b) => {
          if (!isObject(b)) return b;
          let nb = { ...b };
          if (nb.type === 'tool_use' && has(nb, 'id')) nb = withMember(nb, 'id', renumber(nb.id));
          if (nb.type === 'tool_result' && has(nb, 'tool_use_id')) nb = withMember(nb, 'tool_use_id', renumber(nb.tool_use_id));
          return nb;
        }));
      }
    } else {
      if (Array.isArray(c.tool_calls)) {
        c = withMember(c, 'tool_calls', c.tool_calls.map((tc) => (isObject(tc) && has(tc, 'id') ? withMember(tc, 'id', renumber(tc.id)) : tc)));
      }
      if (has(c, 'tool_call_id')) c = withMember(c, 'tool_call_id', renumber(c.tool_call_id));
    }
    return c;
  });
  return withMember(r, 'messages', messages);
}

// endpointOf is a record's key endpoint: its stored "endpoint" (format 1.1.0),
// else the 1.0.0 rule.
export function endpointOf(provider, rec) {
  return typeof rec.endpoint === 'string' ? rec.endpoint : endpoint100(provider, rec.request);
}

// requestKey: parent is the record's lineage.parent_id (Responses chains).
export function requestKey(provider, endpoint, request, headers, parent) {
  const obj = { provider, endpoint, request: keyRequest(provider, request, endpoint, parent) };
  if (isObject(headers) && Object.keys(headers).length > 0) obj.headers = headers;
  return sha256hex(canonicalize(obj));
}

// isAssistantItem: a Responses input item that belongs to an assistant turn.
const isAssistantItem = (it) => isObject(it) && (it.role === 'assistant' || ['function_call', 'reasoning', 'item_reference'].includes(it.type));

// responsesLineage: a chain (string previous_response_id) has the lineage its
// record names (its parent is a snapshot, checked across the set by verify);
// otherwise the §11 rule over runs of assistant input items.
function responsesLineage(provider, endpoint, request, headers, stored) {
  if (typeof request.previous_response_id === 'string') return stored ?? null;
  const items = Array.isArray(request.input) ? request.input : [];
  let last = -1;
  let runs = 0;
  let inRun = false;
  items.forEach((it, i) => {
    if (isAssistantItem(it)) {
      if (!inRun) {
        last = i;
        runs++;
        inRun = true;
      }
    } else {
      inRun = false;
    }
  });
  if (runs === 0) return null;
  const cut = withMember(request, 'input', items.slice(0, last));
  return { parent_id: requestKey(provider, endpoint, cut, headers).slice(0, 12), turn: runs + 1 };
}

export function lineage(provider, endpoint, request, headers, stored) {
  if (endpoint === '/v1/responses') return responsesLineage(provider, endpoint, request, headers, stored);
  const msgs = Array.isArray(request.messages) ? request.messages : [];
  let last = -1;
  let count = 0;
  msgs.forEach((m, i) => {
    if (isObject(m) && m.role === 'assistant') {
      last = i;
      count++;
    }
  });
  if (last < 0) return null;
  const parent = withMember(request, 'messages', msgs.slice(0, last));
  return { parent_id: requestKey(provider, endpoint, parent, headers).slice(0, 12), turn: count + 1 };
}

function readJSON(file) {
  const st = lstatSync(file);
  if (!st.isFile()) throw new Error(`${file}: not a regular file`);
  return JSON.parse(readFileSync(file, 'utf8'));
}

// checkFolder returns {problems, lines, files}: every difference found, and
// (verbose) what was computed.
export function checkFolder(dir) {
  const problems = [];
  const lines = [];
  const differ = (where, what, stored, computed) => {
    if (stored !== computed) problems.push(`${where}: ${what}: stored ${JSON.stringify(stored)}, computed ${JSON.stringify(computed)}`);
  };
  const fileHashes = new Map();
  let files = 0;

  for (const provider of PROVIDERS) {
    const sub = path.join(dir, provider);
    let names = [];
    try {
      if (!lstatSync(sub).isDirectory()) continue;
      names = readdirSync(sub).filter((n) => !n.startsWith('.')).sort();
    } catch {
      continue;
    }
    for (const name of names) {
      const rel = `${provider}/${name}`;
      if (!ID_FILE.test(name)) {
        problems.push(`${rel}: not a snapshot file name (<12 hex>.json)`);
        continue;
      }
      files++;
      let doc;
      try {
        doc = readJSON(path.join(sub, name));
      } catch (e) {
        problems.push(`${rel}: ${e.message}`);
        continue;
      }
      if (!Array.isArray(doc.snapshots) || doc.snapshots.length !== 1) {
        problems.push(`${rel}: a snapshot file holds exactly one record`);
        continue;
      }
      const rec = doc.snapshots[0];
      const headers = rec.request_headers;
      const ep = endpointOf(provider, rec);
      if (doc.version !== '1.0.0' && typeof rec.endpoint !== 'string') problems.push(`${rel}: format ${doc.version} records need an "endpoint"`);
      const key = requestKey(provider, ep, rec.request, headers, rec.lineage?.parent_id);
      const id = key.slice(0, 12);
      differ(rel, 'id (from the request key)', rec.id, id);
      differ(rel, 'file name', name, `${id}.json`);
      const lin = lineage(provider, ep, rec.request, headers, rec.lineage);
      differ(rel, 'lineage', canonicalize(rec.lineage ?? null), canonicalize(lin));
      const recordHash = prefixed(without(rec, 'hash'));
      differ(rel, 'record hash', rec.hash, recordHash);
      const fileHash = prefixed({ version: doc.version, snapshots: doc.snapshots.map((r) => r.hash) });
      differ(rel, 'file hash', doc.hash, fileHash);
      fileHashes.set(rel, fileHash);
      lines.push(`${rel} key=${key} record=${recordHash} file=${fileHash}${lin ? ` parent=${lin.parent_id} turn=${lin.turn}` : ''}`);
    }
  }

  let manifest = null;
  try {
    manifest = readJSON(path.join(dir, 'manifest.json'));
  } catch (e) {
    if (e.code !== 'ENOENT') problems.push(`manifest.json: ${e.message}`);
  }
  if (manifest !== null) {
    const mh = prefixed(without(manifest, 'hash'));
    differ('manifest.json', 'manifest hash', manifest.hash, mh);
    lines.push(`manifest.json hash=${mh}`);
    const listed = new Set();
    (manifest.snapshots ?? []).forEach((e, i) => {
      const where = `manifest.json /snapshots/${i}`;
      differ(where, 'file', e.file, `${e.provider}/${e.id}.json`);
      listed.add(e.file);
      if (!fileHashes.has(e.file)) {
        problems.push(`${where}: ${e.file} is listed but was not found or could not be read`);
      } else {
        differ(where, 'hash (the file hash)', e.hash, fileHashes.get(e.file));
      }
    });
    for (const rel of fileHashes.keys()) {
      if (!listed.has(rel)) problems.push(`${rel}: not listed in manifest.json`);
    }
  } else if (files > 0) {
    problems.push('manifest.json: missing');
  }

  // Format 0.9.0: snapshots.json with bare-hex record hashes.
  let legacy = null;
  try {
    legacy = readJSON(path.join(dir, 'snapshots.json'));
  } catch (e) {
    if (e.code !== 'ENOENT') problems.push(`snapshots.json: ${e.message}`);
  }
  if (legacy !== null) {
    (legacy.snapshots ?? []).forEach((rec, i) => {
      const h = sha256hex(canonicalize(without(rec, 'hash')));
      differ(`snapshots.json /snapshots/${i} (id ${JSON.stringify(rec.id)})`, 'legacy record hash', rec.hash, h);
      lines.push(`snapshots.json /snapshots/${i} hash=${h}`);
      files++;
    });
  }
  if (files === 0 && manifest === null) problems.push(`${dir}: no snapshot files, manifest.json or snapshots.json found`);
  return { problems, lines, files };
}

function main(argv) {
  const dirs = argv.filter((a) => a !== '--verbose');
  const verbose = dirs.length !== argv.length;
  if (dirs.length === 0 || dirs.some((d) => d.startsWith('-'))) {
    process.stderr.write('usage: node hashcheck.mjs [--verbose] SNAPSHOT_FOLDER...\n');
    return 2;
  }
  let status = 0;
  for (const dir of dirs) {
    let result;
    try {
      if (!lstatSync(dir).isDirectory()) throw new Error('not a folder');
      result = checkFolder(dir);
    } catch (e) {
      process.stderr.write(`hashcheck: ${dir}: ${e.message}\n`);
      status = 2;
      continue;
    }
    if (verbose) for (const l of result.lines) process.stdout.write(`${dir}: ${l}\n`);
    if (result.problems.length > 0) {
      for (const p of result.problems) process.stdout.write(`hashcheck: MISMATCH ${dir}: ${p}\n`);
      process.stdout.write(`hashcheck: FAIL: ${result.problems.length} mismatch(es) in ${dir}\n`);
      status = Math.max(status, 1);
      continue;
    }
    process.stdout.write(`hashcheck: ok: ${result.files} record file(s) in ${dir}; every id and hash agrees\n`);
  }
  return status;
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('hashcheck.mjs')) {
  process.exitCode = main(process.argv.slice(2));
}
