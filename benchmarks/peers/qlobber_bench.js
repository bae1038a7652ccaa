#!/usr/bin/env node
// qlobber (npm), the topic matcher of aedes, a peer of benchmarks/bench_topics.py. Reads the
// workload from a JSON file that bench_topics.py writes ({"subscriptions": [[client,
// filter], ...], "publications": [topic, ...], "check": [topic, ...]}; each filter is the one
// matched, a Shared Subscription's {filter}) and prints JSON on stdout.
//
//   node qlobber_bench.js digests FILE
//       for each matcher and each topic of "check": the digest of the subscriptions it
//       matches (their indexes: see digester), after
//       dropping the matches of filters starting with '+' or '#' on a topic starting with '$'
//       (qlobber has no such rule: aedes applies [MQTT-4.7.2-1] outside the matcher), and how
//       many topics that dropping changed; "aedes_options_differ": how many of the first
//       20,000 topics get another answer with aedes's own options (no match_empty_levels)
//   node qlobber_bench.js time FILE BUDGET_S MIN_REPEATS MAX_REPEATS
//       for each matcher: seconds to add every subscription, then the CPU seconds of the
//       fastest and the median timed pass (match() on every publication, in order; the
//       process's CPU time, its helper threads' too) after an untimed warm-up pass, and the
//       wall seconds of the fastest pass by the wall clock
//
// The matchers: "qlobber" is Qlobber with MQTT's separator and wildcards and
// match_empty_levels (so that '+' matches an empty level, as MQTT says), values the
// subscriptions' indexes; "qlobber-sub" is QlobberSub, the class aedes-persistence keeps its
// subscriptions in, with the same options, values {clientId, topic, qos} as aedes adds them.
'use strict'

const fs = require('fs')
const path = require('path')
const { Qlobber } = require('qlobber')
const QlobberSub = require('qlobber/aedes/qlobber-sub')

const version = require(path.join(path.dirname(require.resolve('qlobber')), 'package.json')).version
const AEDES_OPTIONS = { wildcard_one: '+', wildcard_some: '#', separator: '/' }
const MQTT_OPTIONS = { ...AEDES_OPTIONS, match_empty_levels: true }
// how many topic names of "check" are also matched with aedes's own options
const AEDES_CHECKED = 20000

function build (name, subscriptions, options) {
  if (name === 'qlobber') {
    const q = new Qlobber(options)
    subscriptions.forEach(([, filter], index) => q.add(filter, index))
    return q
  }
  const q = new QlobberSub(options)
  subscriptions.forEach(([clientId, filter]) => q.add(filter, { clientId, topic: filter, qos: 1 }))
  return q
}

// the subscriptions' indexes in one match() answer of each matcher
function indexer (name, subscriptions) {
  if (name === 'qlobber') return (answer) => answer
  const byKey = new Map()
  subscriptions.forEach(([clientId, filter], index) => byKey.set(clientId + '\n' + filter, index))
  return (answer) => answer.map((s) => byKey.get(s.clientId + '\n' + s.topic))
}

// MurmurHash3's finaliser, as bench_topics.py's _fmix32
function fmix32 (h) {
  h ^= h >>> 16
  h = Math.imul(h, 0x85EBCA6B)
  h ^= h >>> 13
  h = Math.imul(h, 0xC2B2AE35)
  h ^= h >>> 16
  return h >>> 0
}

// [count, sum of fmix32(i + 1), sum of fmix32((i + 1) ^ 0x5BD1E995)], the sums mod 2^32:
// the same for the same set in any order (bench_topics.py's Digester)
function digester (size) {
  const one = new Float64Array(size)
  const two = new Float64Array(size)
  for (let i = 0; i < size; i++) {
    one[i] = fmix32(i + 1)
    two[i] = fmix32((i + 1) ^ 0x5BD1E995)
  }
  return (indexes) => {
    let a = 0
    let b = 0
    for (const i of indexes) {
      a += one[i]
      b += two[i]
    }
    return [indexes.length, a % 4294967296, b % 4294967296]
  }
}

function digests (work) {
  const out = { version, matchers: {}, dollar_dropped: {}, aedes_options_differ: {} }
  const subs = work.subscriptions
  const wild = subs.map(([, filter]) => filter[0] === '+' || filter[0] === '#')
  const digest = digester(subs.length)
  const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i])
  for (const name of ['qlobber', 'qlobber-sub']) {
    const q = build(name, subs, MQTT_OPTIONS)
    const aedes = build(name, subs, AEDES_OPTIONS)
    const indexes = indexer(name, subs)
    let dropped = 0
    let differ = 0
    out.matchers[name] = work.check.map((topic, k) => {
      let found = indexes(q.match(topic))
      if (k < AEDES_CHECKED && !same(digest(indexes(aedes.match(topic))), digest(found))) differ++
      if (topic[0] === '$') {
        const kept = found.filter((i) => !wild[i])
        if (kept.length !== found.length) dropped++
        found = kept
      }
      return digest(found)
    })
    out.dollar_dropped[name] = dropped
    out.aedes_options_differ[name] = differ
  }
  return out
}

function seconds (start) {
  return Number(process.hrtime.bigint() - start) / 1e9
}

function time (work, budget, minRepeats, maxRepeats) {
  const out = { version, node: process.version, matchers: {} }
  const pubs = work.publications
  for (const name of ['qlobber', 'qlobber-sub']) {
    let start = process.hrtime.bigint()
    const q = build(name, work.subscriptions, MQTT_OPTIONS)
    const buildS = seconds(start)
    let total = 0
    for (const topic of pubs) total += q.match(topic).length // warm-up (V8's JIT)
    const cpu = []
    const wall = []
    const began = process.hrtime.bigint()
    while (cpu.length < maxRepeats && (cpu.length < minRepeats || seconds(began) < budget)) {
      let count = 0
      start = process.hrtime.bigint()
      const used = process.cpuUsage()
      for (const topic of pubs) count += q.match(topic).length
      const spent = process.cpuUsage(used)
      wall.push(seconds(start))
      cpu.push((spent.user + spent.system) / 1e6)
      if (count !== total) throw new Error(`${name}: a timed pass matched ${count}, not ${total}`)
    }
    cpu.sort((a, b) => a - b)
    out.matchers[name] = {
      build_s: buildS,
      best_cpu_s: cpu[0],
      median_cpu_s: cpu[Math.floor(cpu.length / 2)],
      best_wall_s: Math.min(...wall),
      repeats: cpu.length,
      matched: total
    }
  }
  return out
}

const [mode, file, ...rest] = process.argv.slice(2)
const work = JSON.parse(fs.readFileSync(file, 'utf8'))
if (mode === 'digests') {
  process.stdout.write(JSON.stringify(digests(work)))
} else if (mode === 'time') {
  const [budget, minRepeats, maxRepeats] = rest.map(Number)
  process.stdout.write(JSON.stringify(time(work, budget, minRepeats, maxRepeats)))
} else {
  process.stderr.write('usage: qlobber_bench.js digests FILE | time FILE BUDGET_S MIN MAX\n')
  process.exit(2)
}
