// mqtt-packet (npm) as a codec under pubproof's vector corpus: reads JSON lines
// {"id", "hex", "version": 4|5} on standard input, parses each vector's bytes with a fresh
// mqtt-packet parser and prints one JSON line per vector:
// {"id", "packets": [record, ...], "error": message or null, "left": bytes not parsed}
// A record is {type, topic, payload_hex, qos, packet_id, dup, retain} for PUBLISH and
// {type, packet_id} for an acknowledgement; in 5.0 also reason_code and properties.
'use strict'
const readline = require('readline')
const mqtt = require('mqtt-packet')

function users (object) {
  return Object.keys(object).sort().map((name) => [name, [].concat(object[name])])
}

function properties (p, type) {
  const out = {}
  if (!p) return out
  if (type === 'PUBLISH') {
    if (p.payloadFormatIndicator !== undefined) out.payload_format_indicator = p.payloadFormatIndicator ? 1 : 0
    if (p.messageExpiryInterval !== undefined) out.message_expiry_interval = p.messageExpiryInterval
    if (p.topicAlias !== undefined) out.topic_alias = p.topicAlias
    if (p.responseTopic !== undefined) out.response_topic = p.responseTopic
    if (p.correlationData !== undefined) out.correlation_data_hex = p.correlationData.toString('hex')
    if (p.subscriptionIdentifier !== undefined) out.subscription_identifiers = [].concat(p.subscriptionIdentifier)
    if (p.contentType !== undefined) out.content_type = p.contentType
  } else if (p.reasonString !== undefined) {
    out.reason_string = p.reasonString
  }
  if (p.userProperties !== undefined) out.user_properties = users(p.userProperties)
  return out
}

function record (packet, version) {
  const type = packet.cmd.toUpperCase()
  const r = type === 'PUBLISH'
    ? { type, topic: packet.topic, payload_hex: Buffer.from(packet.payload).toString('hex'), qos: packet.qos, packet_id: packet.qos ? packet.messageId : null, dup: packet.dup, retain: packet.retain }
    : { type, packet_id: packet.messageId }
  if (version === 5) {
    if (type !== 'PUBLISH') r.reason_code = packet.reasonCode === undefined ? 0 : packet.reasonCode
    r.properties = properties(packet.properties, type)
  }
  return r
}

const lines = readline.createInterface({ input: process.stdin })
lines.on('line', (line) => {
  if (!line.trim()) return
  const v = JSON.parse(line)
  const parser = mqtt.parser({ protocolVersion: v.version })
  const packets = []
  let error = null
  parser.on('packet', (p) => packets.push(record(p, v.version)))
  parser.on('error', (e) => { error = String(e && e.message ? e.message : e) })
  let left = 0
  try {
    left = parser.parse(Buffer.from(v.hex, 'hex'))
  } catch (e) {
    error = String(e && e.message ? e.message : e)
  }
  process.stdout.write(JSON.stringify({ id: v.id, packets, error, left }) + '\n')
})
