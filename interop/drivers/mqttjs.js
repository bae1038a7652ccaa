// The driver of MQTT.js (npm package `mqtt`) for `pubproof probe-client`: the driver
// protocol (pubproof.probe.clients.driver) in one small program. Reads the plan from
// PUBPROOF_PLAN, connects, subscribes, publishes, prints each message the application
// receives as a JSON line, reconnects when the connection is lost, and ends when standard
// input closes. MQTT 5.0 (protocolVersion 5): the client's limits and Session Expiry
// Interval in CONNECT, each message's properties both ways (MQTT.js keeps User Properties
// as an object: repeated names are grouped, so their order is the object's).
'use strict'
const mqtt = require('mqtt')
const { version } = require('mqtt/package.json')

const plan = JSON.parse(process.env.PUBPROOF_PLAN)
const say = (event, fields = {}) => process.stdout.write(JSON.stringify({ event, ...fields }) + '\n')

// a plan's property (the form of pubproof decode's P) -> MQTT.js's name and value
const toLibrary = (p = {}) => {
  const out = {}
  for (const [key, value] of Object.entries(p)) {
    if (key === 'payload_format_indicator') out.payloadFormatIndicator = value === 1
    else if (key === 'message_expiry_interval') out.messageExpiryInterval = value
    else if (key === 'topic_alias') out.topicAlias = value
    else if (key === 'response_topic') out.responseTopic = value
    else if (key === 'correlation_data_hex') out.correlationData = Buffer.from(value, 'hex')
    else if (key === 'content_type') out.contentType = value
    else if (key === 'user_properties') {
      out.userProperties = {}
      for (const [name, text] of value) {
        const had = out.userProperties[name]
        out.userProperties[name] = had === undefined ? text : [].concat(had, text)
      }
    }
  }
  return out
}

// MQTT.js's properties of a received message -> the P form
const fromLibrary = (p = {}) => {
  const out = {}
  if (p.payloadFormatIndicator !== undefined) out.payload_format_indicator = p.payloadFormatIndicator ? 1 : 0
  if (p.messageExpiryInterval !== undefined) out.message_expiry_interval = p.messageExpiryInterval
  if (p.responseTopic !== undefined) out.response_topic = p.responseTopic
  if (p.correlationData !== undefined) out.correlation_data_hex = Buffer.from(p.correlationData).toString('hex')
  if (p.userProperties !== undefined) {
    out.user_properties = []
    for (const [name, value] of Object.entries(p.userProperties)) {
      for (const text of [].concat(value)) out.user_properties.push([name, String(text)])
    }
  }
  if (p.contentType !== undefined) out.content_type = p.contentType
  if (p.subscriptionIdentifier !== undefined) out.subscription_identifiers = [].concat(p.subscriptionIdentifier)
  return out
}

say('hello', { library: 'mqttjs', version })
const v31 = plan.edition === '3.1'
const v5 = plan.edition === '5.0'
const options = {
  clientId: plan.client_id,
  clean: plan.clean_session,
  keepalive: plan.keepalive,
  protocolVersion: v5 ? 5 : v31 ? 3 : 4,
  protocolId: v31 ? 'MQIsdp' : 'MQTT',
  reconnectPeriod: plan.reconnect ? 200 : 0,
  resubscribe: false
}
if (v5) {
  const limits = plan.limits || {}
  options.properties = {}
  if (plan.session_expiry_interval !== undefined) options.properties.sessionExpiryInterval = plan.session_expiry_interval
  if (limits.receive_maximum !== undefined) options.properties.receiveMaximum = limits.receive_maximum
  if (limits.topic_alias_maximum !== undefined) options.properties.topicAliasMaximum = limits.topic_alias_maximum
  if (limits.maximum_packet_size !== undefined) options.properties.maximumPacketSize = limits.maximum_packet_size
}
const client = mqtt.connect(plan.url, options)
let first = true
let ending = false
client.on('connect', () => {
  say('connected')
  if (!first) return
  first = false
  for (const s of plan.subscribe) {
    client.subscribe(s.topic, { qos: s.qos }, (err) => err ? say('connection-error', { message: String(err) }) : say('subscribed'))
  }
  plan.publish.forEach((m, index) => {
    const opts = { qos: m.qos, retain: m.retain }
    if (v5 && m.properties) opts.properties = toLibrary(m.properties)
    client.publish(m.topic, Buffer.from(m.payload_hex, 'hex'), opts, (err) => {
      if (err && !ending) say('publish-refused', { index, message: String(err) })
    })
  })
})
client.on('message', (topic, payload, packet) => {
  const line = { topic, qos: packet.qos, retain: packet.retain, payload_hex: payload.toString('hex') }
  if (v5) line.properties = fromLibrary(packet.properties)
  say('message', line)
})
client.on('close', () => say('connection-lost'))
client.on('error', (err) => say('connection-error', { message: String(err) }))
process.stdin.resume()
process.stdin.on('end', () => { ending = true; client.end(false, {}, () => process.exit(0)) })
