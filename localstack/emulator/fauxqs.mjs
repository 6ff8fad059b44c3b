// Runs fauxqs listening on 127.0.0.1 only. fauxqs's own startFauxqs (and its
// CLI) listens on 0.0.0.0 whatever FAUXQS_HOST says, so this builds the same
// app with fauxqs's exported buildApp and listens on loopback itself.
// Arguments: the file URL of fauxqs's dist/app.js, the port, the region.
const [appURL, port, region] = process.argv.slice(1);
const { buildApp } = await import(appURL);
// Of what startFauxqs does around buildApp, only the region is kept. Left out:
// the request log, FAUXQS_* variables, init config, message spies.
const app = buildApp({ logger: false, defaultRegion: region });
const address = await app.listen({ host: "127.0.0.1", port: Number(port) });
console.log(`fauxqs listening on ${address}`);
