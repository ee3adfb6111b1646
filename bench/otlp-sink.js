// An OTLP/HTTP endpoint that takes every export and keeps nothing: what the
// export-on runs of bench:api and bench:delivery send their spans to
// (docs/performance.md, "Traces"). Its own process, so its CPU is not the server's.
//   node bench/otlp-sink.js 4318 &
//   OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 npm run bench:api
import http from 'node:http';

let exports = 0;
let bytes = 0;
const server = http.createServer((req, res) => {
  req.on('data', (chunk) => (bytes += chunk.length));
  req.on('end', () => {
    exports++;
    res.writeHead(200, { 'content-type': req.headers['content-type'] ?? 'application/json' });
    res.end(req.headers['content-type'] === 'application/json' ? '{}' : '');
  });
});
server.listen(Number(process.argv[2] ?? 4318), '127.0.0.1');
process.on('SIGTERM', () => {
  process.stdout.write(`otlp-sink: ${exports} exports, ${bytes} bytes\n`);
  process.exit(0);
});
