#!/usr/bin/env node
// hashcheck: recompute every id and hash of a traceforge snapshot folder in
// JavaScript — RFC 8785 canonical JSON from the `canonicalize` package,
// SHA-256 from node:crypto — independently of the Go implementation.
//
//   node hashcheck.mjs [--verbose] [--config FILE] FOLDER...
//
// Formats 1.1.0 and 1.2.0 (manifest.json + <provider>/<id>.json), per DESIGN
// §4/§11/§12.2/§13.2:
//   request key = sha256(JCS({provider, endpoint, request, headers?})), endpoint
//                 = the record's "endpoint" field (format 1.0.0 records have
//                 none: it is derived from the body, see endpoint100), with the
//                 key-only normalization (drop stream/stream_options, renumber
//                 tool-call ids call_1, call_2, … in order of first appearance,
//                 Anthropic string content/system → one text block);
//                 then the project's declared key normalizers (DESIGN §12.3,
//                 §12.8, §12.9 item 3: "normalize" in .traceforge.json, read
//                 from the folder's parent or --config), whose names that
//                 changed the key must equal the record's key_normalizers;
//                 an exchange record (endpoint "METHOD /route", 1.2.0) is
//                 keyed by its stored request as it is, no normalizer; a
//                 record with "occurrence" n (1.2.0) has the key
//                 sha256(JCS({key, occurrence: n})) of its request's key;
//   id          = first 12 hex characters of the key (= the file name);
//   defaults_applied (1.2.0, optional) = the JSON pointers the project's
//                 request defaults set in "request" before it was sent: each
//                 must point at a member of the stored request; the key is
//                 over the stored request as it is, defaults included, and
//                 the field is hashed with the record like any other;
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

const PROVIDERS = ['anthropic', 'azure', 'gemini', 'ollama', 'openai', 'vertex'];
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

// isExchange: an exchange record's endpoint is "METHOD /route" (format
// 1.2.0, DESIGN §13.4); its key request is the stored request itself
// (method, path, query, body…), no key normalizer applies, and it has no
// lineage.
export const isExchange = (endpoint) => /^[A-Z]+ \//.test(endpoint);

// keyMultipart: an exchange's multipart body (body_text or body_b64) is
// keyed with its boundary — random per upload — written as
// "traceforge-boundary": the first line is "--" + boundary (1 to 200
// characters, no CR/LF) and the body holds "\r\n--" + boundary + "--".
export function keyMultipart(request) {
  const isText = typeof request.body_text === 'string';
  const isB64 = typeof request.body_b64 === 'string';
  if (!isText && !isB64) return request;
  const body = isText ? Buffer.from(request.body_text, 'utf8') : Buffer.from(request.body_b64, 'base64');
  if (body.subarray(0, 2).toString('latin1') !== '--') return request;
  const end = body.indexOf('\r\n');
  if (end < 3 || end > 202) return request;
  const boundary = body.subarray(2, end);
  if (boundary.includes(0x0d) || boundary.includes(0x0a)) return request;
  const close = Buffer.concat([Buffer.from('\r\n--'), boundary, Buffer.from('--')]);
  if (body.indexOf(close) < 0) return request;
  const from = Buffer.concat([Buffer.from('--'), boundary]);
  const to = Buffer.from('--traceforge-boundary');
  const parts = [];
  let at = 0;
  for (let i = body.indexOf(from, at); i >= 0; i = body.indexOf(from, at)) {
    parts.push(body.subarray(at, i), to);
    at = i + from.length;
  }
  parts.push(body.subarray(at));
  const out = Buffer.concat(parts);
  return isText ? { ...request, body_text: out.toString('utf8') } : { ...request, body_b64: out.toString('base64') };
}

export function keyRequest(provider, request, endpoint, parent) {
  if (isExchange(endpoint)) return keyMultipart(request);
  if (provider === 'gemini') return request; // no key-only rules: streaming is in the path
  // Vertex AI: Gemini's wire (no key-only rules) but for Claude's
  // rawPredict, Anthropic's.
  const anthropicWire = provider === 'anthropic' || (provider === 'vertex' && endpoint.includes('/publishers/anthropic/'));
  if (provider === 'vertex' && !anthropicWire) return request;
  let r = Object.fromEntries(Object.entries(request).filter(([k]) => k !== 'stream' && k !== 'stream_options'));
  // Responses: OpenAI's (a named upstream's /u/NAME/v1/responses too) and
  // Azure OpenAI's /openai/v1/responses[?api-version=…].
  if (/\/v1\/responses(\?|$)/.test(endpoint)) return responsesKeyRequest(r, parent);
  if (anthropicWire && typeof r.system === 'string') r = withMember(r, 'system', textBlocks(r.system));
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
    if (anthropicWire) {
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

// Declared key normalizers. Built-ins replace every match with "<name>";
// their patterns are DESIGN §12.8's, valid in both Go RE2 and JavaScript.
export const BUILTINS = {
  uuid: '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}',
  ulid: '\\b[0-7][0-9A-HJKMNP-TV-Z]{25}\\b',
  'iso-datetime': '\\d{4}-\\d{2}-\\d{2}[T ]\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?(Z|[+-]\\d{2}:?\\d{2})?',
  date: '\\b\\d{4}-\\d{2}-\\d{2}\\b',
  'unix-ms': '\\b1\\d{12}\\b',
};

// parsePointer splits a JSON pointer into unescaped tokens ("*" = any).
function parsePointer(p) {
  if (p === '') return [];
  return p.slice(1).split('/').map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
}

// expand is Go's Regexp.Expand template syntax: $name, ${name}, $$; a
// number names a group; unknown or unmatched groups are empty; a $ that
// starts no name is kept.
function expand(template, groups, named) {
  return template.replace(/\$(\$|\{([A-Za-z0-9_]+)\}|([A-Za-z0-9_]+))?/g, (m, all, braced, bare) => {
    if (all === undefined) return '$';
    if (all === '$') return '$';
    const name = braced ?? bare;
    if (/^[0-9]+$/.test(name)) return groups[Number(name)] ?? '';
    return named?.[name] ?? '';
  });
}

// parseNormalizers turns the config's "normalize" value into rules (the
// config is validated by traceforge itself; this trusts its shape).
export function parseNormalizers(list) {
  return (list ?? []).map((e) => {
    const kind = e.rule;
    const paths = Array.isArray(e.paths) ? e.paths.map(parsePointer) : null;
    if (kind === 'drop') return { kind, name: 'drop', paths };
    const source = kind === 'regex' ? e.pattern.replaceAll('(?P<', '(?<') : BUILTINS[kind];
    if (source === undefined) throw new Error(`unknown normalizer rule ${JSON.stringify(kind)}`);
    const re = new RegExp(source, 'gu');
    const replace = kind === 'regex' ? e.replace : `<${kind}>`;
    return {
      kind,
      name: kind === 'regex' ? (e.name ?? 'regex') : kind,
      paths,
      apply: (str) => str.replace(re, (...args) => {
        const named = typeof args[args.length - 1] === 'object' ? args[args.length - 1] : undefined;
        const groups = args.slice(0, named ? -3 : -2);
        return expand(replace, groups, named);
      }),
    };
  });
}

// locate expands pointers with "*" to the concrete locations in doc:
// [parent, key] pairs, deduplicated, as token paths.
function locate(doc, pointers) {
  const out = new Map();
  const walk = (v, rest, at) => {
    if (rest.length === 0) {
      out.set(JSON.stringify(at), at);
      return;
    }
    const [tok, ...more] = rest;
    if (Array.isArray(v)) {
      if (tok === '*') v.forEach((e, i) => walk(e, more, [...at, i]));
      else if (/^(0|[1-9][0-9]*)$/.test(tok) && Number(tok) < v.length) walk(v[Number(tok)], more, [...at, Number(tok)]);
    } else if (isObject(v)) {
      if (tok === '*') Object.keys(v).forEach((k) => walk(v[k], more, [...at, k]));
      else if (has(v, tok)) walk(v[tok], more, [...at, tok]);
    }
  };
  for (const p of pointers) walk(doc, p, []);
  return [...out.values()];
}

const getAt = (doc, at) => at.reduce((v, k) => v[k], doc);

// rewrite replaces in every string inside v (a fresh copy) with f.
function rewrite(v, f) {
  if (typeof v === 'string') return f(v);
  if (Array.isArray(v)) return v.map((e) => rewrite(e, f));
  if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, e]) => [k, rewrite(e, f)]));
  return v;
}

// applyNormalizers applies rules in order to a key request and returns
// {request, applied}: applied names the rules whose result changed the
// canonical bytes, in order, without repeats.
export function applyNormalizers(request, rules) {
  let doc = structuredClone(request);
  const applied = [];
  for (const r of rules) {
    const before = canonicalize(doc);
    if (r.kind === 'drop') {
      const locs = locate(doc, r.paths).sort((a, b) => {
        for (let i = 0; i < Math.min(a.length, b.length); i++) {
          if (a[i] === b[i]) continue;
          if (typeof a[i] === 'number' && typeof b[i] === 'number') return b[i] - a[i];
          return String(b[i]) < String(a[i]) ? -1 : 1;
        }
        return b.length - a.length;
      });
      for (const at of locs) {
        const parent = getAt(doc, at.slice(0, -1));
        const last = at[at.length - 1];
        if (Array.isArray(parent)) parent.splice(last, 1);
        else delete parent[last];
      }
    } else if (r.paths === null) {
      doc = rewrite(doc, r.apply);
    } else {
      const locs = locate(doc, r.paths);
      const roots = locs.filter((l) => !locs.some((o) => o.length < l.length && o.every((t, i) => t === l[i])));
      for (const at of roots) {
        if (at.length === 0) {
          doc = rewrite(doc, r.apply);
          continue;
        }
        const parent = getAt(doc, at.slice(0, -1));
        parent[at[at.length - 1]] = rewrite(parent[at[at.length - 1]], r.apply);
      }
    }
    if (canonicalize(doc) !== before && !applied.includes(r.name)) applied.push(r.name);
  }
  return { request: doc, applied };
}

// keyObject is the key object and the names of the declared normalizers
// that changed it; parent is the record's lineage.parent_id (Responses chains).
export function keyObject(provider, endpoint, request, headers, parent, rules = []) {
  const { request: kr, applied } = applyNormalizers(keyRequest(provider, request, endpoint, parent), isExchange(endpoint) ? [] : rules);
  const obj = { provider, endpoint, request: kr };
  if (isObject(headers) && Object.keys(headers).length > 0) obj.headers = headers;
  return { obj, applied };
}

// requestKey: parent is the record's lineage.parent_id (Responses chains);
// rules are the project's declared key normalizers.
export function requestKey(provider, endpoint, request, headers, parent, rules = []) {
  return sha256hex(canonicalize(keyObject(provider, endpoint, request, headers, parent, rules).obj));
}

// isAssistantItem: a Responses input item that belongs to an assistant turn.
const isAssistantItem = (it) => isObject(it) && (it.role === 'assistant' || ['function_call', 'reasoning', 'item_reference'].includes(it.type));

// responsesLineage: a chain (string previous_response_id) has the lineage its
// record names (its parent is a snapshot, checked across the set by verify);
// otherwise the §11 rule over runs of assistant input items.
function responsesLineage(provider, endpoint, request, headers, stored, rules) {
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
  return { parent_id: requestKey(provider, endpoint, cut, headers, undefined, rules).slice(0, 12), turn: runs + 1 };
}

export function lineage(provider, endpoint, request, headers, stored, rules = []) {
  if (isExchange(endpoint)) return null;
  if (endpoint === '/v1/responses') return responsesLineage(provider, endpoint, request, headers, stored, rules);
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
  return { parent_id: requestKey(provider, endpoint, parent, headers, undefined, rules).slice(0, 12), turn: count + 1 };
}

function readJSON(file) {
  const st = lstatSync(file);
  if (!st.isFile()) throw new Error(`${file}: not a regular file`);
  return JSON.parse(readFileSync(file, 'utf8'));
}

// checkFolder returns {problems, lines, files}: every difference found, and
// (verbose) what was computed.
export function checkFolder(dir, configFile) {
  let rules = [];
  const cfgPath = configFile ?? path.join(dir, '..', '.traceforge.json');
  try {
    rules = parseNormalizers(readJSON(cfgPath).normalize);
  } catch (e) {
    if (e.code !== 'ENOENT' || configFile) throw new Error(`${cfgPath}: ${e.message}`);
  }
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
      const { obj: keyObj, applied } = keyObject(provider, ep, rec.request, headers, rec.lineage?.parent_id, rules);
      let key = sha256hex(canonicalize(keyObj));
      // A later occurrence of an identical request (format 1.2.0, DESIGN
      // §13.4): sha256(JCS({key, occurrence})).
      if (rec.occurrence !== undefined) key = sha256hex(canonicalize({ key, occurrence: rec.occurrence }));
      const id = key.slice(0, 12);
      differ(rel, 'key_normalizers', canonicalize(rec.key_normalizers ?? []), canonicalize(applied));
      for (const ptr of rec.defaults_applied ?? []) {
        if (pointerValue(rec.request, ptr) === undefined) problems.push(`${rel}: defaults_applied names ${ptr}, which the request lacks`);
      }
      differ(rel, 'id (from the request key)', rec.id, id);
      differ(rel, 'file name', name, `${id}.json`);
      const lin = lineage(provider, ep, rec.request, headers, rec.lineage, rules);
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
  let configFile;
  const ci = argv.indexOf('--config');
  if (ci >= 0) {
    configFile = argv[ci + 1];
    argv = argv.filter((_, i) => i !== ci && i !== ci + 1);
    if (!configFile) {
      process.stderr.write('usage: --config needs a file\n');
      return 2;
    }
  }
  const dirs = argv.filter((a) => a !== '--verbose');
  const verbose = dirs.length !== argv.length;
  if (dirs.length === 0 || dirs.some((d) => d.startsWith('-'))) {
    process.stderr.write('usage: node hashcheck.mjs [--verbose] [--config FILE] SNAPSHOT_FOLDER...\n');
    return 2;
  }
  let status = 0;
  for (const dir of dirs) {
    let result;
    try {
      if (!lstatSync(dir).isDirectory()) throw new Error('not a folder');
      result = checkFolder(dir, configFile);
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

// pointerValue resolves an RFC 6901 pointer inside v (undefined when absent).
function pointerValue(v, ptr) {
  if (typeof ptr !== 'string' || !ptr.startsWith('/')) return undefined;
  for (const raw of ptr.slice(1).split('/')) {
    const tok = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (v === null || typeof v !== 'object' || Array.isArray(v) || !Object.hasOwn(v, tok)) return undefined;
    v = v[tok];
  }
  return v;
}
