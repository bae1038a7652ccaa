#!/usr/bin/env node
// mqtt-packet (npm), a peer of benchmarks/bench_codec.py: decodes a stream of MQTT packets
// read from a file with mqtt-packet's own streaming parser and prints JSON on stdout.
//
//   node mqtt_packet_bench.js records FILE VERSION
//       {"version": "...", "packets": [record, ...]}: every packet's fields, for the check
//       against pubproof (type, topic, payload, QoS, packet id, DUP, RETAIN; in 5.0 also
//       the Reason Code and the properties)
//   node mqtt_packet_bench.js time FILE VERSION COUNT BUDGET_S MIN_REPEATS MAX_REPEATS
//       {"version": "...", "best_s": ..., "median_s": ..., "repeats": ...}: best of several
//       timed passes after untimed warm-up passes (V8's JIT), each a fresh parser fed the
//       whole stream at once; every pass must give COUNT packets and no error (checked
//       outside the timing)
//
// VERSION is mqtt-packet's protocolVersion: 4 for an MQTT 3.1.1 stream, 5 for 5.0.
'use strict'

const fs = require('fs')
const path = require('path')
const mqtt = require('mqtt-packet')

const version = require(path.join(path.dirname(require.resolve('mqtt-packet')), 'package.json')).version

function parseAll (data, protocolVersion, onPacket) {
  const parser = mqtt.parser({ protocolVersion })
  let error = null
  parser.on('packet', onPacket)
  parser.on('error', (err) => { error = err })
  const left = parser.parse(data)
  return { error, left }
}

// mqtt-packet groups the User Properties by name ({name: value} or {name: [values]}): the
// order of the values of one name is kept, the order across names is not. The record
// gives them as [[name, [values...]], ...] sorted by name; the Python side does the same.
function userProperties (object) {
  return Object.keys(object).sort().map((name) => {
    const value = object[name]
    return [name, Array.isArray(value) ? value : [value]]
  })
}

function publishProperties (p) {
  const out = {}
  if (!p) return out
  // mqtt-packet reads the Payload Format Indicator as a boolean ("byte" type)
  if (p.payloadFormatIndicator !== undefined) out.payload_format_indicator = p.payloadFormatIndicator ? 1 : 0
  if (p.messageExpiryInterval !== undefined) out.message_expiry_interval = p.messageExpiryInterval
  if (p.topicAlias !== undefined) out.topic_alias = p.topicAlias
  if (p.responseTopic !== undefined) out.response_topic = p.responseTopic
  if (p.correlationData !== undefined) out.correlation_data_hex = p.correlationData.toString('hex')
  if (p.userProperties !== undefined) out.user_properties = userProperties(p.userProperties)
  if (p.subscriptionIdentifier !== undefined) {
    const ids = p.subscriptionIdentifier
    out.subscription_identifiers = Array.isArray(ids) ? ids : [ids]
  }
  if (p.contentType !== undefined) out.content_type = p.contentType
  return out
}

function ackProperties (p) {
  const out = {}
  if (!p) return out
  if (p.reasonString !== undefined) out.reason_string = p.reasonString
  if (p.userProperties !== undefined) out.user_properties = userProperties(p.userProperties)
  return out
}

function record (packet, protocolVersion) {
  const type = packet.cmd.toUpperCase()
  if (type === 'PUBLISH') {
    const r = {
      type,
      topic: packet.topic,
      payload_hex: packet.payload.toString('hex'),
      qos: packet.qos,
      packet_id: packet.qos ? packet.messageId : null,
      dup: packet.dup,
      retain: packet.retain
    }
    if (protocolVersion === 5) r.properties = publishProperties(packet.properties)
    return r
  }
  const r = { type, packet_id: packet.messageId }
  if (protocolVersion === 5) {
    r.reason_code = packet.reasonCode
    r.properties = ackProperties(packet.properties)
  }
  return r
}

function main (argv) {
  const [mode, file, versionArg] = argv
  const data = fs.readFileSync(file)
  const protocolVersion = Number(versionArg)
  if (protocolVersion !== 4 && protocolVersion !== 5) throw new Error('VERSION is 4 or 5')

  if (mode === 'records') {
    const packets = []
    const { error, left } = parseAll(data, protocolVersion, (p) => packets.push(record(p, protocolVersion)))
    if (error) throw error
    if (left) throw new Error(`${left} bytes left unparsed`)
    process.stdout.write(JSON.stringify({ version, packets }))
    return
  }
  if (mode !== 'time') throw new Error('mode is records or time')
  const count = Number(argv[3])
  const budget = Number(argv[4])
  const minRepeats = Number(argv[5])
  const maxRepeats = Number(argv[6])
  // Warm-up, untimed: V8 compiles the parser's hot paths after a few passes (CPython has
  // no such stage). At least two passes, more while under half a second.
  const warmStart = process.hrtime.bigint()
  for (let i = 0; i < 20 && (i < 2 || Number(process.hrtime.bigint() - warmStart) < 5e8); i++) {
    parseAll(data, protocolVersion, () => {})
  }
  const times = []
  const started = process.hrtime.bigint()
  const elapsed = () => Number(process.hrtime.bigint() - started) / 1e9
  while (times.length < maxRepeats && (times.length < minRepeats || elapsed() < budget)) {
    const packets = []
    const push = (p) => packets.push(p) // keep every packet, as the Python decoders do
    const t0 = process.hrtime.bigint()
    const { error, left } = parseAll(data, protocolVersion, push)
    const t1 = process.hrtime.bigint()
    times.push(Number(t1 - t0) / 1e9)
    if (error || left || packets.length !== count) {
      throw new Error(`a timed pass gave a wrong result: ${packets.length} packets, ${left} bytes left, ${error}`)
    }
  }
  const sorted = [...times].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
  process.stdout.write(JSON.stringify({ version, best_s: sorted[0], median_s: median, repeats: times.length }))
}

main(process.argv.slice(2))
