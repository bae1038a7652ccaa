// aedes (npm) on 127.0.0.1:PORT, for pubproof's broker probe: `node aedes.mjs PORT`.
// Prints "aedes VERSION listening on 127.0.0.1:PORT" once it listens.
import { createServer } from 'node:net'
import { readFileSync } from 'node:fs'
import { Aedes } from 'aedes'

const port = Number(process.argv[2])
const pkg = JSON.parse(readFileSync(new URL('../node_modules/aedes/package.json', import.meta.url)))
const broker = await Aedes.createBroker()
const server = createServer(broker.handle)
server.listen(port, '127.0.0.1', () => {
  console.log(`aedes ${pkg.version} listening on 127.0.0.1:${port}`)
})
