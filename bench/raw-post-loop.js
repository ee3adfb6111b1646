// The baseline of bench:delivery, in its own process: the same POSTs as the
// worker sends (same body size, same concurrency), straight to the targets
// with undici and a keep-alive agent. Prints one JSON line: latencies, elapsed
// ms and the CPU ms this process spent on the loop.
// argv: urlsJson total concurrency bodyBytes
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';

const [urlsJson, totalText, concurrencyText, bodyBytesText] = process.argv.slice(2);
const urls = JSON.parse(urlsJson);
const total = Number(totalText);
const body = JSON.stringify({ id: 'raw', pad: 'x'.repeat(Math.max(0, Number(bodyBytesText) - 20)) });
const agent = new Agent({ keepAliveTimeout: 60_000 });
const latencies = [];
let next = 0;
const started = performance.now();
const cpuBefore = process.cpuUsage();
await Promise.all(Array.from({ length: Number(concurrencyText) }, async () => {
  while (next < total) {
    const index = next++;
    const sent = performance.now();
    const res = await request(urls[index % urls.length], {
      method: 'POST', body, headers: { 'content-type': 'application/json' }, dispatcher: agent,
    });
    await res.body.dump();
    latencies.push(performance.now() - sent);
  }
}));
const elapsedMs = performance.now() - started;
const cpu = process.cpuUsage(cpuBefore);
await agent.close();
process.stdout.write(JSON.stringify({ latencies, elapsedMs, cpuMs: (cpu.user + cpu.system) / 1000 }) + '\n');
