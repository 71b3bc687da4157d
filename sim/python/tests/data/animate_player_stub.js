// Runs the player script of an `lfsim animate` HTML file against a stand-in for the browser
// (elements and a 2D canvas context that records what is drawn), shows frame K through the
// slider, and prints what the canvas got as JSON: the strokes (colour, line width, points),
// the filled shapes and the texts, in drawing order.
// Usage: node animate_player_stub.js FILE.html K
"use strict";
const fs = require("fs");

const html = fs.readFileSync(process.argv[2], "utf8");
const json = html.match(/<script type="application\/json">([\s\S]*?)<\/script>/)[1];
const script = html.match(/<script>([\s\S]*?)<\/script>/)[1];

const drawn = { strokes: [], fills: [], texts: [] };
let path = [];
const ctx = {
  strokeStyle: "#000", fillStyle: "#000", lineWidth: 1, font: "", lineCap: "",
  textAlign: "", textBaseline: "",
  setTransform() {}, clearRect() {},
  beginPath() { path = []; },
  moveTo(x, y) { path.push([x, y]); },
  lineTo(x, y) { path.push([x, y]); },
  closePath() {},
  stroke() { drawn.strokes.push({ color: this.strokeStyle, width: this.lineWidth, points: path }); },
  fill() { drawn.fills.push({ color: this.fillStyle, points: path }); },
  fillRect() {},
  fillText(text) { drawn.texts.push(text); },
  measureText(text) { return { width: 5 * text.length }; },
};
const element = (extra) => Object.assign({ clientWidth: 800, clientHeight: 600, innerHTML: "" }, extra);
const canvas = element({ width: 0, height: 0, getContext: () => ctx });
const img = element({ complete: true });
const slider = element({ value: 0 });
const info = element({ textContent: "" });
const buttons = [0, 1, 2, 3, 4].map(() => element({}));
const root = {
  querySelector(selector) {
    if (selector.startsWith("script")) return { textContent: json };
    return { img, canvas, input: slider, ".lfsim-frame": info }[selector];
  },
  querySelectorAll() { return buttons; },
};
global.document = { getElementById: () => root };
global.window = { devicePixelRatio: 1, addEventListener() {} };

(0, eval)(script);
drawn.strokes = []; drawn.fills = []; drawn.texts = [];
slider.value = String(process.argv[3]);
slider.oninput();
console.log(JSON.stringify({ info: info.textContent, ...drawn }));
