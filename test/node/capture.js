// capture.js records raw OTLP/HTTP JSON as an agent exports it, for normalizer fixtures:
//   node capture.js OUT_DIR PORT   (then run an agent with OTLP_ENDPOINT=http://127.0.0.1:PORT)
// Every export request is merged into OUT_DIR/traces.json or OUT_DIR/logs.json (one OTLP
// document each), so a run's file can be posted to a collector as it is.
'use strict';
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');

const [dir, port] = process.argv.slice(2);
fs.mkdirSync(dir, { recursive: true });
const kinds = { '/v1/traces': ['traces.json', 'resourceSpans'], '/v1/logs': ['logs.json', 'resourceLogs'] };
http.createServer((req, res) => {
  let raw = '';
  req.on('data', (c) => (raw += c));
  req.on('end', () => {
    const kind = kinds[req.url];
    if (kind) {
      const file = path.join(dir, kind[0]);
      const doc = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : { [kind[1]]: [] };
      doc[kind[1]].push(...JSON.parse(raw)[kind[1]]);
      fs.writeFileSync(file, JSON.stringify(doc));
    }
    res.setHeader('Content-Type', 'application/json');
    res.end('{}');
  });
}).listen(Number(port), '127.0.0.1');
