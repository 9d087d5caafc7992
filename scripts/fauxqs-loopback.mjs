// Starts fauxqs on 127.0.0.1 only, for scripts/peers.
//
// fauxqs's own CLI (dist/cli.js → startFauxqs) always listens on 0.0.0.0 and logs every
// request as JSON; this builds the same Fastify app with the package's exported buildApp
// and listens on loopback, the project's rule for every server a test or bench starts.
// Request logging is off unless FAUXQS_LOGGER=true. Queue URLs keep fauxqs's shape,
// http://sqs.<region>.localhost:PORT/000000000000/NAME: JSON-protocol clients send them in
// the body to the endpoint (127.0.0.1:PORT), and fauxqs resolves a queue by region and name.
//
//   node scripts/fauxqs-loopback.mjs PATH/TO/fauxqs/dist/app.js PORT
import { pathToFileURL } from "node:url";

const [appPath, portText] = process.argv.slice(2);
const port = Number.parseInt(portText ?? "", 10);
if (!appPath || !Number.isInteger(port)) {
  console.error("usage: node fauxqs-loopback.mjs PATH/TO/fauxqs/dist/app.js PORT");
  process.exit(2);
}
const { buildApp } = await import(pathToFileURL(appPath).href);
const app = buildApp({ logger: process.env.FAUXQS_LOGGER === "true" });
const address = await app.listen({ port, host: "127.0.0.1" });
console.log(`fauxqs listening on ${address}`);
for (const signal of ["SIGTERM", "SIGINT"]) {
  process.on(signal, () => app.close().then(() => process.exit(0)));
}
