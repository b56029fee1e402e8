// The town's viewer: the map drawn once, the personas drawn at each step's tiles. Everything
// the model wrote (actions, utterances, memories) is set as text, never as markup.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const simName = decodeURIComponent(location.pathname.split("/").filter(Boolean).pop());
const api = `/api/sims/${encodeURIComponent(simName)}`;
const $ = (id) => document.getElementById(id);
const state = { map: null, shown: -1, chosen: null, loading: null };

function el(tag, attrs = {}, text = null) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  if (text !== null) node.textContent = text;
  return node;
}

function html(tag, text = null, attrs = {}) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  if (text !== null) node.textContent = text;
  return node;
}

function hue(name) {
  let h = 0;
  for (const c of name) h = (h * 31 + c.charCodeAt(0)) % 360;
  return h;
}

async function getJSON(url, options) {
  const response = await fetch(url, options);
  const body = await response.json();
  if (!response.ok) throw new Error(body.detail || response.statusText);
  return body;
}

function drawMap(map) {
  const svg = $("map");
  const [w, h] = map.size;
  svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
  svg.replaceChildren();
  for (const [x, y, bw, bh] of map.blocked) svg.append(el("rect", { class: "blocked", x, y, width: bw, height: bh }));
  for (const sector of map.sectors) {
    const g = el("g", { class: sector.walls ? "building" : "street", "data-sector": sector.name });
    const [x, y, sw, sh] = sector.area;
    g.append(el("rect", { class: "sector", x, y, width: sw, height: sh, fill: `hsl(${hue(sector.name)} 35% 55%)` }));
    for (const arena of sector.arenas) {
      const [ax, ay, aw, ah] = arena.area;
      g.append(el("rect", { class: "arena", x: ax, y: ay, width: aw, height: ah }));
      g.append(el("text", { class: "label", x: ax + 0.2, y: ay + 0.8 }, arena.name));
      for (const thing of arena.objects) {
        const [ox, oy] = thing.at;
        const square = el("rect", { class: "object", x: ox + 0.2, y: oy + 0.2, width: 0.6, height: 0.6 });
        square.append(el("title", {}, `${sector.name}: ${arena.name}: ${thing.name}`));
        g.append(square);
      }
    }
    for (const [dx, dy] of sector.doors) g.append(el("rect", { class: "door", x: dx, y: dy, width: 1, height: 1 }));
    g.append(el("text", { class: "label", x: x + 0.2, y: y - 0.2 }, sector.name));
    svg.append(g);
  }
  svg.append(el("g", { id: "people" }));
}

function initials(name) {
  return name.split(/\s+/).map((part) => part[0]).join("").slice(0, 2).toUpperCase();
}

function drawFrame(frame) {
  const people = $("people");
  people.replaceChildren();
  for (const p of frame.personas) {
    const [x, y] = p.tile;
    const g = el("g", {
      class: "persona", "data-name": p.name, "data-x": x, "data-y": y,
      transform: `translate(${x + 0.5} ${y + 0.5})`,
    });
    g.append(el("circle", { r: 0.45, fill: `hsl(${hue(p.name)} 60% 40%)` }));
    g.append(el("text", { class: "initials" }, initials(p.name)));
    g.append(el("text", { class: "doing", x: 0.55, y: 0.15 }, `${p.name.split(" ")[0]}: ${p.action}`));
    const own = p.lines.filter(([who]) => who === p.name);
    if (p.talking_with && own.length) {
      const said = own[own.length - 1][1];
      const shown = said.length > 60 ? `${said.slice(0, 57)}...` : said;
      const bubble = el("g", { class: "bubble", transform: "translate(0.4 -1.3)" });
      bubble.append(el("rect", { x: 0, y: -0.5, width: Math.max(2, shown.length * 0.21 + 0.3), height: 0.7, rx: 0.2 }));
      bubble.append(el("text", { x: 0.15, y: 0 }, shown));
      g.append(bubble);
    }
    g.addEventListener("click", () => choose(p.name));
    people.append(g);
  }
  $("time").textContent = frame.time;
  $("step-label").textContent = `step ${frame.step} of ${frame.latest}`;
  const timeline = $("timeline");
  timeline.max = frame.latest;
  timeline.value = frame.step;
  state.shown = frame.step;
  document.body.dataset.step = frame.step;
}

async function show(step) {
  const url = step === null ? `${api}/latest` : `${api}/steps/${step}`;
  const request = getJSON(url);
  state.loading = request;
  const frame = await request;
  if (state.loading === request) drawFrame(frame);  // a later request wins
  if (state.chosen) choose(state.chosen);
}

function list(title, items, render, id) {
  const section = html("div", null, { id });
  section.append(html("h2", title));
  const ul = html("ul");
  for (const item of items) ul.append(render(item));
  if (!items.length) ul.append(html("li", "(none yet)"));
  section.append(ul);
  return section;
}

async function choose(name) {
  state.chosen = name;
  for (const button of $("personas").children) button.classList.toggle("chosen", button.dataset.name === name);
  $("interviewee").value = name;
  const p = await getJSON(`${api}/personas/${encodeURIComponent(name)}?step=${state.shown}`);
  const panel = $("panel");
  panel.replaceChildren();
  panel.dataset.persona = p.name;
  panel.append(html("h2", `${p.name}, ${p.age}`));
  panel.append(html("p", `${p.innate}. ${p.currently}`));
  panel.append(html("p", `Now: ${p.action}${p.place ? ` (${p.place})` : ""}`));
  panel.append(list("Plan for the day", p.plan, (item) => html("li", item), "plan"));
  panel.append(list("Recent memories", p.memories, (m) => {
    const li = html("li", m.text);
    li.prepend(html("span", `${m.kind}, ${m.importance}: `, { class: "kind" }));
    return li;
  }, "memories"));
  panel.append(list("Reflections", p.reflections, (r) => html("li", `${r.text} (from ${r.evidence} memories)`), "reflections"));
  panel.append(list("Knows", p.relationships, (r) =>
    html("li", `${r.name}: in ${r.memories} memories${r.talked ? `, last talked ${r.talked.replace("T", " ")}` : ""}`), "knows"));
}

async function ask(event) {
  event.preventDefault();
  const persona = $("interviewee").value;
  const question = $("question").value.trim();
  if (!question) return;
  const answer = $("answer");
  answer.textContent = `Asking ${persona}...`;
  try {
    const body = await getJSON(`${api}/interview`, {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ persona, question }),
    });
    answer.textContent = `${body.persona}: ${body.answer}`;
  } catch (error) {
    answer.textContent = `The interview failed: ${error.message}`;
  }
}

async function follow() {
  if ($("live").checked) {
    try {
      const latest = await getJSON(`${api}/latest`);
      if (latest.step !== state.shown && $("live").checked) drawFrame(latest);
    } catch (error) {
      $("time").textContent = `cannot reach the server (${error.message})`;
    }
  }
  setTimeout(follow, 1000);
}

async function start() {
  const map = await getJSON(api);
  state.map = map;
  document.title = `${map.sim}: ${map.world}`;
  $("title").textContent = `${map.sim}: ${map.world}`;
  drawMap(map);
  for (const name of map.personas) {
    const button = html("button", name, { "data-name": name, type: "button" });
    button.addEventListener("click", () => choose(name));
    $("personas").append(button);
    $("interviewee").append(html("option", name, { value: name }));
  }
  $("timeline").addEventListener("input", (event) => {
    $("live").checked = false;  // scrubbing the past stops following the present
    show(Number(event.target.value));
  });
  $("live").addEventListener("change", () => { if ($("live").checked) show(null); });
  $("interview").addEventListener("submit", ask);
  await show(null);
  document.body.dataset.ready = "yes";
  follow();
}

start().catch((error) => { $("time").textContent = `cannot load ${simName}: ${error.message}`; });
