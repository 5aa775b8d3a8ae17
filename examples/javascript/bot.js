// bot.js
// A random bot over the line protocol: Node.js and its standard library only.
"use strict";
const readline = require("readline");

function pick(list) {
  return list[Math.floor(Math.random() * list.length)];
}

const lines = readline.createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const msg = JSON.parse(line);
  if (msg.type === "hello" && msg.version !== 1) {
    console.error(`unknown protocol version ${msg.version}`);
    process.exit(1);
  } else if (msg.type === "fault") {
    console.error(`fault on ${msg.id}: ${msg.reason}`);
  } else if (msg.type === "request") {
    let answer;
    if (msg.kind === "play") {
      const hand = msg.view.hand;
      const i = Math.floor(Math.random() * hand.length);
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
