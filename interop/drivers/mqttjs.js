// The driver of MQTT.js (npm package `mqtt`) for `pubproof probe-client`: the driver
// protocol (pubproof.probe.clients.driver) in one small program. Reads the plan from
// PUBPROOF_PLAN, connects, subscribes, publishes, prints each message the application
// receives as a JSON line, reconnects when the connection is lost, and ends when standard
// input closes.
'use strict'
const mqtt = require('mqtt')
const { version } = require('mqtt/package.json')

const plan = JSON.parse(process.env.PUBPROOF_PLAN)
const say = (event, fields = {}) => process.stdout.write(JSON.stringify({ event, ...fields }) + '\n')

say('hello', { library: 'mqttjs', version })
const v31 = plan.edition === '3.1'
const client = mqtt.connect(plan.url, {
  clientId: plan.client_id,
  clean: plan.clean_session,
  keepalive: plan.keepalive,
  protocolVersion: v31 ? 3 : 4,
  protocolId: v31 ? 'MQIsdp' : 'MQTT',
  reconnectPeriod: plan.reconnect ? 200 : 0,
  resubscribe: false
})
let first = true
client.on('connect', () => {
  say('connected')
  if (!first) return
  first = false
  for (const s of plan.subscribe) {
    client.subscribe(s.topic, { qos: s.qos }, (err) => err ? say('connection-error', { message: String(err) }) : say('subscribed'))
  }
  for (const m of plan.publish) {
    client.publish(m.topic, Buffer.from(m.payload_hex, 'hex'), { qos: m.qos, retain: m.retain })
  }
})
client.on('message', (topic, payload, packet) => {
  say('message', { topic, qos: packet.qos, retain: packet.retain, payload_hex: payload.toString('hex') })
})
client.on('close', () => say('connection-lost'))
client.on('error', (err) => say('connection-error', { message: String(err) }))
process.stdin.resume()
process.stdin.on('end', () => client.end(false, {}, () => process.exit(0)))
