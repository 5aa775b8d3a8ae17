// bot.js
// A random bot over the line protocol: Node.js and its standard library only.
"use strict";
const readline = require("readline");

// mulberry32, a small generator seeded from each game's seed: a re-run game plays the same
let state = 1;
function random() {
  state = (state + 0x6d2b79f5) | 0;
  let t = Math.imul(state ^ (state >>> 15), state | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

function pick(list) {
  return list[Math.floor(random() * list.length)];
}

const lines = readline.createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const msg = JSON.parse(line);
  if (msg.type === "hello" && msg.version !== 1) {
    console.error(`unknown protocol version ${msg.version}`);
    process.exit(1);
  } else if (msg.type === "game_start") {
    state = Number(BigInt(msg.seed) % 4294967296n) | 0;
  } else if (msg.type === "fault") {
    console.error(`fault on ${msg.id}: ${msg.reason}`);
  } else if (msg.type === "request") {
    let answer;
    if (msg.kind === "play") {
      const hand = msg.view.hand;
      const i = Math.floor(random() * hand.length);
      const card = hand[i];
      const rest = hand.filter((_, j) => j !== i);
      answer = { id: msg.id, play: card, cell: pick(msg.legal_cells) };
      if (msg.discard_required) answer.discard = pick(rest);
    } else {
      answer = { id: msg.id, draw: pick(msg.legal_sources) };
    }
    process.stdout.write(JSON.stringify(answer) + "\n");
  }
});
